"""Argument values for tool calls: from the sampled state first, synthesized from the schema last."""

from __future__ import annotations

import functools
import random
import re
from datetime import date, timedelta
from typing import Any, NamedTuple

from pipeline.core.config import QueryConfig
from pipeline.core.records import Snapshot, ToolSpec
from pipeline.language.hints import hinted, known_fields, new_paths
from pipeline.language.sqltext import fill_sql

_WORDS = {
    "name": ["Northwind", "Blue Harbor", "Project Atlas", "Maple Street", "Orion"],
    "title": ["Quarterly review", "Team sync", "Budget planning", "Design critique", "Onboarding"],
    "memo": ["rent share", "dinner split", "savings top-up", "gift", "utilities"],
    "description": ["Follow-up from last week", "Urgent, please review", "Routine update"],
    "content": ["Looks good to me.", "Can we move this to Friday?", "Shipping the fix today."],
    "body": ["Hi, quick update on the plan.", "Please see the notes below.", "Thanks for your help!"],
    "text": ["Sounds great", "On it", "Let's discuss tomorrow"],
    "query": ["report", "meeting", "invoice", "notes"],
    "subject": ["Project update", "Invoice question", "Weekend plans"],
    "reason": ["other"],
    "email": ["alex.morgan@example.com", "sam.lee@example.com"],
    "city": ["Lisbon", "Denver", "Austin"],
    "address": ["12 Harbor Road, Lisbon", "400 Pine St, Denver"],
    "path": ["notes.txt", "report.md"],
    "color": ["blue", "red", "green"],
    "label": ["important", "follow-up"],
    "tag": ["urgent", "later"],
    "url": ["https://hooks.example.com/prove"],
    "comment": ["Great work", "Needs another pass"],
    "message": ["Running late, start without me", "Done, please check"],
    "note": ["Called, will follow up on Tuesday", "FYI, see the thread below", "Sent the revised quote"],
}


def _digits(rng: random.Random, n: int) -> str:
    return "".join(str(rng.randint(0, 9)) for _ in range(n))


def from_pattern(pattern: str, rng: random.Random) -> str | None:
    """A string for simple anchored patterns (\\d{n}, [A-Z]{n}, literals, times of day); None if unsure. (Dates by
    their pattern are :func:`synth_value`'s: a real day.)"""
    p = pattern.strip("^$")
    if p in (r"\d{2}:\d{2}", r"([01]\d|2[0-3]):[0-5]\d"):
        return "10:00"
    out = []
    i = 0
    while i < len(p):
        m = re.match(r"\\d\{(\d+)\}|\[A-Z\]\{(\d+)\}|\[a-z\]\{(\d+)\}|\[A-Z0-9\]\{(\d+)\}", p[i:])
        if m:
            n = int(next(g for g in m.groups() if g))
            if m.group(1):
                out.append(_digits(rng, n))
            elif m.group(2):
                out.append("".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(n)))
            elif m.group(3):
                out.append("".join(rng.choice("abcdefghijkmnpqrstuvwxyz") for _ in range(n)))
            else:
                out.append("".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(n)))
            i += m.end()
            continue
        ch = p[i]
        if ch in "\\[](){}+*?|.":
            return None
        out.append(ch)
        i += 1
    s = "".join(out)
    return s if re.fullmatch(pattern, s) else None


def _schema_of(spec: dict[str, Any]) -> dict[str, Any]:
    """The non-null branch of an ``anyOf [T, null]`` schema."""
    if "anyOf" in spec:
        for s in spec["anyOf"]:
            if s.get("type") != "null":
                merged = {**{k: v for k, v in spec.items() if k != "anyOf"}, **s}
                return merged
    return spec


def _date_time(rng: random.Random, reference_date: str) -> str:
    """A day within 20 after the reference date, at 9, 10, 14 or 16 o'clock (``YYYY-MM-DDTHH:MM:SS``)."""
    d = date.fromisoformat(reference_date) + timedelta(days=rng.randint(1, 20))
    return f"{d.isoformat()}T{rng.choice(['09', '10', '14', '16'])}:00:00"


def _at_precision(v: str, pattern: str | None, cuts: tuple[int, ...]) -> str | None:
    """``v`` cut to the first precision (whole, ``YYYY-MM-DDTHH:MM``, a date, a month) the pattern matches."""
    return next((v[:n] for n in cuts if not pattern or re.fullmatch(pattern.strip("^$"), v[:n])), None)


