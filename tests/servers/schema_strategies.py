"""A small JSON Schema -> hypothesis strategy generator for MCP tool input schemas.

It covers what pydantic emits for tool parameters: ``string`` (``pattern``, ``minLength``,
``maxLength``, ``format: date/date-time``), ``enum``/``const``, ``number``/``integer`` with
(exclusive) ranges and ``multipleOf``, ``boolean``, ``null``, ``array`` (``items``,
``minItems``/``maxItems``, ``uniqueItems``), ``object`` (``properties``/``required``; optional
properties drawn sometimes), ``anyOf``/``oneOf`` (``X | None``), ``allOf`` and local ``$ref``
into ``$defs``. Everything it draws is valid against the schema.

*Hints* bias strings toward real values: ``hints`` maps a field name (``account_id``) to values
observed in the server's read-only outputs. A string property whose name matches a hinted field
(exactly, by ``_id`` suffix such as ``from_account_id`` -> ``account_id``, or the singular of an
array property such as ``account_ids``) draws mostly from those values, so calls reach the
handlers instead of stopping at "not found".
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

# Readable ASCII (no control characters): the servers' handlers see text a model could write.
ALPHABET = string.ascii_letters + string.digits + " -_.,:@/'"
DEFAULT_MAX_STR = 24
DEFAULT_NUM_RANGE = 1e6  # unbounded numbers are drawn from [-R, R]: realistic, still schema-valid
DEFAULT_INT_RANGE = 10_000
MAX_EXTRA_ITEMS = 3

_JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(ALPHABET, max_size=12))
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(string.ascii_lowercase, min_size=1, max_size=8), inner, max_size=3),
    ),
    max_leaves=6,
)


def singular(name: str) -> str:
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith("ses") or name.endswith("xes"):
        return name[:-2]
    if name.endswith("s") and not name.endswith("ss"):
        return name[:-1]
    return name


def hint_values(name: str | None, hints: Mapping[str, Sequence[Any]] | None) -> list[Any]:
    """Observed values for a property called ``name`` (exact, ``*_<key>`` suffix of an id, singular)."""
    if not name or not hints:
        return []
    for cand in (name, singular(name)):
        if hints.get(cand):
            return list(hints[cand])
    best_key, best_vals = "", []
    for key, vals in hints.items():
        if (
            vals
            and key.endswith("_id")
            and len(key) > len(best_key)
            and any(n.endswith("_" + key) for n in (name, singular(name)))
        ):
            best_key, best_vals = key, list(vals)
    if best_vals:
        return best_vals
    # "bid_id" from a "leading_bid_id" output field, "address" from "formatted_address"
    return [v for key, vals in sorted(hints.items()) if key.endswith("_" + name) for v in vals]


class SchemaStrategies:
    """Strategies for the schemas of one document (a tool's input schema with its ``$defs``)."""

    def __init__(self, root: Mapping[str, Any], hints: Mapping[str, Sequence[Any]] | None = None):
        self.root = root
        self.hints = hints or {}

    # -- entry point
    def for_schema(
        self, schema: Mapping[str, Any] | bool, name: str | None = None, depth: int = 0
    ) -> st.SearchStrategy[Any]:
        if schema is True or schema == {}:
            return _JSON_VALUES
        if schema is False:
            return st.nothing()
        schema = self._deref(schema)
        if depth > 6:
            return st.nothing()
        if "allOf" in schema:
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                part = self._deref(part)
                for k, v in part.items():
                    if k == "properties":
                        merged.setdefault("properties", {}).update(v)
                    elif k == "required":
                        merged["required"] = sorted(set(merged.get("required", [])) | set(v))
                    else:
                        merged.setdefault(k, v)
            return self.for_schema(merged, name, depth + 1)
        if "const" in schema:
            return st.just(schema["const"])
        if "enum" in schema:
            return st.sampled_from(list(schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                branches = list(schema[key])
                base = {k: v for k, v in schema.items() if k not in (key, "default", "description", "title")}
                non_null = [b for b in branches if self._deref(b).get("type") != "null"]
                has_null = len(non_null) < len(branches)
                strats = [self.for_schema({**base, **self._deref(b)}, name, depth + 1) for b in non_null]
                if key == "oneOf" and len(non_null) > 1:
                    # oneOf needs exactly one match: keep values valid against exactly one branch
                    return self._one_of_exact(non_null, strats, has_null)
                if has_null:
                    strats.append(st.none())
                return st.one_of(*strats) if strats else st.none()
        typ = schema.get("type")
        if isinstance(typ, list):
            return st.one_of(*[self.for_schema({**schema, "type": t}, name, depth + 1) for t in typ])
        if typ is None:
            if "properties" in schema:
                typ = "object"
            elif "items" in schema:
                typ = "array"
            else:
                return _JSON_VALUES
        return getattr(self, f"_{typ}")(schema, name, depth)

    def tool_arguments(self) -> st.SearchStrategy[dict[str, Any]]:
        """Arguments of the tool whose input schema is the root."""
        schema = dict(self.root)
        schema.setdefault("type", "object")
        return self.for_schema(schema)

    # -- helpers
    def _deref(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        seen = 0
        while isinstance(schema, Mapping) and "$ref" in schema:
            ref = schema["$ref"]
            if not ref.startswith("#/"):
                raise ValueError(f"only local $ref is supported, got {ref!r}")
            node: Any = self.root
            for part in ref[2:].split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            extra = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**node, **extra}
            seen += 1
            if seen > 20:
                raise ValueError(f"$ref cycle at {ref!r}")
        return schema

    def _one_of_exact(
        self, branches: list[Any], strats: list[st.SearchStrategy[Any]], has_null: bool
    ) -> st.SearchStrategy[Any]:
        try:
            from jsonschema import Draft202012Validator
        except ImportError:  # pragma: no cover
            return st.one_of(*strats)
        validators = [Draft202012Validator({**self._deref(b), "$defs": self.root.get("$defs", {})}) for b in branches]
        out = st.one_of(*strats).filter(lambda v: sum(1 for va in validators if va.is_valid(v)) == 1)
        return st.one_of(out, st.none()) if has_null else out

    # -- types
    def _null(self, schema: Mapping[str, Any], name: str | None, depth: int) -> st.SearchStrategy[Any]:
        return st.none()

    def _boolean(self, schema: Mapping[str, Any], name: str | None, depth: int) -> st.SearchStrategy[Any]:
        return st.booleans()

    def _string(self, schema: Mapping[str, Any], name: str | None, depth: int) -> st.SearchStrategy[Any]:
        lo = int(schema.get("minLength", 0))
        hi = schema.get("maxLength")
        hi = int(hi) if hi is not None else None
        pattern = schema.get("pattern")
        fmt = schema.get("format")

        def fits(v: Any) -> bool:
            if not isinstance(v, str) or len(v) < lo or (hi is not None and len(v) > hi):
                return False
            return not pattern or re.search(pattern, v) is not None

        if pattern:
            alphabet = "".join(sorted(set(ALPHABET) | {c for c in pattern if c.isprintable() and c.isascii()}))
            generic = st.from_regex(pattern, fullmatch=True, alphabet=alphabet).filter(fits)
            if _looks_like_date(pattern):
                generic = st.one_of(_dates().filter(fits), generic)
        elif fmt == "date":
            generic = _dates()
        elif fmt == "date-time":
            generic = st.datetimes(min_value=_dt.datetime(2020, 1, 1), max_value=_dt.datetime(2030, 12, 31)).map(
                lambda d: d.replace(microsecond=0).isoformat()
            )
        elif fmt == "email":
            generic = st.from_regex(r"\A[a-z]{1,8}\.[a-z]{1,8}@example\.com\Z")
        else:
            generic = st.text(ALPHABET, min_size=lo, max_size=hi if hi is not None else max(lo, DEFAULT_MAX_STR))
        observed = [v for v in hint_values(name, self.hints) if fits(v)]
        if observed:
            real = st.sampled_from(observed)
            # mostly real values (4 in 5), sometimes anything valid; the simplest draw is a real one
            return st.sampled_from((False, False, False, False, True)).flatmap(
                lambda anything: generic if anything else real
            )
        return generic

    def _integer(self, schema: Mapping[str, Any], name: str | None, depth: int) -> st.SearchStrategy[Any]:
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if "exclusiveMinimum" in schema and not isinstance(schema["exclusiveMinimum"], bool):
            lo = max(lo if lo is not None else -math.inf, math.floor(schema["exclusiveMinimum"]) + 1)
        if "exclusiveMaximum" in schema and not isinstance(schema["exclusiveMaximum"], bool):
            hi = min(hi if hi is not None else math.inf, math.ceil(schema["exclusiveMaximum"]) - 1)
        lo = int(math.ceil(lo)) if lo is not None and lo != -math.inf else None
        hi = int(math.floor(hi)) if hi is not None and hi != math.inf else None
        if lo is None and hi is None:
            lo, hi = -DEFAULT_INT_RANGE, DEFAULT_INT_RANGE
        elif lo is None:
            lo = hi - DEFAULT_INT_RANGE  # type: ignore[operator]
        elif hi is None:
            hi = lo + DEFAULT_INT_RANGE
        strat = st.integers(lo, hi)
        mult = schema.get("multipleOf")
        if mult:
            strat = st.integers(math.ceil(lo / mult), math.floor(hi / mult)).map(lambda k: int(k * mult))
        if lo <= 0 and hi >= 100:
            return st.one_of(st.integers(max(lo, 0), min(hi, 100)), strat)  # mostly small, realistic values
        return strat

    def _number(self, schema: Mapping[str, Any], name: str | None, depth: int) -> st.SearchStrategy[Any]:
        lo, hi = schema.get("minimum"), schema.get("maximum")
        excl_lo = excl_hi = False
        if "exclusiveMinimum" in schema and not isinstance(schema["exclusiveMinimum"], bool):
            if lo is None or schema["exclusiveMinimum"] >= lo:
                lo, excl_lo = schema["exclusiveMinimum"], True
        if "exclusiveMaximum" in schema and not isinstance(schema["exclusiveMaximum"], bool):
            if hi is None or schema["exclusiveMaximum"] <= hi:
                hi, excl_hi = schema["exclusiveMaximum"], True
        if lo is None and hi is None:
            lo, hi = -DEFAULT_NUM_RANGE, DEFAULT_NUM_RANGE
        elif lo is None:
            lo = hi - DEFAULT_NUM_RANGE
        elif hi is None:
            hi = lo + DEFAULT_NUM_RANGE
        mult = schema.get("multipleOf")
        if mult:
            k_lo = math.floor(lo / mult) + 1 if excl_lo else math.ceil(lo / mult)
            k_hi = math.ceil(hi / mult) - 1 if excl_hi else math.floor(hi / mult)
            return st.integers(k_lo, k_hi).map(lambda k: k * mult)
        full = st.floats(lo, hi, exclude_min=excl_lo, exclude_max=excl_hi, allow_nan=False, allow_infinity=False)

        def inside(v: float) -> bool:
            return (v > lo if excl_lo else v >= lo) and (v < hi if excl_hi else v <= hi)

        # amounts as people write them: two decimals, within the range
        cents = full.map(lambda v: round(v, 2)).filter(inside)
        return st.one_of(cents, full)

    def _array(self, schema: Mapping[str, Any], name: str | None, depth: int) -> st.SearchStrategy[Any]:
        items = schema.get("items", {})
        if isinstance(items, list):  # tuple form (prefixItems in 2020-12)
            return st.tuples(*[self.for_schema(s, None, depth + 1) for s in items]).map(list)
        if "prefixItems" in schema:
            return st.tuples(*[self.for_schema(s, None, depth + 1) for s in schema["prefixItems"]]).map(list)
        lo = int(schema.get("minItems", 0))
        hi = schema.get("maxItems")
        hi = min(int(hi), lo + MAX_EXTRA_ITEMS) if hi is not None else lo + MAX_EXTRA_ITEMS
        elem = self.for_schema(items, singular(name) if name else None, depth + 1)
        if schema.get("uniqueItems"):
            return st.lists(
                elem, min_size=lo, max_size=hi, unique_by=lambda v: json.dumps(v, sort_keys=True, default=str)
            )
        return st.lists(elem, min_size=lo, max_size=hi)

    def _object(self, schema: Mapping[str, Any], name: str | None, depth: int) -> st.SearchStrategy[Any]:
        props: Mapping[str, Any] = schema.get("properties", {}) or {}
        required = set(schema.get("required", []))
        if not props:
            addl = schema.get("additionalProperties", True)
            if addl is False:
                return st.just({})
            values = _JSON_VALUES if addl is True else self.for_schema(addl, None, depth + 1)
            keys = st.text(string.ascii_lowercase + "_", min_size=1, max_size=10)
            pnames = schema.get("propertyNames")
            if isinstance(pnames, Mapping) and pnames:
                keys = self.for_schema({"type": "string", **pnames}, None, depth + 1)
            return st.dictionaries(keys, values, min_size=int(schema.get("minProperties", 0)), max_size=3)
        req = {k: self.for_schema(v, k, depth + 1) for k, v in props.items() if k in required}
        opt = {k: self.for_schema(v, k, depth + 1) for k, v in props.items() if k not in required}
        return st.fixed_dictionaries(req, optional=opt)


TODAY = _dt.date(2026, 3, 2)  # the servers' fixed "now"


def _dates() -> st.SearchStrategy[str]:
    # mostly today or later (bookings, due dates), sometimes in the past; the simplest draw is today
    later = st.dates(min_value=TODAY, max_value=_dt.date(2028, 12, 31))
    earlier = st.dates(min_value=_dt.date(2024, 1, 1), max_value=TODAY)
    return st.one_of(later, earlier).map(lambda d: d.isoformat())


def _looks_like_date(pattern: str) -> bool:
    return bool(re.search(r"\\d\{4\}-\\d\{2\}-\\d\{2\}", pattern))


def strategy_for_tool(
    input_schema: Mapping[str, Any], hints: Mapping[str, Sequence[Any]] | None = None
) -> st.SearchStrategy[dict[str, Any]]:
    """Schema-valid argument dicts for a tool."""
    return SchemaStrategies(input_schema, hints).tool_arguments()


def from_schema(
    schema: Mapping[str, Any], hints: Mapping[str, Sequence[Any]] | None = None, name: str | None = None
) -> st.SearchStrategy[Any]:
    return SchemaStrategies(schema, hints).for_schema(schema, name)


# the shrunk match of a pattern, per (string schema, name): derandomized, so the same value every time, and
# worth keeping (each ``find`` shrinks its way down; a server's tools share a handful of patterns)
_SIMPLEST_MATCH: dict[str, Any] = {}


def simplest(
    schema: Mapping[str, Any],
    root: Mapping[str, Any] | None = None,
    name: str | None = None,
    hints: Mapping[str, Sequence[Any]] | None = None,
) -> Any:
    """A simple schema-valid value, deterministically: default, const, first enum value, a hinted
    value, today for dates, 1 for amounts (or the nearest bound), a short filler string..."""
    root = root or schema
    ss = SchemaStrategies(root, hints)
    schema = ss._deref(schema)
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            branches = [ss._deref(b) for b in schema[key]]
            non_null = [b for b in branches if b.get("type") != "null"]
            return simplest(non_null[0], root, name, hints) if non_null else None
    typ = schema.get("type")
    if isinstance(typ, list):
        typ = next((t for t in typ if t != "null"), "null")
    if typ == "string" or (typ is None and ("pattern" in schema or "minLength" in schema)):
        lo, hi, pattern = int(schema.get("minLength", 0)), schema.get("maxLength"), schema.get("pattern")

        def fits(v: Any) -> bool:
            return (
                isinstance(v, str)
                and len(v) >= lo
                and (hi is None or len(v) <= hi)
                and (not pattern or re.search(pattern, v) is not None)
            )

        for v in hint_values(name, hints):
            if fits(v):
                return v
        for v in (TODAY.isoformat(), f"{TODAY.isoformat()}T09:00:00", "x" * max(lo, 3), "sample"):
            if fits(v):
                return v
        if pattern:
            observed = [v for v in hint_values(name, hints) if fits(v)]  # empty here; part of the key all the same
            key = json.dumps([schema, name, observed], sort_keys=True, default=str)
            if key not in _SIMPLEST_MATCH:
                from hypothesis import find, settings

                _SIMPLEST_MATCH[key] = find(
                    ss.for_schema(schema, name),
                    lambda _: True,
                    settings=settings(database=None, derandomize=True, max_examples=50),
                )
            return _SIMPLEST_MATCH[key]
        return "x" * max(lo, 1)
    if typ in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum"))
        hi = schema.get("maximum", schema.get("exclusiveMaximum"))
        step = 1 if typ == "integer" else 0.5
        v: float = 1
        if lo is not None and (v < lo or (v == lo and "exclusiveMinimum" in schema and "minimum" not in schema)):
            v = lo + (step if "minimum" not in schema else 0)
        if hi is not None and (v > hi or (v == hi and "exclusiveMaximum" in schema and "maximum" not in schema)):
            v = hi - (step if "maximum" not in schema else 0)
        return int(v) if typ == "integer" else float(v)
    if typ == "boolean":
        return True
    if typ == "null":
        return None
    if typ == "array":
        n = max(int(schema.get("minItems", 0)), 1)
        items = schema.get("items", {})
        first = simplest(items, root, singular(name) if name else None, hints) if isinstance(items, Mapping) else None
        if schema.get("uniqueItems") and n > 1:
            return list(ss.for_schema(schema, name).example())  # pragma: no cover - rare
        return [first] * n
    if typ == "object" or "properties" in schema:
        props = schema.get("properties", {}) or {}
        return {k: simplest(v, root, k, hints) for k, v in props.items() if k in set(schema.get("required", []))}
    return None


# --------------------------------------------------------------------------- hostile values
# Patterns with catastrophic backtracking in a backtracking engine (each runs for minutes on ordinary text),
# glob bombs, unbalanced syntax; then the largest sizes and counts a schema lets through.
HOSTILE_PATTERNS = (
    r"^(\w+\s?)*$",
    r"(a+)+$",
    r"(.*a){25}",
    r"(x+x+)+y",
    "*a" * 60 + "b",
    "[" * 50,
    "**/" * 80,
)
HUGE_INT = 10**18
HUGE_NUMBER = 1e308
LONG_TEXT = 100_000  # the length of a long string where the schema sets none


def hostile_values(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> list[Any]:
    """Schema-valid values meant to hurt: hostile regular expressions and globs, the longest string the schema
    allows, the largest and smallest numbers it allows (huge ones where it sets no bound)."""
    ss = SchemaStrategies(root or schema, None)
    schema = ss._deref(schema)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            out: list[Any] = []
            for b in schema[key]:
                out += [v for v in hostile_values(ss._deref(b), root or schema) if v not in out]
            return out
    if "enum" in schema or "const" in schema or schema.get("format") in ("date", "date-time"):
        return []
    typ = schema.get("type")
    if isinstance(typ, list):
        return [v for t in typ if t != "null" for v in hostile_values({**schema, "type": t}, root)]
    if typ == "string":
        lo, hi, pattern = int(schema.get("minLength", 0)), schema.get("maxLength"), schema.get("pattern")

        def fits(v: str) -> bool:
            return len(v) >= lo and (hi is None or len(v) <= hi) and (not pattern or re.search(pattern, v) is not None)

        longest = "a" * (hi if hi is not None else LONG_TEXT)
        return [v for v in (*HOSTILE_PATTERNS, longest) if fits(v)]
    if typ in ("integer", "number"):
        huge = HUGE_INT if typ == "integer" else HUGE_NUMBER
        hi = schema.get("maximum", schema.get("exclusiveMaximum"))
        lo = schema.get("minimum", schema.get("exclusiveMinimum"))
        step = 1 if typ == "integer" else 0.5
        top = huge if hi is None else (hi if "maximum" in schema else hi - step)
        bottom = -huge if lo is None else (lo if "minimum" in schema else lo + step)
        return [int(v) if typ == "integer" else float(v) for v in dict.fromkeys((top, bottom))]
    return []
