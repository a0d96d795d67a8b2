"""The corpus linter: general rules about language and grounding, measured on any corpus version.

Per example (a defect names the example):

* ``description_paste``: a user turn shares a run of ``lint.description_ngram`` words with the
  description of an offered tool (the request repeats the tool's documentation);
* ``raw_json`` / ``parameter_name``: a user turn holds JSON syntax, or a snake_case parameter or
  tool name of the offered tools;
* ``placeholder``: a user or assistant turn holds ``None``, ``null``, ``undefined``, ``NaN`` or a
  template slot (``{...}``, ``{name}``, ``<value>``);
* ``repeated_sentence``: a message says the same sentence twice;
* ``repeated_phrase``: a user turn says a word or a phrase of up to three words twice back to back
  (``for it for it``, ``from before before``), quoted text aside;
* ``non_integer_count`` / ``plural_mismatch``: a decimal number counts things (``68.02 items``), or ``1``
  goes with a plural noun (neither in words quoted from a tool result: ``Total: 0 files, 1 directories``);
* ``unnamed_write``: a writing call acts on an id that no earlier user turn named and no earlier
  result singled out (the only value of that field in the result);
* ``invented_write_value``: a required value of a writing call that no earlier user turn or tool
  result holds;
* ``clarification_mismatch``: in a clarification example, the assistant's question does not name
  the missing parameter's meaning, or the user's answer does not supply its value (a SQL statement is
  supplied by saying what it asks for: "create a notes table with title and body columns");
* ``duplicate_no_call_request``: two irrelevance or abstention examples ask the same thing;
* ``filler_value``: a call's argument is a known filler (``12345``, ``foo``, ``placeholder``, ...) that no user
  turn or tool result of the example holds.
* ``undo_then_redo``: a reference call succeeds on what an earlier call of the same conversation closed,
  deleted or took off (remove a saved place, then save it again; :mod:`pipeline.discovery.goals`);
* ``do_then_undo``: a reference call closes what an earlier call of the same conversation made or linked
  (place a bid, then retract it; add to the cart, then remove it);
* ``acts_on_closed``: a reference write fails on what the conversation itself closed (close a listing, then
  bid on it): a deliberate error case, a defect only past the share ``chains.closed_entity_rate`` of the
  examples with tool calls (the first ones by id are allowed).

Over the corpus (a defect when under the threshold): ``distinct_frames``, the share of distinct
request frames (first user turns with values masked and the offered tools' words folded into
slots: the phrasing around the task) among examples with tool calls, and
``unique_openings``, the share of user turns in those examples whose first four words occur
nowhere else in the corpus. Thresholds: :class:`pipeline.core.config.LintConfig`.

``repeated_filler`` (over the corpus): the same value in the wrong first attempts (``weight`` 0, or failed) of
``lint.filler_repeats`` examples or more, where it comes from no user turn or tool result of its example and is
no slip or synonym of the corrected call's value (:func:`pipeline.synthesis.mistakes.explains`): a constant the
generator puts in, which the corpus would teach. Each such value counts in ``metrics.unexplained_attempt_values``.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.core.config import BuildConfig, ChainConfig, LintConfig, QueryConfig
from pipeline.core.records import TOOL_KINDS
from pipeline.core.speedups import in_a_child
from pipeline.corpus.columns import json_value, messages_of, reference_of, tool_items, tools_text
from pipeline.corpus.store import read_examples
from pipeline.discovery.goals import conflicts
from pipeline.language.lexicon import intent_of, is_plural, words
from pipeline.language.phrasing import (
    ISO_DATE,
    ISO_DATETIME,
    JSONISH,
    PLACEHOLDER,
    QUOTED,
    SENTENCE,
    SNAKE,
    WORD,
    description_grams,
    mentions,
    ngrams,
    stutter,
)
from pipeline.language.sqltext import say
from pipeline.synthesis.mistakes import explains

DECIMAL_COUNT = re.compile(r"\b\d+\.\d+ ([a-z]+)\b")
ONE_OF = re.compile(r"(?<![\d.,])\b1 ([a-z]+)\b")
MASK = [
    (re.compile(r'"[^"]*"'), "<text>"),
    (re.compile(r"\b[A-Z]{2,6}-\d{2,6}\b"), "<id>"),
    (re.compile(r"\S+@\S+"), "<email>"),
    (re.compile(r"(?<!\w)/[\w./-]+"), "<path>"),
    (re.compile(r"\d[\d.,:]*"), "<n>"),
    (re.compile(r"\([^)]*\)"), ""),
]
UNITS = {
    "hours",
    "minutes",
    "days",
    "seconds",
    "km",
    "kg",
    "years",
    "weeks",
    "months",
    "points",
    "stars",
    "percent",
    "nights",
}
DEFECTS = (
    "description_paste",
    "raw_json",
    "parameter_name",
    "placeholder",
    "repeated_sentence",
    "repeated_phrase",
    "non_integer_count",
    "plural_mismatch",
    "unnamed_write",
    "invented_write_value",
    "clarification_mismatch",
    "duplicate_no_call_request",
    "filler_value",
    "undo_then_redo",
    "do_then_undo",
    "acts_on_closed",
    "distinct_frames",
    "unique_openings",
    "repeated_filler",
)
# argument values a generator fills in when it has nothing real (a constant, a stand-in word)
FILLERS = frozenset(
    {
        "12345",
        "123456",
        "1234567890",
        "99999",
        "foo",
        "bar",
        "alpha",
        "delta",
        "baz",
        "test",
        "string",
        "example",
        "placeholder",
        "dummy",
        "xxx",
        "lorem ipsum",
        "todo",
        "tbd",
        "n/a",
        "sample",
        "value",
        "asdf",
        "changeme",
    }
)


@dataclass
class LintReport:
    examples: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {d: 0 for d in DEFECTS})
    samples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    metrics: dict[str, float] = field(default_factory=dict)

    def add(self, defect: str, example_id: str, detail: str = "") -> None:
        self.counts[defect] += 1
        if len(self.samples[defect]) < 5:
            self.samples[defect].append(f"{example_id}: {detail}"[:240] if detail else example_id)

    @property
    def passed(self) -> bool:
        return not any(self.counts.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "examples": self.examples,
            "passed": self.passed,
            "counts": dict(self.counts),
            "samples": dict(self.samples),
            "metrics": self.metrics,
        }


def frame_of(text: str, vocab: set[str] | frozenset[str] = frozenset()) -> str:
    """A request's frame: its words with values masked and the words of the offered tools (names, parameters,
    descriptions) each folded into one slot, so what is left is the phrasing around the task."""
    for pat, slot in MASK:
        text = pat.sub(slot, text)
    out: list[str] = []
    for w in WORD.findall(text.lower()):
        w = "_" if w in vocab else w
        if not (w == "_" and out and out[-1] == "_"):
            out.append(w)
    return " ".join(out)


def tool_vocab(tools: list[dict[str, Any]]) -> set[str]:
    """The words of the offered tools: their names, parameter names and descriptions."""
    out: set[str] = set()
    for t in tools:
        fn = t.get("function", t)
        out.update(
            _tool_words(
                fn["name"], fn.get("description") or "", tuple((fn.get("parameters") or {}).get("properties") or {})
            )
        )
    return out


@functools.lru_cache(maxsize=4096)
def _tool_words(name: str, description: str, params: tuple[str, ...]) -> frozenset[str]:
    """One tool's words (a corpus offers each tool in many lists: distractors vary the lists, not the tools)."""
    text = " ".join([name.replace("_", " "), description, *(p.replace("_", " ") for p in params)])
    return frozenset(WORD.findall(text.lower()))