def synth_value(
    param: str,
    spec: dict[str, Any],
    rng: random.Random,
    reference_date: str = QueryConfig.model_fields["reference_date"].default,
) -> Any:
    """A schema-valid value for a parameter nothing in the state names."""
    s = _schema_of(spec)
    if "enum" in s and s["enum"]:
        return rng.choice(s["enum"])
    if "const" in s:
        return s["const"]
    t = s.get("type")
    if t == "boolean":
        return rng.random() < 0.5
    if t in ("integer", "number"):
        lo = s.get("minimum", s.get("exclusiveMinimum", 0))
        hi = s.get("maximum", s.get("exclusiveMaximum", None))
        if "exclusiveMinimum" in s:
            lo = lo + 1
        if hi is None:
            hi = lo + (50 if "amount" in param or "price" in param else 10)
        if hi < lo:
            hi = lo
        v = rng.randint(int(lo), int(hi)) if hi - lo >= 1 else lo
        if t == "number" and ("amount" in param or "price" in param):
            v = float(max(int(lo) + 1, min(int(hi), rng.choice([5, 10, 20, 25, 40, 50, 75, 100]))))
        return int(v) if t == "integer" else float(v)
    if t == "array":
        item = synth_value(param.rstrip("s"), s.get("items") or {"type": "string"}, rng, reference_date)
        return [item]
    if t == "object":
        # an object whose fields the schema lists (an entity to create): its required fields, or all of them
        fields = s.get("properties") or {}
        want = s.get("required") or list(fields)
        return {k: synth_value(k, fields[k], rng, reference_date) for k in want if isinstance(fields.get(k), dict)}
    # strings
    fmt = s.get("format")
    if fmt == "date" or "date" in param:
        d = date.fromisoformat(reference_date) + timedelta(days=rng.randint(1, 20))
        return d.isoformat()
    if fmt == "date-time" or param.endswith("_at") or param.endswith("time"):
        v = _date_time(rng, reference_date)
        return _at_precision(v, s.get("pattern"), (19, 16, 10)) or v
    pat = s.get("pattern") or ""
    if re.search(r"\\d\{4\}-", pat):  # a date or date-time by its pattern, whatever the name: a real one
        fit = _at_precision(_date_time(rng, reference_date), pat, (19, 16, 10, 7))
        if fit is not None:
            return fit
    if pat:
        v = from_pattern(pat, rng)
        if v is not None:
            return v
    for key, words in _WORDS.items():
        if key in param:
            return rng.choice(words)
    return rng.choice(["notes", "summary", "draft", "general", "weekly"])


def linked_secret(snapshot: Snapshot, param: str, args: dict[str, Any]) -> Any:
    """The secret a user knows for the entities named in ``args`` (the account's owner's PIN, ...)."""
    ids = [str(v) for v in args.values() if isinstance(v, (str, int))]
    seen: set[str] = set()
    frontier = list(ids)
    for _ in range(3):
        nxt = []
        for eid in frontier:
            if eid in seen:
                continue
            seen.add(eid)
            sec = snapshot.secrets.get(eid)
            if sec and param in sec:
                return sec[param]
            rec = snapshot.entities.get(eid) or {}
            nxt.extend(str(v) for k, v in rec.items() if k.endswith("_id") and isinstance(v, (str, int)))
        frontier = nxt
    star = snapshot.secrets.get("*") or {}
    return star.get(param)


ROLE_FIELDS = ("path", "email", "symbol", "sku", "code", "url")
SEARCH_PARAMS = ("query", "q", "keyword", "keywords", "search", "term", "name_contains", "title_contains")
NAME_FIELDS = ("name", "title", "subject", "display_name", "username", "city", "category")


