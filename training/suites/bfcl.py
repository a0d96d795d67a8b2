"""BFCL v4's multi-turn categories, played live in BFCL's own environment classes and scored by BFCL's own checker.

Everything BFCL-specific comes from the ``bfcl-eval`` package (installed without its requirements:
``pip install --no-deps bfcl-eval==2026.3.23``; they pin an old numpy and networkx and pull many model SDKs, and the
parts used here need none of them):

* the entries and their ground truth: ``bfcl_eval.utils.load_dataset_entry`` (which also fills in each entry's
  function docs from its ``involved_classes``, holds the ``missed_function`` docs out, and adds BFCL's "Python 3
  syntax" hint to each description) and ``load_ground_truth_entry``;
* the environments: ``execute_multi_turn_func_call`` (BFCL's classes, built from the entry's ``initial_config``,
  with the ``long_context`` flag BFCL passes for the ``long_context`` category);
* the verdict: ``multi_turn_checker`` (each turn's state and execution results against the ground truth's);
* BFCL's constants: the step limit (``MAXIMUM_STEP_LIMIT``), the user message of a missing-function turn, the
  type mapping of the function docs.

Inference follows ``BaseHandler.inference_multi_turn_FC`` with an OpenAI-style function-calling model: no system
prompt, the first turn's messages, the tools in OpenAI format; each step's calls become BFCL's call strings
``name(k=repr(v),...)`` and run in the entry's instances; a step without calls ends the turn; a step whose calls
cannot be decoded (arguments that are not a JSON object) runs nothing and ends the turn; more than
``MAXIMUM_STEP_LIMIT`` steps with calls in one turn force-quits the entry (its later turns are never played, and
the checker fails it as force-terminated). At a turn in the entry's ``missed_function`` the held-out docs join the
tools and the user message is BFCL's ``DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC``.

Scoring follows ``eval_runner._evaluate_single_multi_turn_entry``: a run with fewer turns than the ground truth
fails as ``multi_turn:force_terminated``; steps that decoded to no call are dropped; the rest goes through
``multi_turn_checker``. BFCL 2026.3.23 imports ``multi_turn_irrelevance_checker`` but never applies it (turns whose
ground truth is empty are only executed, so later state checks stay right), so neither does this suite.

Written here because BFCL's own helper does not import without its heavy requirements (noted where it is done):
the conversion of function docs to OpenAI tools (``model_handler.utils.convert_to_tool``, whose module imports
tree-sitter and tenacity) and the mean over categories (``eval_runner_helper``, which imports anthropic).

One deliberate difference: BFCL ``eval``s whatever name the model calls, so a model could call a builtin
(``open(file=..., mode='w')``). Here a call runs only when its name is a public method of the entry's instances
(exactly the names BFCL maps to them) and its argument names are identifiers; any other call runs nothing, its
tool message is an error worded as BFCL's eval words it, and the checker sees it as a call to an undefined name.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import keyword
import os
import random
import re
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from training.episodes import Episode, play
from training.policies import Policy

SUITE = "bfcl-multi-turn"
BFCL_PIN = "bfcl-eval==2026.3.23"
CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
# what the checker gets instead of a call that is not run (an undefined name, as BFCL's eval would find)
UNAVAILABLE_CALL = "_bfcl_unavailable_function_()"
MESSAGE_CHARS = 1000  # the checker's error details kept in error_message


# ------------------------------------------------------------------------------------------------ the package


@functools.cache
def import_check() -> SimpleNamespace:
    """BFCL's functions and constants this suite uses (``ImportError`` saying how to install the package if absent).

    ``bfcl_eval`` makes ``result/``, ``score/`` and ``.file_locks/`` folders under ``BFCL_PROJECT_ROOT`` when it is
    imported (by default beside the installed package, in site-packages): unless set, it is pointed at a folder in
    the temporary directory."""
    os.environ.setdefault("BFCL_PROJECT_ROOT", os.path.join(tempfile.gettempdir(), "prove-bfcl-eval"))
    try:
        from bfcl_eval.constants.default_prompts import (
            DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC,
            MAXIMUM_STEP_LIMIT,
        )
        from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
        from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
        from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
        from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry
    except ImportError as exc:
        raise ImportError(
            f"the {SUITE} suite needs BFCL v4's package, installed without its requirements: "
            f"{sys.executable} -m pip install --no-deps {BFCL_PIN} (or scripts/setup-env.sh) [{exc}]"
        ) from exc
    return SimpleNamespace(
        add_function_prompt=DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC,
        max_steps=MAXIMUM_STEP_LIMIT,
        type_mapping=GORILLA_TO_OPENAPI,
        utils=multi_turn_utils,
        execute=multi_turn_utils.execute_multi_turn_func_call,
        is_empty=multi_turn_utils.is_empty_execute_response,
        checker=multi_turn_checker,
        load_entries=load_dataset_entry,
        load_ground_truth=load_ground_truth_entry,
    )


def bfcl_version() -> str:
    """The installed ``bfcl-eval``'s version."""
    from importlib.metadata import version

    import_check()
    return version("bfcl-eval")