def opening(text: str) -> str:
    return " ".join(WORD.findall(text.lower())[:4])


def _tool_facts(tools: list[dict[str, Any]]) -> tuple[set[str], dict[str, dict[str, Any]]]:
    """The snake_case names a user should never say (tools, parameters), and the tools by name."""
    names: set[str] = set()
    by_name: dict[str, dict[str, Any]] = {}
    for t in tools:
        fn = t.get("function", t)
        by_name[fn["name"]] = fn
        names.add(fn["name"])
        names.update(p for p in (fn.get("parameters") or {}).get("properties", {}) if "_" in p)
    return names, by_name


def _values_by_key(data: Any, out: dict[str, set[str]]) -> None:
    if isinstance(data, dict):
        for k, v in data.items():
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                out.setdefault(k, set()).add(str(v))
            _values_by_key(v, out)
    elif isinstance(data, list):
        for v in data:
            _values_by_key(v, out)


class _Results:
    """The tool results a conversation has shown so far, each read into its values by key only when a
    writing call is checked against them (most examples write nothing, or write what the user named)."""

    def __init__(self) -> None:
        self.raw: list[Any] = []
        self._vals: list[dict[str, set[str]]] = []
        self._seen: set[str] | None = None

    def add(self, content: Any) -> None:
        self.raw.append(content)
        self._seen = None

    def vals(self) -> list[dict[str, set[str]]]:
        while len(self._vals) < len(self.raw):
            content = self.raw[len(self._vals)]
            try:
                data = json.loads(content)
            except (TypeError, ValueError):
                data = content
            vals: dict[str, set[str]] = {}
            if not (
                isinstance(data, dict) and "error" in data and set(data) <= {"error", "message"}
            ):  # a failed call singles nothing out
                _values_by_key(data, vals)
            self._vals.append(vals)
        return self._vals

    def seen(self) -> set[str]:
        """Every value any result so far holds."""
        if self._seen is None:
            self._seen = set().union(*(v for r in self.vals() for v in r.values()))
        return self._seen