def observed_values(snapshot: Snapshot, param: str, lookup: bool = False) -> list[Any]:
    """Values of the sampled state that ``param`` can take.

    The field of the same name first; else, for a role-prefixed id (``origin_place_id``,
    ``target_user_id``), the values of the entity's own id field (``place_id``). For a lookup
    (read-only) tool also a field the parameter is the tail of (``address`` <- ``formatted_address``)
    and, for a search parameter, words of the names in the state, so a lookup finds something."""
    vals = snapshot.values.get(param)
    if vals:
        return vals
    for field in sorted(snapshot.values):
        if field.endswith("_id") and param.endswith("_" + field) and snapshot.values[field]:
            return snapshot.values[field]
        # a role suffix on an identifying field: path_a / path_b <- path, source_path <- path
        if (
            field in ROLE_FIELDS
            and (param.startswith(field + "_") or param.endswith("_" + field))
            and snapshot.values[field]
        ):
            return snapshot.values[field]
    if not lookup:
        return []
    for field in sorted(snapshot.values):
        if (
            field.endswith("_" + param)
            and snapshot.values[field]
            and all(isinstance(v, str) for v in snapshot.values[field])
        ):
            return snapshot.values[field]
    if param in SEARCH_PARAMS:
        words = sorted(
            {
                w
                for f in NAME_FIELDS
                for v in snapshot.values.get(f, [])
                if isinstance(v, str)
                for w in re.findall(r"[A-Za-z]{4,}", v)
            }
        )
        return words
    return []


