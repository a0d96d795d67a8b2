"""What a tool's words say about a parameter's values, for tools described by their text only.

Published servers state ranges and allowed values in prose rather than in the JSON schema:
"pedal_position is between 0 (released) and 1 (fully pressed)", "fan speed (0-5)", "must be >= 1",
"Lock or unlock doors by name: driver, passenger, rear_left, rear_right". :func:`range_hint` reads the
range (the schema's ``minimum``/``maximum`` first, then the parameter's description, then the sentence of
the tool's description that names the parameter); :func:`listed_values` reads a list of allowed names.
:mod:`pipeline.language.value_plans` uses both (through :func:`hinted`) when it plans a value for a tool without an
output schema.
"""

from __future__ import annotations

import re
from typing import Any

NUM = r"(-?\d+(?:\.\d+)?)"
# "between 0 (released) and 1", "from 1 to 5", "0-100", "(0 - 5)", "0 to 10"
_BETWEEN = re.compile(rf"between\s+{NUM}(?:\s*\([^)]*\))?\s+and\s+{NUM}", re.I)
_FROM_TO = re.compile(rf"from\s+{NUM}(?:\s*\([^)]*\))?\s+to\s+{NUM}", re.I)
_DASH = re.compile(rf"(?<![\w.-]){NUM}\s*(?:-|–|\.\.|to)\s*{NUM}(?![\w.])")
_LOWER = re.compile(rf"(?:>=|≥|at least|minimum(?: of)?|min(?:imum)?:?|no less than)\s*{NUM}", re.I)
_UPPER = re.compile(rf"(?:<=|≤|at most|maximum(?: of)?|max(?:imum)?:?|up to|no more than)\s*{NUM}", re.I)
_GREATER = re.compile(rf"(?:>|greater than|more than|above)\s*{NUM}", re.I)
# "by name: driver, passenger, rear_left", "one of: a, b, c", "one of a, b or c"
_LISTED = re.compile(
    r"(?:by name|one of|either|values?|options?|choices?|allowed|valid|names?)\s*(?:are|is)?\s*:?\s*"
    r"((?:[A-Za-z][\w-]*\s*(?:,|\bor\b|\band\b)\s*)+[A-Za-z][\w-]*)",
    re.I,
)


def _mentions(tool_desc: str, param: str, title: str = "") -> list[str]:
    """What the sentences of a tool's description that name the parameter (``fan_speed``, ``fan speed``, its
    title) say after its name."""
    names = {param.lower(), param.replace("_", " ").lower()} | ({title.lower()} if title else set())
    out = []
    for sentence in re.split(r"(?<=[.;])\s+", tool_desc):
        low = sentence.lower()
        for n in names:
            i = low.find(n)
            if i >= 0:
                out.append(sentence[i + len(n) :])  # what follows the name is what is said about it
                break
    return out


def _range_in(text: str) -> tuple[float | None, float | None]:
    for pat in (_BETWEEN, _FROM_TO, _DASH):
        m = pat.search(text)
        if m:
            lo, hi = float(m.group(1)), float(m.group(2))
            if lo <= hi:
                return lo, hi
    lo = hi = None
    if m := _LOWER.search(text):
        lo = float(m.group(1))
    elif m := _GREATER.search(text):
        lo = float(m.group(1)) + 1
    if m := _UPPER.search(text):
        hi = float(m.group(1))
    return lo, hi


def texts_about(param: str, spec: dict[str, Any], tool_desc: str = "", clause: bool = False) -> list[str]:
    """What is said about a parameter: its own description, then what the tool's description says of it
    (with ``clause``, only up to the next comma: "temperature, unit, fan speed (0-5)" gives temperature no range)."""
    out = [str(spec.get("description") or "")]
    out += [
        re.split(r"[,;]", t, maxsplit=1)[0] if clause else t
        for t in _mentions(tool_desc or "", param, str(spec.get("title") or ""))
    ]
    return [t for t in out if t.strip()]


def range_hint(param: str, spec: dict[str, Any], tool_desc: str = "") -> tuple[float | None, float | None]:
    """(low, high) a number parameter may take: the schema's bounds, else the first range the words state
    about it; ``None`` for a side nothing states."""
    lo = spec.get("minimum", spec.get("exclusiveMinimum"))
    hi = spec.get("maximum", spec.get("exclusiveMaximum"))
    if lo is not None or hi is not None:
        return lo, hi
    for text in texts_about(param, spec, tool_desc, clause=True):
        lo, hi = _range_in(text)
        if lo is not None or hi is not None:
            return lo, hi
    return None, None