def _singled_out(results: list[dict[str, set[str]]], p: str, v: str) -> bool:
    """Is ``v`` the only value of the field ``p`` (or the id field it is a role of) in an earlier result?"""
    keys = {p, re.sub(r"^[a-z]+_(?=[a-z]+_id$)", "", p)}
    for vals in results:
        for k in keys:
            if vals.get(k) == {v}:
                return True
    return False


@dataclass
class ToolList:
    """What the linter reads off one offered tool list (a corpus offers the same list in many examples)."""

    names: set[str]  # snake_case names a user should never say
    by_name: dict[str, dict[str, Any]]
    descriptions: list[frozenset[tuple[str, ...]]]  # each tool description's n-grams
    vocab: set[str]  # :func:`tool_vocab`
    described: frozenset[tuple[str, ...]] = frozenset()  # every description's n-grams (a text sharing none pastes none)


class Linter:
    def __init__(self, cfg: LintConfig, read_only: dict[str, bool], reference_date: str):
        self.cfg, self.read_only, self.ref = cfg, read_only, reference_date
        self._lists: dict[str, ToolList] = {}
        self._tools: dict[str, dict[str, Any]] = {}  # a tool's JSON text -> the tool (read, never changed)
        self.unexplained: dict[str, set[str]] = defaultdict(set)  # a failed attempt's unexplained value -> examples
        self.closed_cases: list[tuple[str, str]] = []  # (example, detail): writes on what the conversation closed

    def tools(self, tools_json: str) -> list[dict[str, Any]]:
        """A tools column value decoded, each distinct tool once: distractors make most of a corpus's tool
        lists distinct (5,689 at 13,500 examples) out of a few hundred tools, and decoding every list whole
        was a quarter of the linter's time (``bench/OPTIMISATIONS.md``, row 61)."""
        items = tool_items(tools_json)
        if items is not None:
            try:
                out = []
                for item in items:
                    tool = self._tools.get(item)
                    if tool is None:
                        tool = json.loads(item)
                        if not isinstance(tool, dict):
                            raise ValueError("not a tool")
                        self._tools[item] = tool
                    out.append(tool)
                return out
            except ValueError:  # split inside a tool (see tool_items)
                pass
        return json.loads(tools_json)

    def tool_list(self, tools: Any) -> ToolList:
        """The facts of a tools column value (its JSON text, or its list of tool texts as the nested column holds
        it), worked out once per distinct value. A list is looked up as a tuple of its texts: joining the texts
        into one key for every look-up took a third of the look-ups' time."""
        key = tuple(tools) if isinstance(tools, list) else tools
        try:
            out = self._lists.get(key)
        except TypeError:  # tools as objects (not texts): keyed by their JSON text
            key = tools_text(tools)
            out = self._lists.get(key)
        if out is None:
            parsed = self.tools(tools_text(tools))
            names, by_name = _tool_facts(parsed)
            descs = [
                description_grams(fn.get("description") or "", self.cfg.description_ngram) for fn in by_name.values()
            ]
            out = self._lists[key] = ToolList(names, by_name, descs, tool_vocab(parsed), frozenset().union(*descs))
        return out

    def example(self, row: dict[str, Any], rep: LintReport, msgs: list[dict[str, Any]] | None = None) -> None:
        """Lint one corpus row (``msgs``: its messages, when the caller has decoded them already)."""
        eid = row["example_id"]
        msgs = messages_of(row["messages"]) if msgs is None else msgs
        facts = self.tool_list(row["tools"])
        names, by_name, descs = facts.names, facts.by_name, facts.descriptions
        quoted = [m["content"] for m in msgs if m["role"] == "tool" and isinstance(m.get("content"), str)]
        for m in msgs:
            text = m.get("content")
            if not isinstance(text, str) or m["role"] not in ("user", "assistant"):
                continue
            if m["role"] == "user":
                grams = ngrams(text, self.cfg.description_ngram)
                hit = next((g for d in descs for g in grams & d), None) if grams & facts.described else None
                if hit:
                    rep.add("description_paste", eid, " ".join(hit))
                if JSONISH.search(text):
                    rep.add("raw_json", eid, text)
                rep_phrase = stutter(text)
                if rep_phrase:
                    rep.add("repeated_phrase", eid, rep_phrase)
                bad = [w for w in SNAKE.findall(text) if w in names]
                if bad:
                    rep.add("parameter_name", eid, ", ".join(bad))
            if _may_hold_placeholder(text) and any(
                not _server_said(text, h, quoted) for h in PLACEHOLDER.finditer(text)
            ):
                rep.add("placeholder", eid, text)
            # quoted text (a message body, a note) is the data's words, not the speaker's: each quote is its own token
            unquoted = QUOTED.sub(lambda q: f"\x00{q.start()}", text)
            sents = [s.strip().lower() for s in SENTENCE.split(unquoted) if len(s.split()) >= 3]
            if len(sents) != len(set(sents)):
                rep.add("repeated_sentence", eid, text)
            if m["role"] == "assistant":
                dec = [
                    m.group(1)
                    for m in DECIMAL_COUNT.finditer(text)
                    if m.group(1) not in UNITS and is_plural(m.group(1)) and not any(m.group(0) in t for t in quoted)
                ]  # a tool's own words quoted back ("442.85 exceeds") count nothing
                if dec:
                    rep.add("non_integer_count", eid, text)
                if any(
                    is_plural(m.group(1)) and m.group(1) not in UNITS and not any(m.group(0) in t for t in quoted)
                    for m in ONE_OF.finditer(text)
                ):  # a tool's own words quoted back ("Total: 0 files, 1 directories") are the tool's grammar
                    rep.add("plural_mismatch", eid, text)
        self.fillers(eid, msgs, rep, by_name)
        if row["kind"] in TOOL_KINDS:
            self.writes(eid, msgs, by_name, reference_of(row["reference"]), rep)
            self.goal(eid, row.get("trace"), rep)
        if row["kind"] == "clarification":
            self.clarification(eid, msgs, reference_of(row["reference"]), rep)

    def fillers(
        self, eid: str, msgs: list[dict[str, Any]], rep: LintReport, by_name: dict[str, dict[str, Any]] | None = None
    ) -> None:
        """Known fillers in any call; the values of wrong attempts that nothing in the example explains (gathered
        for ``repeated_filler``). A wrong value its parameter's schema offers (one of its enum, a number, a calendar
        date) is a choice from the tool's own space, which a large corpus repeats by chance: never a constant."""
        said = [m["content"] for m in msgs if m["role"] in ("user", "tool") and isinstance(m["content"], str)]
        failed = {
            m.get("tool_call_id") for m in msgs if m["role"] == "tool" and str(m["content"]).startswith('{"error"')
        }
        world = "\n".join(t for t in said if not t.startswith('{"error"'))  # an error echoes the wrong value
        calls = [(m, _call_args(m)) for m in msgs if m["role"] == "assistant" and m.get("tool_calls")]
        marked = any(m.get("weight") is not None for m in msgs)
        for i, (m, args) in enumerate(calls):
            for _p, v in _leaves(args):
                if str(v).strip().lower() in FILLERS and str(v) not in world:
                    rep.add("filler_value", eid, f"{m['tool_calls'][0]['function']['name']}({_p}={v!r})")
            if not (m.get("weight") == 0 if marked else _retried(msgs, m, failed)):
                continue  # a wrong attempt is marked; in a version from before the marks, it failed and was retried
            right = next((a for n, a in calls[i + 1 :] if n.get("weight") != 0), {})
            props = ((by_name or {}).get(m["tool_calls"][0]["function"]["name"]) or {}).get("parameters") or {}
            for p, v in _leaves(args):
                if v != right.get(p) and str(v) not in world and not explains(v, right.get(p)):
                    if not _drawn_from_schema(v, (props.get("properties") or {}).get(p) or {}):
                        self.unexplained[str(v)].add(eid)

    def writes(
        self,
        eid: str,
        msgs: list[dict[str, Any]],
        by_name: dict[str, dict[str, Any]],
        reference: list[list[dict[str, Any]]],
        rep: LintReport,
    ) -> None:
        """Check the reference's writing calls in order (a recovery demonstration's wrong attempt is not one of
        them)."""
        flat = [(c["name"], c["arguments"]) for turn in reference for c in turn]
        at = 0
        said: list[str] = []
        results = _Results()
        for m in msgs:
            if m["role"] == "user":
                said.append(m["content"])
            elif m["role"] == "tool":
                results.add(m["content"])
            elif m.get("tool_calls"):
                for tc in m["tool_calls"]:
                    name, args = tc["function"]["name"], json.loads(tc["function"]["arguments"])
                    if at >= len(flat) or flat[at] != (name, args):
                        continue
                    at += 1
                    ro = self.read_only.get(name)
                    if (
                        ro if ro is not None else intent_of(name, False).read
                    ):  # a version without annotations: judged by the name
                        continue
                    self.check_write(eid, name, args, by_name.get(name, {}), " \n ".join(said), results, rep)

    def goal(self, eid: str, trace: Any, rep: LintReport) -> None:
        """Flag an undo-then-redo, and note a write on what the conversation closed (``self.closed_cases``, judged
        against the allowed share over the corpus), from the trace's reference calls."""
        calls = [t for t in (json_value(trace) or []) if t.get("reference", True)]
        args = [json_value(t.get("arguments")) or {} for t in calls]
        # a result is read only for a write that succeeded (what a later close may undo): most results are reads'
        reads = [self.is_read(t["name"]) for t in calls]
        found = conflicts(
            (t["name"], a, bool(t["ok"]), ro, None if ro or not t["ok"] else json_value(t.get("result")))
            for t, a, ro in zip(calls, args, reads, strict=True)
        )
        for c in found:
            detail = f"{calls[c.later]['name']} after {calls[c.closer]['name']}({args[c.closer]})"
            if c.kind != "acts_on_closed":
                rep.add(c.kind, eid, detail)
            else:
                self.closed_cases.append((eid, detail))
                break

    def is_read(self, name: str) -> bool:
        """Is the tool read-only (by the manifest's annotations, else judged by its name)?"""
        ro = self.read_only.get(name)
        return ro if ro is not None else intent_of(name, False).read

    def check_write(
        self,
        eid: str,
        name: str,
        args: dict[str, Any],
        fn: dict[str, Any],
        said: str,
        results: _Results,
        rep: LintReport,
    ) -> None:
        required = set((fn.get("parameters") or {}).get("required") or [])
        for p, v in args.items():
            if isinstance(v, bool) or v in (None, "", [], {}):
                continue
            if p.endswith(("_id", "_ids")):
                vals = [str(x) for x in v] if isinstance(v, list) else [str(v)]
                for x in vals:
                    if not mentions(said, x, self.ref) and not _singled_out(
                        results.vals(), p if not p.endswith("_ids") else p[:-1], x
                    ):
                        rep.add("unnamed_write", eid, f"{name}({p}={x})")
            elif p in required and not mentions(said, v, self.ref) and not _sql_said(said, v):
                seen = results.seen()
                flat = [str(x) for x in v] if isinstance(v, list) else [str(v)]
                if not all(
                    x in seen or (isinstance(v, (int, float)) and str(v).rstrip("0").rstrip(".") in seen) for x in flat
                ):
                    rep.add("invented_write_value", eid, f"{name}({p}={v!r})")

    def clarification(
        self, eid: str, msgs: list[dict[str, Any]], reference: list[list[dict[str, Any]]], rep: LintReport
    ) -> None:
        users = [i for i, m in enumerate(msgs) if m["role"] == "user"]
        first = next((c for turn in reference for c in turn), None)
        if (
            len(users) < 2
            or first is None
            or msgs[users[0] + 1]["role"] != "assistant"
            or msgs[users[0] + 1].get("tool_calls")
        ):
            rep.add("clarification_mismatch", eid, "no question before the first call")
            return
        question, answer = msgs[users[0] + 1]["content"].lower(), msgs[users[1]]["content"]
        asked = [
            p
            for p, v in first["arguments"].items()
            if (mentions(answer, v, self.ref) or _sql_said(answer, v))  # SQL text is answered in words
            and not isinstance(v, bool)
            and words(p).lower().split(" ")[-1] in question
        ]
        if not asked:
            rep.add("clarification_mismatch", eid, f"question {question!r} / answer {answer!r}")