EXAMPLE = re.compile(r"'([^'\s]{2,60})'")
ABS_PATH = re.compile(r"^/[^\s]+$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
PAIRS = (
    ("start", "end"),
    ("check_in", "check_out"),
    ("start_date", "end_date"),
    ("departure_date", "return_date"),
    ("from_date", "to_date"),
    ("starts_at", "ends_at"),
    ("start_time", "end_time"),
)


def example_shape(spec: dict[str, Any]) -> re.Pattern[str] | None:
    """The shape of the example a parameter's description gives (``e.g. 'CON-0002'``, ``like
    'ana.silva@northwind.example'``): an email, or an id's letters with its digit runs generalised."""
    desc = (_schema_of(spec).get("description") or "") if spec else ""
    for ex in EXAMPLE.findall(desc):
        if EMAIL.match(ex):
            return EMAIL
        if ex.startswith("/") and len(ex) > 1:
            return ABS_PATH
        if re.fullmatch(r"[A-Za-z]+[-_]\d+", ex):
            return re.compile("^" + re.sub(r"\d+", lambda m: rf"\d{{{len(m.group())}}}", re.escape(ex)) + "$")
    return None


def shaped_values(snapshot: Snapshot, shape: re.Pattern[str]) -> list[Any]:
    """Observed values, of any field, with the given shape (sorted fields: the same in every process)."""
    out: list[Any] = []
    for field in sorted(snapshot.values):
        for v in snapshot.values[field]:
            if isinstance(v, str) and shape.match(v) and v not in out:
                out.append(v)
    return out


def described_id_values(snapshot: Snapshot, spec: dict[str, Any]) -> list[Any]:
    """Values of the id field the description names: "Contact ids to invite" -> ``contact_id``,
    "Id of the signed-in user" -> ``user_id``, "(from list_users)" -> ``user_id``."""
    desc = _schema_of(spec).get("description") or "" if spec else ""
    for word in re.findall(r"[A-Za-z]+", desc):
        w = word.lower()
        for cand in (w, w[:-1] if w.endswith("s") else None):
            if cand and len(cand) > 2 and snapshot.values.get(f"{cand}_id"):
                return snapshot.values[f"{cand}_id"]
    return []


def described_values(snapshot: Snapshot, spec: dict[str, Any]) -> list[Any]:
    """Values of the identifying field the description opens with ("Path of the file to copy" -> ``path``)."""
    desc = _schema_of(spec).get("description") or "" if spec else ""
    for word in re.findall(r"[A-Za-z]+", desc)[:4]:
        if word.lower() in ROLE_FIELDS and snapshot.values.get(word.lower()):
            return snapshot.values[word.lower()]
    return []


def _temporal(param: str, spec: dict[str, Any]) -> bool:
    s = _schema_of(spec)
    pat = s.get("pattern") or ""
    return (
        s.get("format") in ("date", "date-time", "time")
        or r"\d{4}-\d{2}" in pat
        or "date" in param
        or "time" in param
        or param.endswith("_at")
        or param in ("month", "day", "start", "end", "check_in", "check_out", "departure", "arrival")
    )


def _fits_pattern(vals: list[Any], spec: dict[str, Any]) -> list[Any]:
    """Observed values the parameter's pattern accepts, as they are or as a slug ("Design Team" -> "design-team")."""
    pat = _schema_of(spec).get("pattern")
    if not pat:
        return vals
    out = []
    for v in vals:
        if not isinstance(v, str):
            continue
        for cand in (v, re.sub(r"[^a-z0-9_-]+", "-", v.lower()).strip("-")):
            if re.fullmatch(pat.strip("^$"), cand) and cand not in out:
                out.append(cand)
                break
    return out


class RecordIndex:
    """The records carrying each id in earlier results (the dicts with an ``*_id`` field of that value),
    in the order a depth-first walk of the results meets them.

    A dry run adds each step's result as it comes (:meth:`add`); each is walked once, when an id is
    first looked up after it was added, instead of every parameter that looks for linked values
    walking every earlier result again."""

    def __init__(self, results: list[Any] | None = None):
        self._by_id: dict[str, list[dict[str, Any]]] = {}
        self._pending: list[Any] = list(results or [])  # walked when an id is first looked up

    def add(self, data: Any) -> None:
        self._pending.append(data)

    def _walk(self, data: Any) -> None:
        by_id = self._by_id

        def walk(d: Any) -> None:
            if isinstance(d, dict):
                for key in {str(v) for k, v in d.items() if k.endswith("_id") and isinstance(v, (str, int))}:
                    by_id.setdefault(key, []).append(d)
                for v in d.values():
                    walk(v)
            elif isinstance(d, list):
                for x in d:
                    walk(x)

        walk(data)

    def carrying(self, eid: str) -> list[dict[str, Any]]:
        if self._pending:
            pending, self._pending = self._pending, []
            for data in pending:
                self._walk(data)
        return self._by_id.get(eid, [])


def _records_of(eid: str, snapshot: Snapshot, index: RecordIndex) -> list[dict[str, Any]]:
    """What is known of entity ``eid``: its sampled record, and records carrying it in earlier results."""
    return ([snapshot.entities[eid]] if eid in snapshot.entities else []) + index.carrying(eid)


@functools.lru_cache(maxsize=4096)
def _named_fields(desc: str) -> tuple[str, ...]:
    """snake_case words of a description (the fields it may point at)."""
    return tuple(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", desc))


def _linked(
    param: str,
    named: tuple[str, ...],
    numeric: bool,
    args: dict[str, Any],
    order: list[str],
    snapshot: Snapshot,
    context: RecordIndex,
) -> Any:
    """A value the entities already named in ``args`` determine: the listing's own ``seller_id``,
    or, for a number (``numeric``), a field the description points at (``named``: an amount "at least
    the listing's min_next_bid")."""
    for p in order:
        v = args.get(p)
        if p == param or not isinstance(v, str) or not p.endswith("_id"):
            continue
        for rec in _records_of(v, snapshot, context):
            val = rec.get(param)
            # the record's own id is not a link (a user record's user_id is that user, not "the" user_id)
            if (
                isinstance(val, (str, int, float))
                and not isinstance(val, bool)
                and param.endswith("_id")
                and str(val) != v
            ):
                return val
            if numeric:
                for w in named:
                    if isinstance(rec.get(w), (int, float)) and not isinstance(rec.get(w), bool):
                        return rec[w]
    return None


# fields that tell one entity from another: a new payee or contact takes none of an existing one's together (a copy is
# refused)
IDENTIFYING = re.compile("|".join((*ROLE_FIELDS, "number", "phone", "username", "handle", "iban")))


def _together(
    args: dict[str, Any],
    chosen: list[tuple[str, _ParamPlan]],
    snapshot: Snapshot,
    rng: random.Random,
    memo: ValueMemo,
    fixed: dict[str, Any] | None = None,
) -> None:
    """Text values drawn from the state come from one record where a record holds two or more of them: a new
    listing's title, description, category and condition are one listing's, never a golf set's title with a
    watch's description, nor a description "in fair condition" with the condition (an enum) set to good; where an
    earlier result gave one of them (``fixed``: a description carried over), the others are that record's too (in
    place)."""
    free = tuple(
        p
        for p, plan in chosen
        if plan.use_vals
        and not p.endswith(("_id", "_ids"))
        and isinstance(args.get(p), str)
        and not IDENTIFYING.search(p)
    )
    # a text value an earlier result gave (a description carried over) anchors the record the others come from
    anchors = {
        p: v
        for p, v in (fixed or {}).items()
        if isinstance(v, str) and not p.endswith(("_id", "_ids")) and not IDENTIFYING.search(p)
    }
    if len(free) + len(anchors) < 2 or not free:
        return
    recs = memo.records_with(snapshot, free + tuple(anchors))
    recs = [r for r in recs if all(r.get(p) == v for p, v in anchors.items())] if anchors else recs
    if not recs:
        return
    rec = rng.choice(recs)
    vals = dict(chosen)
    for p in free:
        if isinstance(rec.get(p), str) and rec[p] in vals[p].vals:
            args[p] = rec[p]
    for p, plan in chosen:  # and its choices too: never "... in fair condition" with the condition set to good
        enum = _schema_of(plan.spec).get("enum") or []
        if p in args and p not in free and isinstance(rec.get(p), str) and rec[p] in enum:
            args[p] = rec[p]


def _distinct_ids(args: dict[str, Any], chosen: list[tuple[str, _ParamPlan]], rng: random.Random) -> None:
    """An id drawn from the state that equals another id argument of the call (a route from a place to
    itself, a user following themselves) is drawn again from the other values, and a list drawn from the
    state shares no value with another list of the call (a message's cc never repeats its to) (in place)."""
    for p, plan in reversed(chosen):
        if plan.array_vals and isinstance(args.get(p), list):
            others = {str(x) for q, v in args.items() if q != p and isinstance(v, list) for x in v}
            rest = [v for v in plan.array_vals if str(v) not in others]
            if others & {str(x) for x in args[p]} and rest:
                args[p] = rng.sample(rest, k=min(len(rest), len(args[p])))
            continue
        if not p.endswith("_id") or not plan.use_vals:
            continue
        others = {str(v) for q, v in args.items() if q != p and q.endswith("_id")}
        if str(args.get(p)) in others:
            rest = [v for v in plan.vals if str(v) not in others]
            if rest:
                args[p] = rng.choice(rest)


def _pair_times(args: dict[str, Any], rng: random.Random) -> None:
    """An end after its start (and a check-out after the check-in), as a person would give them."""
    for a, b in PAIRS:
        va, vb = args.get(a), args.get(b)
        if not (isinstance(va, str) and isinstance(vb, str)):
            continue
        try:
            if "T" in va:
                from datetime import datetime

                fmt = "%Y-%m-%dT%H:%M:%S" if va.count(":") == 2 else "%Y-%m-%dT%H:%M"
                start = datetime.strptime(va, fmt)
                args[b] = (start + timedelta(minutes=rng.choice([30, 45, 60, 90]))).strftime(fmt)
            else:
                start_d = date.fromisoformat(va)
                args[b] = (start_d + timedelta(days=rng.randint(1, 4))).isoformat()
        except ValueError:
            continue


def _array_candidates(param: str, spec: dict[str, Any], snapshot: Snapshot) -> list[Any] | None:
    """The observed values an array of ids or addresses (``attendee_ids``, ``to``) draws from, if it is one."""
    s = _schema_of(spec)
    if s.get("type") != "array":
        return None
    items = s.get("items") or {}
    if items.get("type") not in (None, "string") or "enum" in items:
        return None
    singular = param[:-1] if param.endswith("s") else param
    vals = observed_values(snapshot, singular) or described_id_values(snapshot, spec)
    if not vals:
        shape = example_shape(spec)
        vals = shaped_values(snapshot, shape) if shape else []
    return vals or None


OWN_NAMES = ("name", "display_name", "full_name")


def _names_of_kind(tool: ToolSpec, p: str, snapshot: Snapshot) -> list[Any]:
    """The ``p`` values of the sampled entities of the kind a writing tool names (``create_company``: the
    companies' names), so a new company is named like a company, not like a deal; [] when none is known."""
    kinds = [w for w in tool.name.split("_") if len(w) > 2]
    out = []
    for eid, rec in snapshot.entities.items():
        if any(rec.get(f"{k}_id") == eid or rec.get(f"{k.rstrip('s')}_id") == eid for k in kinds):
            v = rec.get(p)
            if isinstance(v, str) and v and v not in out:
                out.append(v)
    return sorted(out)


class _ParamPlan(NamedTuple):
    """Where a parameter's value comes from, for one tool and one snapshot (nothing here is drawn)."""

    spec: dict[str, Any]
    vals: list[Any]  # observed values to choose from (used when ``use_vals``)
    use_vals: bool
    array_vals: list[Any] | None  # else: observed values for an array parameter; else the value is synthesized
    named: tuple[str, ...]  # fields the description points at (:func:`_linked`)
    numeric: bool


def resolve_refs(spec: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """``spec`` with its ``$ref``s to ``#/$defs/...`` replaced by the definitions (to a depth of 6)."""
    if depth > 6:
        return spec
    if isinstance(spec, dict):
        if "$ref" in spec and spec["$ref"].split("/")[-1] in defs:
            rest = {k: v for k, v in spec.items() if k != "$ref"}
            return resolve_refs({**defs[spec["$ref"].split("/")[-1]], **rest}, defs, depth + 1)
        return {k: resolve_refs(v, defs, depth + 1) for k, v in spec.items()}
    if isinstance(spec, list):
        return [resolve_refs(v, defs, depth + 1) for v in spec]
    return spec


def _param_plan(tool: ToolSpec, p: str, props: dict[str, Any], snapshot: Snapshot) -> _ParamPlan:
    spec = props.get(p) or {}
    if tool.output_schema is None and tool.input_schema.get("$defs"):
        # a tool described by its input schema only (a third-party server's): the objects its arguments
        # hold are built from their definitions (tools with an output schema keep their synthesis as it was)
        spec = resolve_refs(spec, tool.input_schema["$defs"])
    # a writer's dates and times are new ones (after the reference date), not copies of the state's past ones
    fresh_time = not tool.read_only and _temporal(p, spec)
    vals = [] if fresh_time else _fits_pattern(observed_values(snapshot, p, tool.read_only), spec)
    if not vals and not fresh_time and _schema_of(spec).get("type") in (None, "string"):
        shape = example_shape(spec)
        vals = (
            shaped_values(snapshot, shape)
            if shape
            else described_id_values(snapshot, spec)
            if p.endswith("_id")
            else described_values(snapshot, spec)
        )
    if vals and not tool.read_only and p in OWN_NAMES:
        vals = _names_of_kind(tool, p, snapshot) or vals
    use_vals = bool(vals) and "enum" not in _schema_of(spec)
    desc = _schema_of(spec).get("description") or ""
    array_vals = None if use_vals else _array_candidates(p, spec, snapshot)
    if tool.output_schema is None and not use_vals and not array_vals and "enum" not in _schema_of(spec):
        spec, vals, array_vals = hinted(tool, p, _schema_of(spec))
        use_vals = bool(vals)
    return _ParamPlan(
        spec,
        vals,
        use_vals,
        array_vals,
        tuple(w for w in _named_fields(desc) if w != p),
        _schema_of(spec).get("type") in ("number", "integer"),
    )


class _ToolFacts(NamedTuple):
    props: dict[str, Any]
    required: list[str]
    optional: list[str]
    sensitive: frozenset[str]


def _tool_facts(tool: ToolSpec) -> _ToolFacts:
    props, required = tool.properties, tool.required
    return _ToolFacts(props, required, [p for p in props if p not in required], frozenset(tool.sensitive))


class ValueMemo:
    """What :func:`fill_args` works out per snapshot, tool and parameter before drawing anything (the
    candidate values, the schema facts), kept across the calls of a stage: the query stage fills the
    same tools against the same snapshot tens of thousands of times. Holds the snapshots and tools it
    has seen, so their ids stay theirs; the draws are the ones made without a memo."""

    def __init__(self) -> None:
        self._facts: dict[int, tuple[ToolSpec, _ToolFacts]] = {}
        self._plans: dict[tuple[int, int, str], tuple[Snapshot, ToolSpec, _ParamPlan]] = {}
        self._records: dict[tuple[int, tuple[str, ...]], tuple[Snapshot, list[dict[str, Any]]]] = {}

    def facts(self, tool: ToolSpec) -> _ToolFacts:
        hit = self._facts.get(id(tool))
        if hit is None or hit[0] is not tool:
            hit = self._facts[id(tool)] = (tool, _tool_facts(tool))
        return hit[1]

    def records_with(self, snapshot: Snapshot, fields: tuple[str, ...]) -> list[dict[str, Any]]:
        """The snapshot's records holding text for at least two of ``fields``."""
        key = (id(snapshot), fields)
        hit = self._records.get(key)
        if hit is None or hit[0] is not snapshot:
            recs = [
                r
                for r in snapshot.entities.values()
                if sum(1 for f in fields if isinstance(r.get(f), str) and r[f]) >= 2
            ]
            hit = self._records[key] = (snapshot, recs)
        return hit[1]

    def plan(self, tool: ToolSpec, p: str, props: dict[str, Any], snapshot: Snapshot) -> _ParamPlan:
        key = (id(snapshot), id(tool), p)
        hit = self._plans.get(key)
        if hit is None or hit[0] is not snapshot or hit[1] is not tool:
            hit = self._plans[key] = (snapshot, tool, _param_plan(tool, p, props, snapshot))
        return hit[2]


def fill_args(
    tool: ToolSpec,
    snapshot: Snapshot,
    rng: random.Random,
    fixed: dict[str, Any] | None = None,
    optional_rate: float = 0.0,
    reference_date: str = QueryConfig.model_fields["reference_date"].default,
    pick: dict[str, Any] | None = None,
    context: list[Any] | RecordIndex | None = None,
    memo: ValueMemo | None = None,
) -> dict[str, Any]:
    """Arguments for ``tool``: fixed values, then sampled state values, then schema synthesis.

    State values are looked up by name, by role (``origin_place_id`` <- ``place_id``) and by the
    shape of the description's example (``e.g. 'CON-0002'``); a value the named entities
    determine (the listing's seller) wins over a random one; a writer with only optional fields
    to change gets at least one (an update that changes nothing is refused); an end follows its
    start. ``context`` holds earlier results in the conversation (entities the snapshot lacks), as a list
    or as a :class:`RecordIndex` the caller adds each result to. ``memo``: a :class:`ValueMemo` shared by the
    calls of a stage (the same arguments, less work; without one, a fresh one)."""
    args: dict[str, Any] = {}
    fixed = dict(fixed or {})
    memo = memo if memo is not None else ValueMemo()
    props, required, optional, sens = memo.facts(tool)
    wanted = list(required) + [p for p in optional if p in fixed or rng.random() < optional_rate]
    # a writer with only optional fields gets one (an update changing nothing is refused); not a third-party one with
    # required ones
    if (
        not tool.read_only
        and optional
        and not any(p in wanted for p in optional)
        and not (required and tool.output_schema is None)
    ):
        wanted.append(rng.choice(optional))
    ctx = context if isinstance(context, RecordIndex) else RecordIndex(list(context or []))
    chosen: list[tuple[str, _ParamPlan]] = []
    for p in wanted:
        if p in fixed:
            # one value from an earlier result, for a parameter that takes a list of them (``names``)
            is_list = not isinstance(fixed[p], list) and _schema_of(props.get(p) or {}).get("type") == "array"
            args[p] = [fixed[p]] if is_list else fixed[p]
            continue
        if p in sens:
            continue
        if pick is not None and p in pick:
            args[p] = pick[p]
            continue
        plan = memo.plan(tool, p, props, snapshot)
        chosen.append((p, plan))
        if plan.use_vals:
            args[p] = rng.choice(plan.vals)
        elif plan.array_vals:
            args[p] = rng.sample(plan.array_vals, k=min(len(plan.array_vals), rng.choice([1, 1, 2])))
        else:
            args[p] = synth_value(p, plan.spec, rng, reference_date)
    order = [p for p in wanted if p in fixed] + [p for p in wanted if p not in fixed]
    for p, plan in chosen:
        v = _linked(p, plan.named, plan.numeric, args, order, snapshot, ctx)
        if v is not None:
            args[p] = v
    _together(args, chosen, snapshot, rng, memo, fixed)
    _distinct_ids(args, chosen, rng)
    _pair_times(args, rng)
    if (
        tool.output_schema is None
    ):  # a third-party tool: SQL composed from the schema, record fields from observed values
        fill_sql(tool, args, snapshot.tables, rng, set(fixed))
        known_fields(args, snapshot.values, rng, set(fixed), tool.read_only)
        new_paths(tool, args, snapshot.values, rng, set(fixed))
    for p in sens:
        if p in wanted and p not in args:
            v = linked_secret(snapshot, p, args)
            if v is None:
                v = synth_value(p, props.get(p) or {}, rng, reference_date)
            args[p] = v
    return args
