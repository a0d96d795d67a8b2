"""A human-readable catalogue of the built-in servers, generated from what they serve.

Every available server is built and asked for its tools through MCP (``tools/list`` over the
in-process transport), so the catalogue shows exactly what a model sees: names, annotations,
descriptions and parameters (type, enum values, constraints, required, sensitive).

``python -m servers.catalog [PATH]`` writes it (default ``docs/catalog.md``);
``tests/servers/test_catalog.py`` fails when the committed file is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from servers.kit import ADMIN_PREFIX, SENSITIVE_KEY
from servers.registry import CATALOGUE, available, build

DEFAULT_PATH = Path(__file__).resolve().parents[1] / "docs" / "catalog.md"


async def _list_tools(srv: Any) -> list[Any]:
    tools: list[Any] = []
    async with Client(srv) as client:
        cursor = None
        while True:
            res = await client.list_tools(cursor=cursor)
            tools.extend(res.tools)
            cursor = getattr(res, "next_cursor", None)
            if not cursor:
                break
    return [t for t in tools if not t.name.startswith(ADMIN_PREFIX)]


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _deref(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        name = ref.rsplit("/", 1)[-1]
        target = root.get("$defs", {}).get(name, {})
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}, "x-ref-name": name}
    return schema


def type_of(schema: dict[str, Any], root: dict[str, Any]) -> str:
    """A short type expression: ``string``, ``"a" | "b"``, ``array of string``, ``Item | null``."""
    schema = _deref(schema, root)
    if "const" in schema:
        return f'"{schema["const"]}"' if isinstance(schema["const"], str) else str(schema["const"])
    if "enum" in schema:
        return " \\| ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " \\| ".join(type_of(s, root) for s in schema[key])
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return type_of(schema["allOf"][0], root)
    typ = schema.get("type")
    if isinstance(typ, list):
        return " \\| ".join(typ)
    if typ == "array":
        items = schema.get("items")
        return f"array of {type_of(items, root)}" if isinstance(items, dict) and items else "array"
    if typ == "object" or "properties" in schema:
        name = schema.get("x-ref-name") or schema.get("title")
        if schema.get("properties"):
            inner = ", ".join(f"{k}: {type_of(v, root)}" for k, v in schema["properties"].items())
            return f"{name} {{{inner}}}" if name else f"object {{{inner}}}"
        return "object"
    return typ or "any"


def constraints_of(schema: dict[str, Any], root: dict[str, Any]) -> list[str]:
    out: list[str] = []
    schema = _deref(schema, root)
    branches = [schema] + [_deref(s, root) for k in ("anyOf", "oneOf") for s in schema.get(k, [])]
    for s in branches:
        if "pattern" in s:
            out.append(f"pattern `{s['pattern']}`")
        for key, label in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
            if key in s and not isinstance(s[key], bool):
                out.append(f"{label} {s[key]}")
        for key, label in (
            ("minLength", "min length"),
            ("maxLength", "max length"),
            ("minItems", "min items"),
            ("maxItems", "max items"),
        ):
            if key in s:
                out.append(f"{label} {s[key]}")
        if "format" in s:
            out.append(f"format {s['format']}")
    return out


def _is_sensitive(schema: dict[str, Any], root: dict[str, Any]) -> bool:
    schema = _deref(schema, root)
    if schema.get(SENSITIVE_KEY) is True:
        return True
    return any(
        _deref(s, root).get(SENSITIVE_KEY) is True for k in ("anyOf", "oneOf", "allOf") for s in schema.get(k, [])
    )


def _annotations(tool: Any) -> str:
    a = tool.annotations
    if a is None:
        return "no annotations"
    parts = []
    parts.append("read-only" if a.read_only_hint else "writes")
    if a.destructive_hint:
        parts.append("destructive")
    if a.idempotent_hint:
        parts.append("idempotent")
    if a.open_world_hint:
        parts.append("open-world")
    return " · ".join(parts)


def _render_tool(tool: Any) -> list[str]:
    lines = [
        f"#### `{tool.name}`",
        "",
        f"*{_annotations(tool)}*",
        "",
        " ".join((tool.description or "(no description)").split()),
        "",
    ]
    schema = dict(tool.input_schema or {})
    props: dict[str, Any] = schema.get("properties", {}) or {}
    required = set(schema.get("required", []))
    if not props:
        lines += ["No parameters.", ""]
        return lines
    lines += ["| Parameter | Type | Required | Description |", "|---|---|---|---|"]
    for pname, prop in props.items():
        desc = prop.get("description", "")
        notes = constraints_of(prop, schema)
        if "default" in prop and pname not in required:
            notes.append(f"default `{prop['default']!r}`" if prop["default"] is not None else "default null")
        if _is_sensitive(prop, schema):
            notes.insert(0, "**sensitive**")
        text = _cell(desc) + (f" ({_cell('; '.join(notes))})" if notes else "")
        lines.append(f"| `{pname}` | {type_of(prop, schema)} | {'yes' if pname in required else 'no'} | {text} |")
    lines.append("")
    return lines


async def _collect(names: list[str]) -> list[tuple[Any, list[Any]]]:
    out = []
    for name in names:
        srv = build(name)
        out.append((srv, await _list_tools(srv)))
    return out


def render_catalog(names: list[str] | None = None) -> str:
    """The markdown catalogue of the given (default: every available) built-in server."""
    names = available() if names is None else names
    servers = anyio.run(_collect, names)
    expected = {e.name: e.tools for e in CATALOGUE}
    total = sum(len(t) for _, t in servers)
    missing = [e.name for e in CATALOGUE if e.name not in names]
    lines = [
        "# Built-in server catalogue",
        "",
        "<!-- generated by `python -m servers.catalog` from each server's MCP tools/list; do not edit by hand -->",
        "",
        f"{len(servers)} servers, {total} tools. Every server keeps one world per session (`_meta` "
        "`prove/session` + `prove/seed`); admin tools (`prove_admin_*`) are hidden and not listed.",
        "",
    ]
    if missing:
        lines += [f"Not yet available: {', '.join(missing)}.", ""]
    lines += ["| Server | Category | Tools | Description |", "|---|---|---|---|"]
    for srv, tools in servers:
        count = (
            f"{len(tools)}"
            if len(tools) == expected.get(srv.name)
            else f"{len(tools)} (table: {expected.get(srv.name)})"
        )
        lines.append(f"| [{srv.name}](#{srv.name}) | {_cell(srv.category)} | {count} | {_cell(srv.summary)} |")
    lines.append("")
    for srv, tools in servers:
        read_only = sum(1 for t in tools if t.annotations and t.annotations.read_only_hint)
        lines += [
            f"## {srv.name}",
            "",
            f"**Category:** {srv.category} · **Tools:** {len(tools)} ({read_only} read-only, {len(tools) - read_only} writing)",
            "",
            " ".join(srv.summary.split()),
            "",
            "| Tool | Kind | Description |",
            "|---|---|---|",
        ]
        for t in tools:
            first = " ".join((t.description or "").split())
            lines.append(f"| `{t.name}` | {_annotations(t)} | {_cell(first)} |")
        lines.append("")
        for t in tools:
            lines += _render_tool(t)
    return "\n".join(lines).rstrip() + "\n"


def write_catalog(path: str | Path = DEFAULT_PATH) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_catalog(), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(write_catalog(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_PATH))
