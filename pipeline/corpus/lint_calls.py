"""The corpus linter's grounding rules, per example: what its calls act on and fill in must come from what the
user said or a tool result showed (``unnamed_write``, ``invented_write_value``, ``filler_value``), a clarification
asks for the missing value and gets it (``clarification_mismatch``), and the reference never undoes or redoes its
own work (``undo_then_redo``, ``do_then_undo``). Two rules are judged over the corpus from what
:class:`CallChecks` gathers here: ``repeated_filler`` (the wrong attempts' unexplained values) and
``acts_on_closed`` (writes on what the conversation closed)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from pipeline.corpus.columns import json_value
from pipeline.corpus.lint_report import LintReport
from pipeline.discovery.goals import conflicts
from pipeline.language.lexicon import intent_of, words
from pipeline.language.phrasing import ISO_DATE, ISO_DATETIME, mentions
from pipeline.language.sqltext import say
from pipeline.synthesis.mistakes import explains

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
    """Is ``v`` the only value of the field ``p`` (or the id field it is a role of) in an earlier result? For an id
    (``tweet_id``), a result's plain ``id`` counts where it has no field of the parameter's name (the one post a
    user's tweets came back with)."""
    keys = {p, re.sub(r"^[a-z]+_(?=[a-z]+_id$)", "", p)}
    for vals in results:
        for k in keys | ({"id"} if p.endswith("_id") and not keys & set(vals) else set()):
            if vals.get(k) == {v}:
                return True
    return False


class CallChecks:
    """The grounding rules of one example's calls, and what they gather across the examples of a corpus for the
    rules judged over it."""

    def __init__(self, read_only: dict[str, bool], reference_date: str):
        self.read_only, self.ref = read_only, reference_date
        self.unexplained: dict[str, set[str]] = defaultdict(set)  # a failed attempt's unexplained value -> examples
        self.closed_cases: list[tuple[str, str]] = []  # (example, detail): writes on what the conversation closed

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


def _sql_said(said: str, v: Any) -> bool:
    """A statement the user asked for in words ("show me the customers in Lyon"; pipeline.language.sqltext)."""
    asked = say(v) if isinstance(v, str) else None
    return bool(asked) and asked.lower() in said.lower()