class _Adds:
    """The defects :meth:`Linter.example` reports for one row, kept in order to be added to the report later."""

    def __init__(self) -> None:
        self.adds: list[tuple[str, str, str]] = []

    def add(self, defect: str, example_id: str, detail: str = "") -> None:
        self.adds.append((defect, example_id, detail))


# (row's defects in order, its user turns, its frame when it has tool calls): what the per-row pass hands the rest
_RowFacts = tuple[list[tuple[str, str, str]], list[str], str | None]

PARALLEL_MIN_ROWS = 2000  # below this a second process costs more than it saves


def _row_facts(linter: Linter, rows: pl.DataFrame) -> list[_RowFacts]:
    """Each row linted on its own (the part of the linter that needs no other row), in order."""
    out: list[_RowFacts] = []
    for row in rows.iter_rows(named=True):
        msgs = messages_of(row["messages"])
        adds = _Adds()
        linter.example(row, adds, msgs)  # type: ignore[arg-type]  (it only adds)
        users = [m["content"] for m in msgs if m["role"] == "user" and isinstance(m.get("content"), str)]
        frame = (
            frame_of(users[0], linter.tool_list(row["tools"]).vocab) if row["kind"] in TOOL_KINDS and users else None
        )
        out.append((adds.adds, users, frame))
    return out


