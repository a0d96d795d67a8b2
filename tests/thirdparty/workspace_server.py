"""A server shaped like the published ones that chain only once configured: every tool takes a ``workspace``
that no tool lists (a value only the user knows, like mcp-server-git's ``repo_path``), reading needs a login
first, and one reading tool has no annotation. Results are text (``* name`` lines, ``Commit:`` blocks), with
output schemas that only wrap a text (``{"content": "..."}``), like @modelcontextprotocol/server-filesystem.
The workspace is ``desk``; the state lives in memory. Plain mcp ``MCPServer``, not prove's kit.
Run: python tests/thirdparty/workspace_server.py
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import hashlib

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

srv = MCPServer("workspace", log_level="ERROR")
READ = ToolAnnotations(read_only_hint=True)
WRITE = ToolAnnotations(read_only_hint=False)
ITEMS = {"alpha": "first draft", "beta": "second draft"}
LOG: list[dict[str, str]] = [{"item": "alpha", "note": "created"}, {"item": "beta", "note": "created"}]
USER: dict[str, str | None] = {"name": None}


class Text(BaseModel):
    content: str


def _check(workspace: str) -> None:
    if USER["name"] is None:
        raise ToolError("not logged in: call login(user) first")
    if workspace != "desk":
        raise ToolError(f"no such workspace: {workspace}")


def _sha(entry: dict[str, str], i: int) -> str:
    return hashlib.sha1(f"{i}\n{entry['item']}\n{entry['note']}".encode()).hexdigest()[:12]


@srv.tool(annotations=WRITE)
def login(user: str) -> Text:
    """Log in as a user (every other tool needs it)"""
    USER["name"] = user
    return Text(content=f"logged in as {user}")


@srv.tool(annotations=READ)
def list_items(workspace: str) -> Text:
    """List the items of a workspace, the current one starred"""
    _check(workspace)
    names = sorted(ITEMS)
    return Text(content="\n".join(f"{'*' if i == 0 else ' '} {n}" for i, n in enumerate(names)))


@srv.tool(annotations=READ)
def show_item(workspace: str, item: str) -> Text:
    """Show one item of a workspace"""
    _check(workspace)
    if item not in ITEMS:
        raise ToolError(f"no such item: {item}")
    return Text(content=f"Item: {item}\nText: {ITEMS[item]}")


@srv.tool()
def get_history(workspace: str) -> Text:
    """The workspace's history, newest first (reads only, but carries no annotation)"""
    _check(workspace)
    blocks = [f"Commit: {_sha(e, i)}\nItem: {e['item']}\nNote: {e['note']}" for i, e in reversed(list(enumerate(LOG)))]
    return Text(content="History:\n" + "\n\n".join(blocks))


@srv.tool(annotations=WRITE)
def add_item(workspace: str, item: str, text: str) -> Text:
    """Add an item to a workspace"""
    _check(workspace)
    if item in ITEMS:
        raise ToolError(f"item exists: {item}")
    ITEMS[item] = text
    LOG.append({"item": item, "note": "created"})
    return Text(content=f"added {item}")


if __name__ == "__main__":
    srv.run("stdio")