def normalize_categories(categories: list[str] | None = None) -> list[str]:
    """BFCL's full category names (``base`` or ``multi_turn_base``, ...); none named: all four.

    ``ValueError`` naming an unknown category and the valid ones; ``ImportError`` if the package is missing."""
    out = []
    for c in categories or CATEGORIES:
        full = c if c.startswith("multi_turn_") else f"multi_turn_{c}"
        if full not in CATEGORIES:
            valid = ", ".join(x.removeprefix("multi_turn_") for x in CATEGORIES)
            raise ValueError(
                f"unknown BFCL multi-turn category {c!r}; the categories are {valid} (or with the multi_turn_ prefix)"
            )
        if full not in out:
            out.append(full)
    import_check()
    return out


def category_of(entry_id: str) -> str:
    """The category of an entry id, as BFCL takes it (``multi_turn_base_12`` -> ``multi_turn_base``)."""
    return entry_id.rsplit("_", 1)[0]


@functools.cache
def _category_entries(category: str) -> tuple[dict[str, Any], ...]:
    bfcl = import_check()
    entries = bfcl.load_entries(category)
    truth = {g["id"]: g["ground_truth"] for g in bfcl.load_ground_truth(category)}
    return tuple({**e, "ground_truth": truth[e["id"]]} for e in entries)


def load_entries(categories: list[str] | None = None, limit: int | None = None, seed: int = 0) -> list[dict]:
    """BFCL's entries of ``categories`` (all four if none), each with its ``ground_truth``: per category all of
    them, or ``limit`` drawn with ``seed`` (the same every time), in BFCL's id order. Each entry is a fresh copy."""
    out = []
    for cat in normalize_categories(categories):
        entries = _category_entries(cat)
        idx = range(len(entries))
        if limit is not None and limit < len(entries):
            idx = sorted(random.Random(f"{seed}:{cat}").sample(idx, limit))
        out += [copy.deepcopy(entries[i]) for i in idx]
    return out


# ------------------------------------------------------------------------------------------------ tools


