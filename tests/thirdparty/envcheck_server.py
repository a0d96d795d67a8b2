"""A small third-party-style stdio server for the environment client's own tests (plain mcp ``MCPServer``).

* State: a ``store.json`` in its working directory (seeded from the template directory prove copies in),
  and a login held in memory: ``whoami`` and ``put`` need ``login`` first.
* Failure modes, chosen on the command line: ``--exit-at-start CODE`` (a line on stderr, then exit),
  ``--hang-at-start`` (never answers), ``--die-after N`` (exits after N tool calls), ``--noisy N``
  (N lines on stderr at start).
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import argparse
import json
import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

p = argparse.ArgumentParser()
p.add_argument("--exit-at-start", type=int)
p.add_argument("--hang-at-start", action="store_true")
p.add_argument("--die-after", type=int)
p.add_argument("--noisy", type=int, default=0)
p.add_argument("--store", default="store.json")
a = p.parse_args()

if a.exit_at_start is not None:
    print("fatal: no database configured (set ENVCHECK_DB)", file=sys.stderr, flush=True)
    sys.exit(a.exit_at_start)
if a.hang_at_start:
    time.sleep(3600)
for i in range(a.noisy):
    print(f"envcheck: warming cache line {i}", file=sys.stderr)
sys.stderr.flush()

STORE = Path(a.store)
srv = MCPServer("envcheck", log_level="ERROR")
state = {"user": None, "calls": 0}


def counted() -> None:
    state["calls"] += 1
    if a.die_after is not None and state["calls"] > a.die_after:
        print(f"envcheck: giving up after {a.die_after} calls", file=sys.stderr, flush=True)
        os._exit(7)


def load() -> dict:
    return json.loads(STORE.read_text()) if STORE.exists() else {}


@srv.tool(annotations=ToolAnnotations(read_only_hint=False))
def login(user: str, password: str) -> str:
    """Log in."""
    counted()
    if password != os.environ.get("ENVCHECK_PASSWORD", "hunter2"):
        raise ToolError(f"permission_denied: wrong password {password!r}")  # echoes it, as careless servers do
    state["user"] = user
    return f"logged in as {user}"


@srv.tool(annotations=ToolAnnotations(read_only_hint=True))
def whoami() -> str:
    """Who is logged in."""
    counted()
    if state["user"] is None:
        raise ToolError("permission_denied: log in first")
    return state["user"]


@srv.tool(annotations=ToolAnnotations(read_only_hint=True))
def get(key: str) -> str:
    """Read a key of the store."""
    counted()
    d = load()
    if key not in d:
        raise ToolError(f"not_found: no key {key!r}")
    return str(d[key])


@srv.tool(annotations=ToolAnnotations(read_only_hint=False))
def put(key: str, value: str) -> str:
    """Write a key of the store (logged-in users only)."""
    counted()
    if state["user"] is None:
        raise ToolError("permission_denied: log in first")
    d = load()
    d[key] = value
    STORE.write_text(json.dumps(d))
    return "ok"


if __name__ == "__main__":
    srv.run("stdio")
