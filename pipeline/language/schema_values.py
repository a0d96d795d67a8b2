"""Values made up from a parameter's JSON schema alone, for what the sampled state does not name: an enum member, a
number within bounds, a date after the reference date, a string a simple pattern accepts, a word from a short list by
the parameter's name (:func:`synth_value`); and the schema read as a value needs it (:func:`schema_of`,
:func:`resolve_refs`)."""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from typing import Any

from pipeline.core.config import QueryConfig

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


def schema_of(spec: dict[str, Any]) -> dict[str, Any]:
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
    s = schema_of(spec)
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
