"""Argument values for tool calls: from the sampled state first, synthesized from the schema last."""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from typing import Any

from pipeline.records import Snapshot, ToolSpec

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
}


def _digits(rng: random.Random, n: int) -> str:
    return "".join(str(rng.randint(0, 9)) for _ in range(n))


def from_pattern(pattern: str, rng: random.Random) -> str | None:
    """A string for simple anchored patterns (\\d{n}, [A-Z]{n}, literals, dates); None if unsure."""
    p = pattern.strip("^$")
    if p in (r"\d{4}-\d{2}-\d{2}",):
        return "2026-03-09"
    if p in (r"\d{2}:\d{2}", r"([01]\d|2[0-3]):[0-5]\d"):
        return "10:00"
    if re.fullmatch(r"\\d\{4\}-\\d\{2\}", p):
        return "2026-03"
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


def synth_value(param: str, spec: dict[str, Any], rng: random.Random, reference_date: str = "2026-03-02") -> Any:
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
        return {}
    # strings
    fmt = s.get("format")
    if fmt == "date" or "date" in param:
        d = date.fromisoformat(reference_date) + timedelta(days=rng.randint(1, 20))
        return d.isoformat()
    if fmt == "date-time" or param.endswith("_at") or param.endswith("time"):
        d = date.fromisoformat(reference_date) + timedelta(days=rng.randint(1, 20))
        return f"{d.isoformat()}T{rng.choice(['09', '10', '14', '16'])}:00:00"
    if "pattern" in s:
        v = from_pattern(s["pattern"], rng)
        if v is not None:
            return v
    for key, words in _WORDS.items():
        if key in param:
            return rng.choice(words)
    base = rng.choice(["alpha", "delta", "notes", "summary", "draft"])
    return base


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


def fill_args(
    tool: ToolSpec,
    snapshot: Snapshot,
    rng: random.Random,
    fixed: dict[str, Any] | None = None,
    optional_rate: float = 0.0,
    reference_date: str = "2026-03-02",
    pick: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Arguments for ``tool``: fixed values, then sampled state values, then schema synthesis."""
    args: dict[str, Any] = {}
    fixed = dict(fixed or {})
    props = tool.properties
    wanted = list(tool.required) + [p for p in props if p not in tool.required and (p in fixed or rng.random() < optional_rate)]
    sens = set(tool.sensitive)
    for p in wanted:
        if p in fixed:
            args[p] = fixed[p]
            continue
        if p in sens:
            continue
        if pick is not None and p in pick:
            args[p] = pick[p]
            continue
        vals = snapshot.values.get(p)
        spec = props.get(p) or {}
        if vals and "enum" not in _schema_of(spec):
            args[p] = rng.choice(vals)
        else:
            args[p] = synth_value(p, spec, rng, reference_date)
    for p in sens:
        if p in wanted and p not in args:
            v = linked_secret(snapshot, p, args)
            if v is None:
                v = synth_value(p, props.get(p) or {}, rng, reference_date)
            args[p] = v
    return args


def find_field(data: Any, field: str) -> Any:
    """The first value of ``field`` anywhere in a result (depth first)."""
    if isinstance(data, dict):
        if field in data and isinstance(data[field], (str, int, float)) and not isinstance(data[field], bool):
            return data[field]
        for v in data.values():
            r = find_field(v, field)
            if r is not None:
                return r
    elif isinstance(data, list):
        for item in data:
            r = find_field(item, field)
            if r is not None:
                return r
    return None


def output_fields(schema: dict[str, Any] | None) -> set[str]:
    """Every scalar field name an output schema can carry (nested objects, arrays, $defs)."""
    out: set[str] = set()
    if not schema:
        return out
    defs = schema.get("$defs") or {}

    def visit(s: Any, depth: int = 0) -> None:
        if depth > 6 or not isinstance(s, dict):
            return
        if "$ref" in s:
            visit(defs.get(s["$ref"].split("/")[-1]), depth + 1)
        for k, v in (s.get("properties") or {}).items():
            out.add(k)
            visit(v, depth + 1)
        for key in ("items", "additionalProperties"):
            if isinstance(s.get(key), dict):
                visit(s[key], depth + 1)
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in s.get(key) or []:
                visit(sub, depth + 1)

    visit(schema)
    return out