def _in_two(linter: Linter, df: pl.DataFrame) -> list[_RowFacts]:
    """:func:`_row_facts` of every row, the second half in a forked child on the machine's other core while this
    process does the first (:func:`~pipeline.core.speedups.in_a_child`; ``bench/OPTIMISATIONS.md``, row 68); the
    child hands back its rows' facts and what its linter gathered across them."""
    half = df.height // 2

    def second() -> bytes:
        facts = _row_facts(linter, df.slice(half))
        return pickle.dumps((facts, dict(linter.unexplained), linter.closed_cases), pickle.HIGHEST_PROTOCOL)

    # the child's linter starts from this one as it was at the fork; done here instead, the same from where it is
    mine, blob = in_a_child(second, lambda: _row_facts(linter, df.slice(0, half)), fallback=lambda: b"")
    if not blob:
        return mine + _row_facts(linter, df.slice(half))
    facts, unexplained, closed = pickle.loads(blob)
    for value, ids in unexplained.items():
        linter.unexplained[value] |= ids
    linter.closed_cases.extend(closed)
    return mine + facts


def lint_frame(
    df: pl.DataFrame,
    cfg: BuildConfig | None = None,
    read_only: dict[str, bool] | None = None,
    parallel: bool | None = None,
) -> LintReport:
    """Lint the examples of a corpus (``read_only``: tool name -> read-only, from the manifest). ``parallel``: lint
    the rows in two processes (default: for a corpus of :data:`PARALLEL_MIN_ROWS` rows or more, on a machine with
    more than one core, where ``os.fork`` exists); the report is the same either way."""
    cfg = cfg or BuildConfig.model_construct()
    lcfg = getattr(cfg, "lint", None) or LintConfig()
    ref = getattr(getattr(cfg, "query", None), "reference_date", QueryConfig.model_fields["reference_date"].default)
    linter = Linter(lcfg, read_only or {}, ref)
    rep = LintReport(examples=df.height)
    rows = df.sort("example_id")
    if parallel is None:
        parallel = df.height >= PARALLEL_MIN_ROWS and (os.cpu_count() or 1) > 1
    facts = _in_two(linter, rows) if parallel else _row_facts(linter, rows)
    frames, openings_all, tool_turns = [], Counter(), []
    no_call = Counter()
    for rank, (row_id, kind, (adds, users, frame)) in enumerate(
        zip(rows["example_id"].to_list(), rows["kind"].to_list(), facts, strict=True)
    ):
        for defect, eid, detail in adds:
            rep.add(defect, eid, detail)
        # openings are compared within the first `openings_sample` examples by id (ids are hashes: a fair sample),
        # so the share means the same for a corpus of 200 and one of 13,500
        sampled = rank < lcfg.openings_sample
        if sampled:
            openings_all.update(opening(u) for u in users)
        if kind in TOOL_KINDS and users:
            frames.append(frame)
            if sampled:
                tool_turns.extend((row_id, u) for u in users)
        elif kind in ("irrelevance", "abstention") and users:
            key = users[0].strip().lower()
            no_call[key] += 1
            if no_call[key] == 2:
                rep.add("duplicate_no_call_request", row_id, users[0])
    for value, ids in sorted(linter.unexplained.items()):
        if len(ids) >= lcfg.filler_repeats:
            rep.add("repeated_filler", "corpus", f"{value!r} in the wrong attempts of {len(ids)} examples")
    distinct = len(set(frames)) / max(1, len(frames))
    unique = sum(openings_all[opening(u)] == 1 for _, u in tool_turns) / max(1, len(tool_turns))
    rep.metrics = {
        "distinct_frames": round(distinct, 4),
        "unique_openings": round(unique, 4),
        "tool_user_turns": len(tool_turns),
        "unexplained_attempt_values": len(linter.unexplained),
    }
    _closed_share(rep, linter.closed_cases, len(frames), getattr(cfg, "chains", None) or ChainConfig())
    if frames and distinct < lcfg.min_distinct_frames:
        rep.add("distinct_frames", "corpus", f"{distinct:.3f} < {lcfg.min_distinct_frames}")
    if tool_turns and unique < lcfg.min_unique_openings:
        rep.add("unique_openings", "corpus", f"{unique:.3f} < {lcfg.min_unique_openings}")
    return rep


