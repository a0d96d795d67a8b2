"""Value flow (A -> B) for a tool A whose result has no schema to read (no output schema, a wrapped text, any
tool of a server not built with the kit): a value seen in A's live result that B accepts in a live call, where that
says something (B refuses a value nothing holds, or answers it without naming it). One of the edge kinds
:mod:`pipeline.discovery.graph` confirms live; the arguments B accepted become observed values of the snapshot."""

from __future__ import annotations

import json
import random
from typing import Any

from pipeline.core.records import Edge, Snapshot, ToolSpec
from pipeline.env import Session
from pipeline.language.entities import parse_result, result_values
from pipeline.language.sqltext import sql_kind
from pipeline.language.state_values import SEARCH_PARAMS
from pipeline.language.values import fill_args

# free text a request writes (never a value another tool's result feeds), and the name a write gives what it makes
FREE_TEXT = {
    "title",
    "body",
    "content",
    "description",
    "memo",
    "message",
    "text",
    "subject",
    "comment",
    "query",
    "note",
    "reason",
}
OWN_NAME = {"name", "display_name", "full_name"}


def _flow_params(b: ToolSpec) -> list[str]:
    """B's parameters a value of another tool's result may feed: required, naming something (not free
    text, nor the name a write gives the thing it makes); SQL text, whose table a result may name; a search's
    words, which a name from a result may be."""
    return [
        p
        for p in b.required
        if (not _free_text(p) or sql_kind(b, p) or (b.read_only and p in SEARCH_PARAMS))
        and not (p in OWN_NAME and not b.read_only)
        and _schema_type(b.properties.get(p)) in (None, "string", "array", "integer")
        and not (b.properties.get(p) or {}).get("enum")  # a closed choice is the user's, whatever a result says
    ]


def _free_text(p: str) -> bool:
    """A parameter a request writes as free text: by its name (``content``), or a role of one (``comment_content``,
    ``reply_text``)."""
    return p in FREE_TEXT or (p.rsplit("_", 1)[-1] in FREE_TEXT and "_" in p)


def _schema_type(spec: Any) -> Any:
    spec = spec or {}
    return spec.get("type") or next((x.get("type") for x in spec.get("anyOf", []) if x.get("type") != "null"), None)


def _ranked(offered: list[tuple[str, Any]], param: str) -> list[tuple[str, Any]]:
    """A result's (field, value) pairs, those whose field names the parameter first, strings only (no document:
    :func:`_document`; and, for an id parameter, the whole numbers of id fields: a post's ``id`` for ``tweet_id``),
    a few."""
    stem = param[:-1] if param.endswith("s") else param
    ids = param.endswith("_id")
    strings = [
        (f, v)
        for f, v in offered
        if (isinstance(v, str) and v.strip() and not _document(v))
        or (ids and isinstance(v, int) and not isinstance(v, bool) and (f == "id" or f.endswith("_id")))
    ]
    near = [(f, v) for f, v in strings if f in (param, stem) or f.endswith(stem) or stem.endswith(f)]
    return (near + [fv for fv in strings if fv not in near])[:4]


def _document(text: str) -> bool:
    """A result's text no user names a thing by: more than one line, or a whole JSON array or object (the JSON
    tree ``directory_tree`` answers, wrapped as server-filesystem wraps every text in ``{"content": ...}``). Its
    names are offered one by one; the text itself, fed to a path, would be taken as one (a file named by a tree)."""
    s = text.strip()
    if "\n" in s:
        return True
    if s[:1] not in "[{":
        return False
    try:
        return isinstance(json.loads(s), (list, dict))
    except ValueError:
        return False


NO_SUCH = "prove-no-such-{}"  # a value no server holds: what a tool does with it is the control


def _strings(x: Any) -> set[str]:
    if isinstance(x, dict):
        return set().union(*(_strings(v) for v in x.values())) if x else set()
    if isinstance(x, list):
        return set().union(*(_strings(v) for v in x)) if x else set()
    return {str(x)} if isinstance(x, (str, int)) and not isinstance(x, bool) else set()


def _flow_run(
    s: Session, snap: Snapshot, a: ToolSpec, rng: random.Random
) -> tuple[dict[str, Any], Any, list[tuple[str, Any]]]:
    """A run on a session reset to the seed (up to three argument draws) until its result names something
    it brought: a value A was given that the user already had (an observed one) only passes through A."""
    known = {str(v) for vals in snap.values.values() for v in vals}
    for _try in range(3):
        args_a = fill_args(a, snap, rng)
        s.reset()
        ra = s.call(a.name, args_a)
        passed = _strings(args_a) & known
        offered = [(f, v) for f, v in result_values(ra.data, a.name) if str(v) not in passed] if ra.ok else []
        if offered:
            return args_a, ra.data, offered
    return {}, None, []


