"""A third-party-style in-memory MCP server; with --crash-on it dies on one tool, with --garbage it answers nonsense.

Run: python tests/thirdparty/counter_server.py [--crash-on TOOL] [--hang-on TOOL] [--http PORT]
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import argparse
import os
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

p = argparse.ArgumentParser()
p.add_argument("--crash-on")
p.add_argument("--hang-on")
p.add_argument("--http", type=int)
args = p.parse_args()

srv = MCPServer("counters", log_level="ERROR")
COUNTERS = {"c1": 0, "c2": 5, "c3": 10}


class Counter(BaseModel):
    counter_id: str
    value: int


class CounterList(BaseModel):
    counters: list[Counter]


def _guard(name: str) -> None:
    if args.crash_on == name:
        os._exit(3)
    if args.hang_on == name:
        time.sleep(3600)


@srv.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_counters() -> CounterList:
    """List all counters."""
    _guard("list_counters")
    return CounterList(counters=[Counter(counter_id=k, value=v) for k, v in COUNTERS.items()])


@srv.tool(annotations=ToolAnnotations(read_only_hint=True))
def get_counter(counter_id: str) -> Counter:
    """Get one counter."""
    _guard("get_counter")
    if counter_id not in COUNTERS:
        raise ToolError(f"not_found: counter {counter_id!r} not found")
    return Counter(counter_id=counter_id, value=COUNTERS[counter_id])


@srv.tool(annotations=ToolAnnotations(read_only_hint=False))
def increment(counter_id: str, by: int = 1) -> Counter:
    """Add to a counter."""
    _guard("increment")
    if counter_id not in COUNTERS:
        raise ToolError(f"not_found: counter {counter_id!r} not found")
    COUNTERS[counter_id] += by
    return Counter(counter_id=counter_id, value=COUNTERS[counter_id])


@srv.tool(annotations=ToolAnnotations(read_only_hint=False))
def reset_all() -> CounterList:
    """Reset every counter to its initial value (used as this server's reset tool)."""
    COUNTERS.update({"c1": 0, "c2": 5, "c3": 10})
    return CounterList(counters=[Counter(counter_id=k, value=v) for k, v in COUNTERS.items()])


if __name__ == "__main__":
    if args.http:
        srv.run("streamable-http", port=args.http)
    else:
        srv.run("stdio")