_PLACEHOLDER_MARKS = ("None", "null", "undefined", "NaN", "{", "<")  # what every PLACEHOLDER match holds


def _may_hold_placeholder(text: str) -> bool:
    """Can :data:`PLACEHOLDER` match ``text`` at all? (A scan for six substrings is much cheaper than the pattern's.)"""
    return any(m in text for m in _PLACEHOLDER_MARKS)


def _server_said(text: str, hit: re.Match[str], quoted: list[str]) -> bool:
    """A ``<file>`` or ``{name}`` that a text result of the example holds word for word (git's own usage line,
    quoted back), or the ``null`` of a path (``/dev/null`` in a diff): the server's text, not a template's hole. A
    JSON result counts by the texts it holds (a failed call's ``{"error": ..., "message": "... [<revision>...]"}``),
    never by its own syntax (``{}``, ``null``). A bare ``None``/``null`` is never excused."""
    said = [s for q in quoted for s in _texts_of(q)]
    if hit.group(0)[0] in "<{":
        return any(hit.group(0) in q for q in said)
    path = text[max(0, hit.start() - 1) : hit.end()]
    return path.startswith("/") and any(path in q for q in said)


def _texts_of(result: str) -> list[str]:
    """The texts a tool message holds: itself, or for JSON the strings inside it."""
    if not result.lstrip().startswith(("{", "[")):
        return [result]
    try:
        data = json.loads(result)
    except ValueError:
        return []
    out: list[str] = []

    def walk(d: Any) -> None:
        if isinstance(d, str):
            out.append(d)
        elif isinstance(d, dict):
            for v in d.values():
                walk(v)
        elif isinstance(d, list):
            for v in d:
                walk(v)

    walk(data)
    return out


