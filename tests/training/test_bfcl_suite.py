"""The bfcl-multi-turn suite: BFCL v4's multi-turn entries played live in BFCL's classes, scored by BFCL's checker.

A scripted OpenAI-compatible endpoint on loopback plays BFCL's ground truth (as ``tool_calls``) and scores 100%;
a policy that never calls a tool scores what BFCL's checker gives it; BFCL's step limit, missing-function turns and
a call outside the entry's functions behave as the suite says."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.teacher_endpoint import send_json, serve_loopback
from training.episodes import play
from training.policies import EndpointPolicy, Reply
from training.suites.bfcl import (
    CATEGORIES,
    BfclEpisode,
    bfcl_version,
    import_check,
    load_entries,
    normalize_categories,
    openai_tools,
    run_bfcl,
    score_entry,
    summarize_bfcl,
)

CALLS_PER_STEP = 2  # the ground-truth endpoint answers a turn's calls two at a time, one response per step


# ------------------------------------------------------------------------------------------------ the endpoint


def _call_of(text: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A ground-truth call string (``cd(folder='x')``, ``sort('f')``) as an OpenAI function call: positional
    arguments get the names of the offered tool's parameters, in order (BFCL's docs list them as the methods do).
    (One ground-truth call is to a function not offered yet, multi_turn_miss_func_49's ``tail`` at turn 1: its
    arguments are named, and it is made as a model may make it: BFCL runs any method of the entry's classes.)"""
    node = ast.parse(text, mode="eval").body
    name = node.func.id
    args = {}
    if node.args:
        params = next(list(t["function"]["parameters"]["properties"]) for t in tools if t["function"]["name"] == name)
        args = {params[i]: ast.literal_eval(a) for i, a in enumerate(node.args)}
    args.update({k.arg: ast.literal_eval(k.value) for k in node.keywords})
    return {"name": name, "arguments": args}


