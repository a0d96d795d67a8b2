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

This module runs the rules over a corpus: each example on its own (in two processes where that pays), then the
rules over the corpus. The rules on what a message says are :mod:`pipeline.corpus.lint_messages`'s, those on what
a call acts on :mod:`pipeline.corpus.lint_calls`'s; the report is :mod:`pipeline.corpus.lint_report`'s.
"""

from __future__ import annotations

import json
import os
import pickle
import re
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.core.config import BuildConfig, ChainConfig, LintConfig, QueryConfig
from pipeline.core.records import TOOL_KINDS
from pipeline.core.speedups import in_a_child
from pipeline.corpus.columns import messages_of, reference_of, tool_items, tools_text
from pipeline.corpus.lint_calls import CallChecks
from pipeline.corpus.lint_messages import ToolList, message_defects
from pipeline.corpus.lint_report import LintReport
from pipeline.corpus.store import read_examples
from pipeline.language.phrasing import WORD

MASK = [
    (re.compile(r'"[^"]*"'), "<text>"),
    (re.compile(r"\b[A-Z]{2,6}-\d{2,6}\b"), "<id>"),
    (re.compile(r"\S+@\S+"), "<email>"),
    (re.compile(r"(?<!\w)/[\w./-]+"), "<path>"),
    (re.compile(r"\d[\d.,:]*"), "<n>"),
    (re.compile(r"\([^)]*\)"), ""),
]


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


def opening(text: str) -> str:
    return " ".join(WORD.findall(text.lower())[:4])


class Linter:
    """The per-example rules: the language rules (:func:`~pipeline.corpus.lint_messages.message_defects`) and the
    grounding rules (:class:`~pipeline.corpus.lint_calls.CallChecks`), with each distinct tool and tool list read
    once across the examples."""

    def __init__(self, cfg: LintConfig, read_only: dict[str, bool], reference_date: str):
        self.cfg = cfg
        self.calls = CallChecks(read_only, reference_date)
        self._lists: dict[str, ToolList] = {}
        self._tools: dict[str, dict[str, Any]] = {}  # a tool's JSON text -> the tool (read, never changed)

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
            out = self._lists[key] = ToolList.of(self.tools(tools_text(tools)), self.cfg.description_ngram)
        return out

    def example(self, row: dict[str, Any], rep: LintReport, msgs: list[dict[str, Any]] | None = None) -> None:
        """Lint one corpus row (``msgs``: its messages, when the caller has decoded them already)."""
        eid = row["example_id"]
        msgs = messages_of(row["messages"]) if msgs is None else msgs
        facts = self.tool_list(row["tools"])
        message_defects(eid, msgs, facts, self.cfg.description_ngram, rep)
        self.calls.fillers(eid, msgs, rep, facts.by_name)
        if row["kind"] in TOOL_KINDS:
            self.calls.writes(eid, msgs, facts.by_name, reference_of(row["reference"]), rep)
            self.calls.goal(eid, row.get("trace"), rep)
        if row["kind"] == "clarification":
            self.calls.clarification(eid, msgs, reference_of(row["reference"]), rep)


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
        return pickle.dumps((facts, dict(linter.calls.unexplained), linter.calls.closed_cases), pickle.HIGHEST_PROTOCOL)

    # the child's linter starts from this one as it was at the fork; done here instead, the same from where it is
    mine, blob = in_a_child(second, lambda: _row_facts(linter, df.slice(0, half)), fallback=lambda: b"")
    if not blob:
        return mine + _row_facts(linter, df.slice(half))
    facts, unexplained, closed = pickle.loads(blob)
    for value, ids in unexplained.items():
        linter.calls.unexplained[value] |= ids
    linter.calls.closed_cases.extend(closed)
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
    for value, ids in sorted(linter.calls.unexplained.items()):
        if len(ids) >= lcfg.filler_repeats:
            rep.add("repeated_filler", "corpus", f"{value!r} in the wrong attempts of {len(ids)} examples")
    distinct = len(set(frames)) / max(1, len(frames))
    unique = sum(openings_all[opening(u)] == 1 for _, u in tool_turns) / max(1, len(tool_turns))
    rep.metrics = {
        "distinct_frames": round(distinct, 4),
        "unique_openings": round(unique, 4),
        "tool_user_turns": len(tool_turns),
        "unexplained_attempt_values": len(linter.calls.unexplained),
    }
    _closed_share(rep, linter.calls.closed_cases, len(frames), getattr(cfg, "chains", None) or ChainConfig())
    if frames and distinct < lcfg.min_distinct_frames:
        rep.add("distinct_frames", "corpus", f"{distinct:.3f} < {lcfg.min_distinct_frames}")
    if tool_turns and unique < lcfg.min_unique_openings:
        rep.add("unique_openings", "corpus", f"{unique:.3f} < {lcfg.min_unique_openings}")
    return rep


def _closed_share(rep: LintReport, cases: list[tuple[str, str]], tool_examples: int, ccfg: ChainConfig) -> None:
    """The writes on what a conversation closed, past the deliberate share of the examples with tool calls
    (``chains.closed_entity_rate``), each a defect; the share itself goes into the metrics."""
    allowed = int(ccfg.closed_entity_rate * tool_examples)
    rep.metrics["acts_on_closed"] = len(cases)
    rep.metrics["acts_on_closed_allowed"] = allowed
    for eid, detail in cases[allowed:]:
        rep.add("acts_on_closed", eid, detail)


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