def listed_values(param: str, spec: dict[str, Any], tool_desc: str = "") -> list[str]:
    """The names the words list as a parameter's allowed values ("doors by name: driver, passenger, ..."),
    at least two of them; [] when none are listed."""
    for text in texts_about(param, spec, tool_desc):
        m = _LISTED.search(text)
        if m:
            vals = [v for v in re.split(r"\s*(?:,|\bor\b|\band\b)\s*", m.group(1)) if v]
            if len(vals) >= 2:
                return vals
    return []


def hinted(tool: Any, p: str, s: dict[str, Any]) -> tuple[dict[str, Any], list[Any], list[Any] | None]:
    """For a tool known by its words only, what they say of a parameter (schema ``s``, its non-null branch)
    nothing observed fills: (the schema with the range a number is stated to lie in, the names listed as
    allowed or else its text default as the values to draw, for an array the listed names as its items)."""
    if s.get("type") in ("number", "integer"):
        return bounded(s, *range_hint(p, s, tool.description)), [], None
    listed = listed_values(p, s, tool.description)
    if listed:
        return s, ([] if s.get("type") == "array" else listed), (listed if s.get("type") == "array" else None)
    default = s.get("default")
    return s, ([default] if isinstance(default, str) and default else []), None


OWN = ("name", "title", "display_name", "full_name")


def known_fields(
    args: dict[str, Any],
    values: dict[str, list[Any]],
    rng: Any,
    fixed: set[str],
    read_only: bool,
    names_only: bool = False,
) -> None:
    """The text fields of the records a third-party tool's arguments hold (``relations: [{from, to, relationType}]``,
    ``observations: [{entityName, contents}]``), set to observed values of the same field (``from``, ``relationType``)
    or, for a field naming a thing (``entityName``), to an observed name; a writer's own ``name`` stays new.
    ``names_only``: only the fields and lists naming things (``entityName``, ``entityNames``), for a tool whose
    output schema says what it returns (server-memory's ``add_observations`` names an entity all the same)."""

    def visit(x: Any) -> None:
        if isinstance(x, list):
            for item in x:
                visit(item)
        elif isinstance(x, dict):
            for k, v in x.items():
                if isinstance(v, (dict, list)):
                    visit(v)
                    continue
                if not isinstance(v, str) or (k in OWN and not read_only):
                    continue
                named = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", k).lower()
                names_a_thing = named.endswith("_name") and named != "name"
                if names_only and not names_a_thing:
                    continue
                vals = values.get(k) or (values.get("name") if names_a_thing else None)
                vals = [c for c in vals or [] if isinstance(c, str)]
                if vals:
                    x[k] = rng.choice(vals)

    for p, v in args.items():
        if p not in fixed and isinstance(v, (dict, list)):
            visit(v)
        # a list of the names of things (``entityNames: [...]``, ``file_names``): observed names, as a record's
        # ``entityName`` gets
        plural = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", p).lower()
        if p not in fixed and isinstance(v, list) and plural.endswith("_names") and all(isinstance(x, str) for x in v):
            names = sorted({c for c in values.get("name") or [] if isinstance(c, str)})
            if names:
                args[p] = rng.sample(names, k=min(len(v) or 1, len(names)))


NEW_DIRS = ["drafts", "reports-2026", "photos", "invoices", "meeting-notes"]


def new_paths(tool: Any, args: dict[str, Any], values: dict[str, list[Any]], rng: Any, fixed: set[str]) -> None:
    """The path a third-party tool that makes a thing (``create_directory``, ``mkdir``) is given is a new one,
    beside the observed folders, not a file or folder that already exists."""
    if not re.match(r"(create|make|new|mkdir|add)(_|$)", tool.name) or "path" not in args or "path" in fixed:
        return
    known = {str(v) for v in values.get("path", [])}
    folders = sorted(v for v in known if not re.search(r"\.[A-Za-z0-9]{1,6}$", v))
    base = rng.choice(NEW_DIRS)
    parent = rng.choice(folders + [""] * max(1, len(folders))) if folders else ""
    path = f"{parent.rstrip('/')}/{base}" if parent else base
    args["path"] = path if path not in known else path + "-new"


def bounded(spec: dict[str, Any], lo: float | None, hi: float | None) -> dict[str, Any]:
    """``spec`` with the stated bounds as ``minimum``/``maximum`` (what
    :func:`pipeline.language.schema_values.synth_value` reads)."""
    out = dict(spec)
    if lo is not None:
        out["minimum"] = lo
    if hi is not None:
        out["maximum"] = hi
    return out