class GroundTruthEndpoint:
    """``/v1/chat/completions`` on 127.0.0.1 answering with BFCL's ground truth: the request's model names the
    category, its user messages the entry (those whose turns open so) and the turn, the assistant messages since the
    last user message the step; a turn's calls go out ``CALLS_PER_STEP`` at a time, then a plain message ends the
    turn. Entries that open alike must agree on the turn's calls (or the request gets a 400)."""

    def __init__(self, entries: list[dict[str, Any]]):
        prompt = import_check().add_function_prompt  # a holdout turn's user message, as BFCL words it
        self.script = [
            (e["id"].rsplit("_", 1)[0], [t[0]["content"] if t else prompt for t in e["question"]], e["ground_truth"])
            for e in entries
        ]
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                try:
                    message = endpoint.answer(body)
                except Exception as exc:  # a request the script cannot answer: the test fails on the 400
                    return self._send(400, {"error": {"message": f"{type(exc).__name__}: {exc}"}})
                self._send(
                    200,
                    {
                        "id": "chatcmpl-gt",
                        "object": "chat.completion",
                        "created": 1700000000,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                                "message": message,
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )

            def _send(self, code, obj):
                send_json(self, code, obj)

        self.httpd, self.url = serve_loopback(Handler)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        category = body["model"].removeprefix("ground-truth/")
        users = [i for i, m in enumerate(messages) if m["role"] == "user"]
        said = [messages[i]["content"] for i in users]
        turn = len(users) - 1
        step = sum(m["role"] == "assistant" for m in messages[users[-1] :])
        options = {
            json.dumps(gt[turn]) for cat, turns, gt in self.script if cat == category and turns[: turn + 1] == said
        }
        if len(options) != 1:
            raise LookupError(f"{len(options)} scripted answers to turn {turn} of {said[0][:60]!r}")
        calls = json.loads(options.pop())
        chunk = calls[step * CALLS_PER_STEP : (step + 1) * CALLS_PER_STEP]
        if not chunk:
            return {"role": "assistant", "content": "Done."}
        tool_calls = []
        for i, text in enumerate(chunk):
            call = _call_of(text, body.get("tools") or [])
            tool_calls.append(
                {
                    "id": f"call_{turn}_{step}_{i}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                }
            )
        return {"role": "assistant", "content": None, "tool_calls": tool_calls}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# ------------------------------------------------------------------------------------------------ in-process policies


class Scripted:
    """A policy answering every conversation with ``reply(messages, tools)``."""

    name = "scripted"

    def __init__(self, reply):
        self.reply = reply

    def respond(self, conversations: Sequence[tuple[list, list]]) -> list[Reply]:
        return [self.reply(m, t) for m, t in conversations]

    def describe(self) -> dict[str, Any]:
        return {"kind": "scripted", "name": self.name}


def _live_instances() -> list[str]:
    return [k for k in vars(import_check().utils) if k.startswith("prove_")]


# ------------------------------------------------------------------------------------------------ tests


def test_bfcls_data_classes_and_checker_import_with_our_dependencies():
    bfcl = import_check()
    assert bfcl_version() == "2026.3.23"
    assert bfcl.max_steps == 20
    entries = load_entries()
    assert {c: sum(e["id"].rsplit("_", 1)[0] == c for e in entries) for c in CATEGORIES} == dict.fromkeys(
        CATEGORIES, 200
    )
    entry = next(e for e in entries if {"GorillaFileSystem", "TwitterAPI"} <= set(e["involved_classes"]))
    ep = BfclEpisode.from_entry(entry)
    try:  # the entry's classes are built from its initial state and their methods run
        assert {"cd", "ls", "pwd", "post_tweet"} <= ep.methods
        assert "current_working_directory" in ep.execute([{"name": "pwd", "arguments": {}}])[0]
        assert score_entry(entry, ep)["error_type"] == "multi_turn:force_terminated"  # one turn of several played
        assert callable(bfcl.checker)
    finally:
        ep.close()
    assert not _live_instances()


STUB_RUN = r"""
import json, sys, types
class Any_:
    def __init__(self, *a, **k): pass
    def __call__(self, *a, **k): return Any_()
    def __getattr__(self, name): return Any_()
for name in ("tree_sitter", "tree_sitter_java", "tree_sitter_javascript", "tenacity"):
    mod = types.ModuleType(name)
    mod.__getattr__ = lambda attr: Any_()
    sys.modules[name] = mod
from bfcl_eval.constants.enums import ModelStyle
from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
from bfcl_eval.model_handler.utils import convert_to_tool
print(json.dumps(convert_to_tool(json.load(sys.stdin), GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)))
"""


def test_tools_are_what_bfcls_own_converter_makes():
    # BFCL's convert_to_tool lives in a module that imports tree-sitter and tenacity (not installed): in a child
    # process those are stubbed, only to run BFCL's converter on every multi-turn function doc and compare
    docs = {}
    for e in load_entries():
        for f in e["function"] + [f for fs in e.get("missed_function", {}).values() for f in fs]:
            docs.setdefault(json.dumps(f, sort_keys=True), f)
    r = subprocess.run(
        [sys.executable, "-c", STUB_RUN], input=json.dumps(list(docs.values())), capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr[-3000:]
    theirs = json.loads(r.stdout)
    assert len(theirs) == len(docs) > 100
    assert openai_tools(list(docs.values())) == theirs


@pytest.mark.parametrize("category", CATEGORIES)
def test_an_endpoint_playing_the_ground_truth_scores_every_entry(category):
    entries = load_entries([category], limit=3, seed=0)
    endpoint = GroundTruthEndpoint(entries)
    try:
        policy = EndpointPolicy(endpoint.url, f"ground-truth/{category}", concurrency=3, retries=1)
        records = run_bfcl(policy, [category], limit=3, seed=0)
    finally:
        endpoint.close()
    assert [r["item_id"] for r in records] == [e["id"] for e in entries]
    assert all(r["valid"] for r in records), [(r["item_id"], r["error_type"], r["error_message"]) for r in records]
    for r, e in zip(records, entries):
        assert r["n_turns"] == len(e["ground_truth"])
        assert r["n_calls"] == sum(map(len, e["ground_truth"]))
        assert [c for turn in json.loads(r["calls"]) for step in turn for c in step]
        json.dumps(r)  # JSON-safe
    assert summarize_bfcl(records)["by_category"][category] == {"accuracy": 1.0, "correct": 3, "n": 3}
    assert policy.usage.failures == 0
    assert not _live_instances()  # the instances of inference and of the checker are gone


def test_a_policy_that_never_calls_a_tool_fails_every_entry_with_a_call_to_make():
    # BFCL's checker fails an entry at the first turn whose ground truth has calls when the model made none
    # (multi_turn:empty_turn_model_response); only an entry whose every turn needs no call would pass: BFCL v4 has
    # none, so such a policy scores 0 of 800, 0.0 in every category and overall
    entries = load_entries()
    expected = sum(all(not t for t in e["ground_truth"]) for e in entries)
    assert expected == 0
    records = run_bfcl(Scripted(lambda m, t: Reply("I cannot help with that.")), limit=None)
    assert len(records) == 800
    assert sum(r["valid"] for r in records) == expected
    assert {r["error_type"] for r in records} == {"multi_turn:empty_turn_model_response"}
    summary = summarize_bfcl(records)
    assert summary["overall"] == 0.0 and summary["complete"]
    assert all(v["accuracy"] == 0.0 and v["n"] == 200 for v in summary["by_category"].values())
    # every turn was played (the policy answered each with text), none had a call
    assert all(r["n_turns"] == len(e["question"]) and r["n_calls"] == 0 for r, e in zip(records, entries))


def test_an_unknown_category_is_refused_naming_the_valid_ones():
    with pytest.raises(ValueError, match=r"'multi_turn_composite'.*base, miss_func, miss_param, long_context"):
        load_entries(["base", "multi_turn_composite"])
    with pytest.raises(ValueError, match="'nonsense'"):
        normalize_categories(["nonsense"])
    assert normalize_categories(["base", "multi_turn_long_context"]) == ["multi_turn_base", "multi_turn_long_context"]
    assert normalize_categories(None) == list(CATEGORIES)


def test_a_sample_is_the_same_every_time_and_differs_by_seed():
    a = [e["id"] for e in load_entries(["miss_param", "base"], limit=5, seed=7)]
    assert a == [e["id"] for e in load_entries(["miss_param", "base"], limit=5, seed=7)]
    assert a != [e["id"] for e in load_entries(["miss_param", "base"], limit=5, seed=8)]
    assert len(a) == 10 and a[0].startswith("multi_turn_miss_param_")


def test_a_missing_function_turn_offers_the_held_out_functions_with_bfcls_message():
    entry = load_entries(["miss_func"], limit=1, seed=0)[0]
    (turn, missed) = next(iter(entry["missed_function"].items()))
    ep = BfclEpisode.from_entry(entry)
    try:
        names = [{t["function"]["name"] for t in ep.tools_at(i)} for i in range(len(entry["question"]))]
        for f in missed:
            assert f["name"] not in names[int(turn) - 1] and f["name"] in names[int(turn)]
        assert ep.user_turns[int(turn)] == import_check().add_function_prompt
    finally:
        ep.close()


def test_a_call_outside_the_entrys_functions_runs_nothing(tmp_path):
    target = tmp_path / "should-not-exist"
    entry = next(e for e in load_entries(["base"]) if "GorillaFileSystem" in e["involved_classes"])
    ep = BfclEpisode.from_entry(entry)
    try:
        out = ep.execute(
            [
                {"name": "open", "arguments": {"file": str(target), "mode": "w"}},
                {"name": "ls", "arguments": {"a=__import__('os').getcwd(),b": 1}},
                {"name": "pwd", "arguments": {}},
            ]
        )
        assert out[0] == "Error during execution: name 'open' is not defined"
        assert "invalid syntax" in out[1]
        assert "current_working_directory" in out[2]
        assert ep.checker_input() == [[["_bfcl_unavailable_function_()"] * 2 + ["pwd()"]]]
    finally:
        ep.close()
    assert not target.exists()


def test_a_turn_past_bfcls_step_limit_force_quits_the_entry():
    entry = next(e for e in load_entries(["base"]) if "GorillaFileSystem" in e["involved_classes"])
    ep = BfclEpisode.from_entry(entry)
    forever = Scripted(lambda m, t: Reply("", [{"name": "pwd", "arguments": {}}]))
    play(forever, [ep], max_steps_per_turn=import_check().max_steps + 1)
    # BFCL's 20 steps and the one that went over, then the entry ends in its first turn
    assert ep.force_quit and len(ep.calls_per_turn) == 1 and len(ep.calls_per_turn[0]) == 21
    verdict = score_entry(entry, ep)
    assert verdict["error_type"] == "multi_turn:force_terminated" and not verdict["valid"]
    assert not _live_instances()


def test_a_step_that_does_not_decode_ends_the_turn():
    entry = load_entries(["base"], limit=1, seed=0)[0]
    ep = BfclEpisode.from_entry(entry)
    bad = Scripted(lambda m, t: Reply("", [{"name": "", "arguments": None, "malformed": True}]))
    play(bad, [ep], max_steps_per_turn=import_check().max_steps + 1)
    # BFCL: nothing runs and the next turn starts; each turn saw one step and no call reached the checker
    assert len(ep.replies) == len(entry["question"]) and all(len(r) == 1 for r in ep.replies)
    assert ep.checker_input() == [[] for _ in entry["question"]]
    assert score_entry(entry, ep)["error_type"] == "multi_turn:empty_turn_model_response"
