"""A planned step as the request writer takes it (a tool of string parameters, its arguments, an empty result), for
the tests of how requests are worded."""

from __future__ import annotations

from typing import Any

from pipeline.core.records import CallResult, ToolSpec


def plan_step(name: str, args: dict[str, Any], description: str = "", read_only: bool = False) -> dict[str, Any]:
    props = {p: {"type": "string", "description": p} for p in args}
    tool = ToolSpec(
        name=name,
        server="x",
        description=description,
        read_only=read_only,
        output_schema={"type": "object"},
        input_schema={"type": "object", "properties": props, "required": list(args)},
    )
    return {
        "tool": tool,
        "args": args,
        "sources": {},
        "source_fields": {},
        "result": CallResult(ok=True, data={}),
        "index": 0,
    }