def _names(res: Any, value: Any) -> bool:
    """The result of a successful call mentions ``value``."""
    return res.ok and str(value) in (res.text or json.dumps(res.data, default=str))


def _empty(res: Any) -> bool:
    """A successful answer that holds nothing: an empty list, object or text (a lookup of a name nothing holds,
    as a query over a catalog answers ``[]``)."""
    return res.ok and parse_result(res.data) in ([], {}, "", None)


def _evidence(res: Any, control: Any, value: Any) -> bool:
    """B's call with ``value`` shows B took it: it succeeded where the control failed, or it names the
    value where the control (answered) named nothing, or it answered something where the control answered an
    empty list (the columns of a table a listing named, where a name nothing holds has none)."""
    return res.ok and (not control.ok or _names(res, value) or (_empty(control) and not _empty(res)))


def confirm_value_flow(
    s: Session,
    snap: Snapshot,
    a: ToolSpec,
    tools: list[ToolSpec],
    rng: random.Random,
    accepted: dict[str, dict[str, Any]] | None = None,
    reads_only: bool = False,
    controls: dict[tuple[str, str], Any] | None = None,
) -> list[Edge]:
    """Edges A -> B for a tool A with no output schema: a value seen in A's live result that B accepts,
    where that says something: B refuses a value nothing holds, or B answers such a value without
    naming it (an empty lookup) and names the value from A. A runs on a session reset to the seed;
    reads of B follow it on that state, and the session is reset (and A run again) after each write of B.
    ``accepted`` gets, per tool B and parameter, the argument B accepted (for a parameter no probe observed).
    ``reads_only``: only reads are tried as B (no reset between them). ``controls``: the answers of writes B to a
    value nothing holds, per (B, parameter), kept across the tools A of a discovery."""
    stated = set(s.env.config.known_values)
    args_a, data_a, offered = _flow_run(s, snap, a, rng)
    if not offered:
        return []  # A does not run here, or its result names nothing another tool could take
    edges = []

    last: dict[str, Any] = {}

    def attempt(b: ToolSpec, p: str, v: Any) -> Any:
        last.clear()
        last.update(fill_args(b, snap, rng, fixed={p: v}, context=[data_a]))
        res = s.call(b.name, dict(last))
        if not b.read_only:
            s.reset()
            s.call(a.name, args_a)
        return res

    # reads first: they leave the state as A left it
    for b in sorted(
        (t for t in tools if t.name != a.name and (t.read_only or not reads_only)), key=lambda t: not t.read_only
    ):
        for p in (p for p in _flow_params(b) if p not in stated):  # a value the user states comes from no result
            # a write's answer to a value nothing holds is its own, whatever A did: asked once (each ask costs a reset)
            key = (b.name, p)
            if controls is not None and not b.read_only and key in controls:
                control = controls[key]
            else:
                control = attempt(b, p, NO_SUCH.format(p))
                if controls is not None and not b.read_only:
                    controls[key] = control
            if _names(control, NO_SUCH.format(p)):
                continue  # B echoes anything it is given: its success would prove nothing
            found = next((f for f, v in _ranked(offered, p) if _evidence(attempt(b, p, v), control, v)), None)
            if found is not None:
                if accepted is not None and unobserved(snap, p):
                    accepted.setdefault(b.name, {}).setdefault(p, last[p])
                edges.append(Edge(src=a.name, dst=b.name, kind="explicit", fields={found: p}, source="live"))
                break
    return edges


def unobserved(snap: Snapshot, p: str) -> bool:
    """No probe saw a value for ``p`` (nor, for an array, for its items)."""
    return not (snap.values.get(p) or (p.endswith("s") and snap.values.get(p[:-1])))


def with_accepted(snap: Snapshot, accepted: dict[str, dict[str, Any]]) -> Snapshot:
    """The snapshot with the arguments tools accepted added as observed values of their parameters (an array's
    items under the singular name, where :func:`pipeline.language.values.fill_args` looks for an array's values)."""
    if not accepted:
        return snap
    values = {k: list(v) for k, v in snap.values.items()}
    for params in accepted.values():
        for p, v in sorted(params.items()):
            if isinstance(v, list) and not p.endswith("s"):
                continue  # an array named in the singular (``door``): its items have no name of their own to go under
            key, vals = (p[:-1], v) if isinstance(v, list) else (p, [v])
            values[key] = values.get(key, []) + [x for x in vals if x not in values.get(key, [])]
    return snap.model_copy(update={"values": values})