def _retried(msgs: list[dict[str, Any]], m: dict[str, Any], failed: set[Any]) -> bool:
    """A call that failed and whose next assistant message calls the same tool again (a correction), not a reference
    call that fails on the state and is then reported to the user, or followed by the plan's next, other tool."""
    if m["tool_calls"][0].get("id") not in failed:
        return False
    after = msgs[next(i for i, x in enumerate(msgs) if x is m) + 1 :]
    nxt = next((x for x in after if x["role"] == "assistant"), None)
    name = m["tool_calls"][0]["function"]["name"]
    return bool(nxt and nxt.get("tool_calls") and nxt["tool_calls"][0]["function"]["name"] == name)


def _call_args(m: dict[str, Any]) -> dict[str, Any]:
    try:
        args = json.loads(m["tool_calls"][0]["function"]["arguments"])
    except (ValueError, KeyError, IndexError, TypeError):
        return {}
    return args if isinstance(args, dict) else {}


def _drawn_from_schema(value: Any, schema: dict[str, Any]) -> bool:
    """Whether ``value`` is one of the values its parameter's schema offers: an enum member (of the schema or of one
    of its ``anyOf``/``oneOf`` branches, or named in its description, as an enum-stripped schema says it), a number,
    a date."""
    if str(value).strip().lower() in FILLERS:  # 12345 is a number, and still the generator's constant
        return False
    branches = [schema, *schema.get("anyOf", []), *schema.get("oneOf", [])]
    if any(value in (b.get("enum") or []) for b in branches if isinstance(b, dict)):
        return True
    if isinstance(value, str) and value in str(schema.get("description") or ""):
        return True
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True
    return isinstance(value, str) and bool(ISO_DATE.match(value) or ISO_DATETIME.match(value))


