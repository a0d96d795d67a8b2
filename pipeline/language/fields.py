"""Fields of tool results and of output schemas: the first value of a field in a result, all of them,
and the field names a schema can carry (what chains and the dry run read off earlier results)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from pipeline.language.entities import value_in


def field_values(data: Any, field: str) -> Iterator[Any]:
    """The values of ``field`` in a result, depth first (a dict's own field before its nested ones); in a
    text result (a listing, printed rows), the first entity named by that key
    (:func:`pipeline.language.entities.value_in`)."""
    if isinstance(data, str):
        first = _text_value(data, field) if len(data) <= _KEPT_TEXT else value_in(data, field)
        if first is not None:
            yield first
    elif isinstance(data, dict):
        v = data.get(field)
        if isinstance(v, (str, int, float)) and not isinstance(v, bool):
            yield v
        for v in data.values():
            yield from field_values(v, field)
    elif isinstance(data, list):
        for item in data:
            yield from field_values(item, field)


_KEPT_TEXT = 2000  # longer texts (a file's contents) are read each time, not kept


@functools.lru_cache(maxsize=1 << 15)
def _text_value(text: str, field: str) -> Any:
    """:func:`~pipeline.language.entities.value_in` of a text, kept: every string inside a structured result is read
    this
    way too, and the same strings (a world's names, dates, statuses) come back call after call. A pure function
    of the two strings, returning a string or a number."""
    return value_in(text, field)


def find_field(data: Any, field: str) -> Any:
    """The first of :func:`field_values` (None when the result holds none); for a result that is a list of plain
    names (``["bob", "carol"]``, JSON text read as data), the first name, under the key a listing names it by."""
    if isinstance(data, list) and data and all(isinstance(x, str) for x in data):
        named = value_in(data, field)
        if named is not None:
            return named
    return next(field_values(data, field), None)


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
