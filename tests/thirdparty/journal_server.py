"""A journal server whose errors come back as normal results and whose results name its working directory.

Shaped like many published servers (plain mcp ``MCPServer``, text results, no output schemas): a failure is
reported inside a normal result, never with ``isError`` (``{"success": false, "error": ...}`` as JSON, or a
``Database error: ...`` text, as SQL servers print), and the results name the absolute directory the server
runs in (its database path, the path of every entry) and the times its files were made (each session's are
new). Entries are files ``journal/<name>.txt`` in that directory; a new one is seeded when the directory has none.
Run: python tests/thirdparty/journal_server.py  (stdio)
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import json
import os
from datetime import datetime
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

srv = MCPServer("journal", log_level="ERROR")
READ = ToolAnnotations(read_only_hint=True)


def home() -> Path:
    d = Path(os.getcwd()) / "journal"
    if not d.exists():
        d.mkdir()
        (d / "monday.txt").write_text("Planted tomatoes.\n")
        (d / "tuesday.txt").write_text("Fixed the fence.\n")
    return d


@srv.tool(annotations=READ, structured_output=False)
def journal_info() -> str:
    """Where the journal is kept: its folder and database path."""
    return f"Folder: {home()}\nDatabase: {Path(os.getcwd()) / 'journal.db'}"


@srv.tool(annotations=READ, structured_output=False)
def list_entries() -> str:
    """List the journal entries: each one's name, the absolute path of its file and its length."""
    return json.dumps([{"name": p.stem, "path": str(p), "chars": len(p.read_text())} for p in sorted(home().iterdir())])


@srv.tool(annotations=READ, structured_output=False)
def read_entry(path: str) -> str:
    """Read one journal entry by the absolute path of its file."""
    p = Path(path)
    if p.parent != home() or not p.exists():
        return json.dumps({"success": False, "error": f"no such entry: {path}"})
    return p.read_text()


@srv.tool(annotations=READ, structured_output=False)
def entry_info(path: str) -> str:
    """Size and creation time of one journal entry, by the absolute path of its file."""
    p = Path(path)
    if p.parent != home() or not p.exists():
        return json.dumps({"success": False, "error": f"no such entry: {path}"})
    return f"size: {p.stat().st_size}\ncreated: {datetime.fromtimestamp(p.stat().st_ctime).isoformat()}"


@srv.tool(annotations=READ, structured_output=False)
def query_entries(sql: str) -> str:
    """Run a SELECT statement over the entries (SQL) and return the rows."""
    if not sql.strip().upper().startswith("SELECT"):
        return f'Database error: near "{sql.split()[0] if sql.split() else ""}": syntax error'
    return json.dumps([{"name": p.stem} for p in sorted(home().iterdir())])


@srv.tool(structured_output=False)
def write_entry(name: str, text: str) -> str:
    """Write a journal entry; returns the path of its file."""
    if not name.strip() or "/" in name:
        return json.dumps({"success": False, "error": f"invalid entry name: {name!r}"})
    p = home() / f"{name}.txt"
    p.write_text(text)
    return json.dumps({"success": True, "path": str(p)})


if __name__ == "__main__":
    srv.run()