def _cast_to_openai_type(properties: dict[str, Any], mapping: dict[str, str]) -> dict[str, Any]:
    # BFCL's model_handler.utils._cast_to_openai_type (with mapping GORILLA_TO_OPENAPI), redone here: its module
    # imports tree-sitter and tenacity, which bfcl-eval's requirements would bring and this project does not have
    for value in properties.values():
        if "type" not in value:
            value["type"] = "string"
        else:
            if value["type"] == "float":
                value["format"] = "float"
                value["description"] += " This is a float type value."
            value["type"] = mapping.get(value["type"], "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _cast_to_openai_type(value["properties"], mapping)
            elif "items" in value:
                items = value["items"]
                items["type"] = mapping[items["type"]]
                if items["type"] == "array" and "items" in items:
                    items["items"]["type"] = mapping[items["items"]["type"]]
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _cast_to_openai_type(items["properties"], mapping)
    return properties


def openai_tools(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """BFCL function docs as OpenAI chat-completions tools, as BFCL's ``convert_to_tool(functions,
    GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)`` makes them (redone here: see ``_cast_to_openai_type``)."""
    mapping = import_check().type_mapping
    tools = []
    for item in copy.deepcopy(functions):
        item["name"] = item["name"].replace(".", "_")  # OpenAI's names allow no "."
        item["parameters"]["type"] = "object"
        item["parameters"]["properties"] = _cast_to_openai_type(item["parameters"]["properties"], mapping)
        tools.append({"type": "function", "function": item})
    return tools


# ------------------------------------------------------------------------------------------------ episodes


def _plain(v: Any) -> bool:
    """A JSON value (what a decoded call's arguments are), so ``repr`` of it is a Python literal."""
    if v is None or isinstance(v, (str, bool, int, float)):
        return True
    if isinstance(v, list):
        return all(map(_plain, v))
    if isinstance(v, dict):
        return all(isinstance(k, str) and _plain(x) for k, x in v.items())
    return False


def _identifier(name: Any) -> bool:
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def call_string(call: dict[str, Any]) -> str:
    """BFCL's call string of a decoded call (``model_handler.utils.convert_to_function_call``'s format)."""
    args = call.get("arguments") or {}
    return f"{call.get('name') or ''}({','.join(f'{k}={v!r}' for k, v in args.items())})"


@dataclass(eq=False)
class BfclEpisode(Episode):
    """One BFCL entry played live in its own instances of BFCL's classes (named by ``model_name``, unique per
    episode; :meth:`close` drops them from BFCL's module globals, where ``execute_multi_turn_func_call`` keeps them).

    ``decoded[turn]`` holds each step's call strings (steps whose calls decoded), what BFCL's checker is given."""

    entry: dict[str, Any] = field(default_factory=dict)
    model_name: str = ""
    turn_tools: list[list[dict[str, Any]]] = field(default_factory=list)
    decoded: list[list[list[str]]] = field(default_factory=lambda: [[]])
    force_quit: bool = False
    methods: frozenset[str] = frozenset()
    not_run: set[str] = field(default_factory=set)  # call strings that were not run (see the module docstring)
    _call_steps: int = 0
    _call_steps_turn: int = 0

    @classmethod
    def from_entry(cls, entry: dict[str, Any], model_name: str | None = None) -> BfclEpisode:
        bfcl = import_check()
        holdout = entry.get("missed_function", {})
        turns: list[list[dict[str, Any]]] = []
        for i, msgs in enumerate(entry["question"]):
            if str(i) in holdout:  # BFCL: a holdout turn has no message of its own; this one announces the functions
                if msgs:
                    raise ValueError(f"{entry['id']}: turn {i} holds out functions and has a user message")
                msgs = [{"role": "user", "content": bfcl.add_function_prompt}]
            if i and (len(msgs) != 1 or msgs[0].get("role") != "user"):
                raise ValueError(
                    f"{entry['id']}: turn {i} holds {len(msgs)} messages; the episode driver adds one user message "
                    "per later turn"
                )
            turns.append([dict(m) for m in msgs])
        functions = list(entry["function"])
        turn_tools = []
        for i in range(len(turns)):
            if str(i) in holdout or not turn_tools:
                functions += holdout.get(str(i), [])
                turn_tools.append(openai_tools(functions))
            else:
                turn_tools.append(turn_tools[-1])
        ep = cls(
            item_id=entry["id"],
            messages=turns[0],
            user_turns=[str(t[-1].get("content") or "") for t in turns],
            tools=turn_tools[0],
            entry=entry,
            model_name=model_name or f"prove_{uuid.uuid4().hex[:16]}",
            turn_tools=turn_tools,
        )
        # as BFCL's inference does first: the instances, built from the entry's initial state
        _, instances = ep._run([])
        ep.methods = frozenset(
            name
            for inst in instances.values()
            for name, _ in inspect.getmembers(inst, predicate=inspect.ismethod)
            if not name.startswith("_")
        )
        return ep

    @property
    def category(self) -> str:
        return category_of(self.item_id)

    def _run(self, call_strings: list[str], eval_run: bool = False) -> tuple[list[str], dict[str, Any]]:
        cat = self.category
        return import_check().execute(
            call_strings,
            self.entry.get("initial_config", {}),
            self.entry["involved_classes"],
            self.model_name,
            self.item_id,
            long_context=("long_context" in cat or "composite" in cat),
            is_evaL_run=eval_run,
        )

    def tools_at(self, turn: int) -> list[dict[str, Any]]:
        return self.turn_tools[min(turn, len(self.turn_tools) - 1)]

    def _runnable(self, call: dict[str, Any]) -> bool:
        args = call.get("arguments")
        return (
            call.get("name") in self.methods
            and isinstance(args, dict)
            and all(_identifier(k) for k in args)
            and _plain(args)
        )

    def execute(self, calls: list[dict[str, Any]]) -> list[str]:
        while len(self.decoded) <= self.turn:
            self.decoded.append([])
        if any(c.get("malformed") or not isinstance(c.get("arguments"), dict) for c in calls):
            # BFCL: the step does not decode, nothing runs, the turn ends ("Proceed to next turn")
            self.calls_per_turn[-1] += [{**c, "call": None, "result": None} for c in calls]
            self.end_turn_now = True  # play() ends the turn after this step
            msg = "Error: the function calls could not be decoded (arguments must be a JSON object); nothing was run."
            return [msg for _ in calls]
        strings = [call_string(c) for c in calls]
        runnable = [self._runnable(c) for c in calls]
        results, _ = self._run([s for s, ok in zip(strings, runnable) if ok])
        it = iter(results)
        contents = []
        for c, s, ok in zip(calls, strings, runnable):
            if ok:
                content = next(it)
            else:
                self.not_run.add(s)
                name = c.get("name")
                content = f"Error during execution: name '{name}' is not defined"
                if _identifier(name) and name in self.methods:
                    content = "Error during execution: invalid syntax (argument names must be identifiers)"
            self.calls_per_turn[-1].append({"name": c.get("name"), "arguments": c.get("arguments"), "call": s})
            self.calls_per_turn[-1][-1]["result"] = content[:MESSAGE_CHARS]
            contents.append(content)
        self.decoded[self.turn].append(strings)
        if self._call_steps_turn != self.turn:
            self._call_steps, self._call_steps_turn = 0, self.turn
        self._call_steps += 1
        if self._call_steps > import_check().max_steps:  # BFCL: force quit, the entry's later turns are not played
            self.force_quit = True
            self.done = True
        return contents

    def decoded_turns(self) -> list[list[list[str]]]:
        """Per played turn, each step's call strings (the steps whose calls decoded)."""
        n = len(self.calls_per_turn)
        return (self.decoded + [[] for _ in range(n)])[:n]

    def checker_input(self) -> list[list[list[str]]]:
        """:meth:`decoded_turns` as BFCL's checker takes them (a call that was not run: an undefined name)."""
        return [
            [[UNAVAILABLE_CALL if s in self.not_run else s for s in step] for step in t if step]
            for t in self.decoded_turns()
        ]

    def close(self) -> None:
        forget_instances(self.model_name)


def forget_instances(model_name: str) -> int:
    """Drop the instances BFCL's ``execute_multi_turn_func_call`` keeps in its module globals for ``model_name``
    (those of inference and of the checker's runs); returns how many."""
    g = vars(import_check().utils)
    prefix = re.sub(r"[-./:]", "_", model_name) + "_"
    keys = [k for k in g if k.startswith(prefix) and k.endswith("_instance")]
    for k in keys:
        del g[k]
    return len(keys)


# ------------------------------------------------------------------------------------------------ scoring


def _brief(result: dict[str, Any]) -> str:
    """The checker's error message with the telling part of its details (trimmed, JSON-safe)."""
    msg = str(result.get("error_message", ""))
    details = result.get("details") or {}
    keep = {k: details[k] for k in ("differences", "missing_items") if k in details}
    if keep:
        msg += " " + json.dumps(keep, ensure_ascii=False, default=str)
    return msg[:MESSAGE_CHARS]


def score_entry(entry: dict[str, Any], episode: BfclEpisode) -> dict[str, Any]:
    """BFCL's verdict on a played entry: ``{"valid", "error_type", "error_message"}`` (``None`` when valid)."""
    bfcl = import_check()
    truth = entry["ground_truth"]
    if episode.error:  # the environment broke (BFCL has no such case: its calls cannot raise)
        return {"valid": False, "error_type": "multi_turn:inference_error", "error_message": episode.error}
    model = episode.checker_input()
    if len(model) != len(truth):  # as BFCL's eval runner: a force-quit entry is failed without the checker
        return {
            "valid": False,
            "error_type": "multi_turn:force_terminated",
            "error_message": "Model was force-terminated during inference phase. The length of the model result "
            f"turns ({len(model)}) does not match the length of the ground truth turns ({len(truth)}).",
        }
    try:
        result = bfcl.checker(model, truth, entry, category_of(entry["id"]), episode.model_name)
    except Exception as exc:  # BFCL would crash the whole evaluation: here the entry fails, saying why
        message = f"{type(exc).__name__}: {exc}"[:MESSAGE_CHARS]
        return {"valid": False, "error_type": "multi_turn:checker_error", "error_message": message}
    finally:
        forget_instances(episode.model_name)
    if result.get("valid"):
        return {"valid": True, "error_type": None, "error_message": None}
    return {"valid": False, "error_type": str(result.get("error_type")), "error_message": _brief(result)}


def run_bfcl(
    policy: Policy,
    categories: list[str] | None = None,
    limit: int | None = None,
    seed: int = 0,
    on_step: Any = None,
) -> list[dict[str, Any]]:
    """Play BFCL's entries (:func:`load_entries`) with ``policy`` and score each; one record per entry."""
    entries = load_entries(categories, limit, seed)
    episodes = [BfclEpisode.from_entry(e) for e in entries]
    play(policy, episodes, max_steps_per_turn=import_check().max_steps + 1, on_step=on_step)
    records = []
    for e, ep in zip(entries, episodes):
        verdict = score_entry(e, ep)
        records.append(
            {
                "suite": SUITE,
                "category": category_of(e["id"]),
                "item_id": e["id"],
                **verdict,
                "messages": json.dumps(ep.messages, ensure_ascii=False, default=str),
                "calls": json.dumps(ep.decoded_turns(), ensure_ascii=False),
                "n_turns": len(ep.calls_per_turn),
                "n_calls": sum(len(t) for t in ep.calls_per_turn),
            }
        )
    return records


def summarize_bfcl(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy per category and overall, as BFCL reports multi-turn: ``overall`` is the unweighted mean of the
    categories' accuracies (``eval_runner_helper.calculate_unweighted_accuracy``; redone here, that module imports
    anthropic), not the pooled share of entries (given as ``pooled``). BFCL counts a category that was not run as 0
    and shows its overall as N/A; here ``overall`` is over the categories run, and ``complete`` says whether all four
    were (only then is it BFCL's overall number)."""
    by: dict[str, dict[str, Any]] = {}
    for cat in [c for c in CATEGORIES if any(r["category"] == c for r in records)]:
        rows = [r for r in records if r["category"] == cat]
        correct = sum(bool(r["valid"]) for r in rows)
        by[cat] = {"accuracy": correct / len(rows), "correct": correct, "n": len(rows)}
    n = sum(v["n"] for v in by.values())
    return {
        "overall": sum(v["accuracy"] for v in by.values()) / len(by) if by else 0.0,
        "by_category": by,
        "pooled": sum(v["correct"] for v in by.values()) / n if n else 0.0,
        "n": n,
        "complete": len(by) == len(CATEGORIES),
    }
