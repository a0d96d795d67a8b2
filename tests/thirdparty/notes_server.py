"""A third-party-style MCP server that keeps its state in a JSON file in its working directory.

Written with plain mcp ``MCPServer`` (not prove's kit): no sessions, no admin tools, no output
schemas on some tools. prove must isolate it with a process (and a temporary directory) per session.
Run: python tests/thirdparty/notes_server.py [--tools NAME,NAME...]  (stdio; ``--tools``: serve only the tools named)
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import argparse
import json
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

STORE = Path("notes.json")
srv = MCPServer("notes", log_level="ERROR")
p = argparse.ArgumentParser()
p.add_argument("--http", type=int)
p.add_argument("--tools", help="serve only these tools (comma-separated); default: all")
ARGS, _ = p.parse_known_args()  # other arguments are ignored, as they always were
ONLY = set(ARGS.tools.split(",")) if ARGS.tools else None


def tool(**kw):
    """``srv.tool``, for the tools this run serves (all of them, or those ``--tools`` names)."""
    return lambda fn: srv.tool(**kw)(fn) if ONLY is None or fn.__name__ in ONLY else fn


class Note(BaseModel):
    note_id: str
    title: str
    body: str
    folder: str


class NoteList(BaseModel):
    notes: list[Note]


def load() -> dict:
    if not STORE.exists():
        seed = {
            "n1": {"note_id": "n1", "title": "Groceries", "body": "milk, eggs", "folder": "home"},
            "n2": {"note_id": "n2", "title": "Standup", "body": "ship the fix", "folder": "work"},
            "n3": {"note_id": "n3", "title": "Trip", "body": "book hotel", "folder": "home"},
        }
        STORE.write_text(json.dumps(seed))
    return json.loads(STORE.read_text())


def save(d: dict) -> None:
    STORE.write_text(json.dumps(d))


@tool(annotations=ToolAnnotations(read_only_hint=True))
def list_notes(folder: str | None = None) -> NoteList:
    """List notes, optionally in one folder."""
    return NoteList(notes=[Note(**n) for n in load().values() if folder is None or n["folder"] == folder])


@tool(annotations=ToolAnnotations(read_only_hint=True))
def get_note(note_id: str) -> Note:
    """Get one note by id."""
    d = load()
    if note_id not in d:
        raise ToolError(f"not_found: note {note_id!r} not found")
    return Note(**d[note_id])


@tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def create_note(title: str, body: str, folder: str = "home") -> Note:
    """Create a note."""
    d = load()
    nid = f"n{len(d) + 1}"
    d[nid] = {"note_id": nid, "title": title, "body": body, "folder": folder}
    save(d)
    return Note(**d[nid])


@tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_note(note_id: str) -> str:
    """Delete a note (returns plain text, no output schema)."""
    d = load()
    if note_id not in d:
        raise ToolError(f"not_found: note {note_id!r} not found")
    del d[note_id]
    save(d)
    return f"deleted {note_id}"


@tool(annotations=ToolAnnotations(read_only_hint=False))
def move_note(note_id: str, folder: str) -> Note:
    """Move a note to another folder."""
    d = load()
    if note_id not in d:
        raise ToolError(f"not_found: note {note_id!r} not found")
    d[note_id]["folder"] = folder
    save(d)
    return Note(**d[note_id])


if __name__ == "__main__":
    if ARGS.http:
        srv.run("streamable-http", port=ARGS.http)
    else:
        srv.run("stdio")
