"""Fields of tool results and of output schemas: the first value of a field in a result, all of them,
and the field names a schema can carry (what chains and the dry run read off earlier results)."""

from __future__ import annotations

from typing import Any

from pipeline.discovery import value_in


def find_field(data: Any, field: str) -> Any:
    """The first value of ``field`` anywhere in a result (depth first); in a text result (a listing,
    printed rows), the first entity named by that key (:func:`pipeline.discovery.value_in`)."""
    if isinstance(data, str):
        return value_in(data, field)
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


def field_values(data: Any, field: str) -> list[Any]:
    """Every value of ``field`` in a result, in :func:`find_field`'s order (a text result: the first only)."""
    out: list[Any] = []

    def walk(d: Any) -> None:
        if isinstance(d, dict):
            if field in d and isinstance(d[field], (str, int, float)) and not isinstance(d[field], bool):
                out.append(d[field])
            for v in d.values():
                walk(v)
        elif isinstance(d, list):
            for item in d:
                walk(item)

    if isinstance(data, str):
        first = value_in(data, field)
        return [] if first is None else [first]
    walk(data)
    return out


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