def _leaves(args: dict[str, Any]) -> list[tuple[str, Any]]:
    """A call's scalar argument values (list items each), by parameter; flags and empty values aside."""
    out = []
    for p, v in args.items():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, (str, int, float)) and not isinstance(x, bool) and str(x).strip():
                out.append((p, x))
    return out


def _closed_share(rep: LintReport, cases: list[tuple[str, str]], tool_examples: int, ccfg: ChainConfig) -> None:
    """The writes on what a conversation closed, past the deliberate share of the examples with tool calls
    (``chains.closed_entity_rate``), each a defect; the share itself goes into the metrics."""
    allowed = int(ccfg.closed_entity_rate * tool_examples)
    rep.metrics["acts_on_closed"] = len(cases)
    rep.metrics["acts_on_closed_allowed"] = allowed
    for eid, detail in cases[allowed:]:
        rep.add("acts_on_closed", eid, detail)


def _sql_said(said: str, v: Any) -> bool:
    """A statement the user asked for in words ("show me the customers in Lyon"; pipeline.language.sqltext)."""
    asked = say(v) if isinstance(v, str) else None
    return bool(asked) and asked.lower() in said.lower()


def lint_version(path: str | Path) -> LintReport:
    """Lint a corpus version directory with the configuration it was built with."""
    p = Path(path)
    manifest = json.loads((p / "manifest.json").read_text())
    try:
        cfg = BuildConfig.model_validate(manifest.get("config") or {})
    except ValueError:
        cfg = BuildConfig.model_construct()
    read_only = {name: ro for per in (manifest.get("tool_annotations") or {}).values() for name, ro in per.items()}
    return lint_frame(read_examples(p), cfg, read_only)


def format_report(rep: LintReport) -> str:
    lines = [f"{rep.examples} examples: " + ("no defects" if rep.passed else f"{sum(rep.counts.values())} defects")]
    lines.append(
        f"  distinct request frames {rep.metrics.get('distinct_frames')}, unique openings "
        f"{rep.metrics.get('unique_openings')}"
    )
    for d in DEFECTS:
        lines.append(f"  {d:<28} {rep.counts[d]}")
        for s in rep.samples.get(d, []):
            lines.append(f"      {s}")
    return "\n".join(lines)
