"""A login-gated document archive: the smallest server that needs each kind of answer ``prove servers init`` asks
for. ``login(username, password)`` must come first (the password is read from ``ARCHIVE_PASSWORD``, the user is
``ada``); documents are found by a project that no tool lists (a value only the user knows); and the tool that reads
a document carries no annotation. State in memory; results are structured (output schemas). Plain mcp ``MCPServer``,
not prove's kit.
Run: ARCHIVE_PASSWORD=... python tests/thirdparty/archive_server.py
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import os

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

srv = MCPServer("archive", log_level="ERROR")
READ = ToolAnnotations(read_only_hint=True)
FOLDERS = {"letters": ["L-1"], "reports": ["R-1", "R-2"]}
DOCS = {"L-1": "Welcome letter", "R-1": "Q3 revenue summary", "R-2": "Q4 plan"}
PROJECTS = {"orion": ["R-1", "L-1"]}
STATE: dict[str, str | None] = {"user": None}


class Folder(BaseModel):
    folder: str


class Doc(BaseModel):
    doc_id: str
    title: str


class Text(BaseModel):
    doc_id: str
    text: str


def _user() -> str:
    if STATE["user"] is None:
        raise ToolError("not logged in: call login(username, password) first")
    return STATE["user"]


class Session(BaseModel):
    logged_in_as: str


@srv.tool(annotations=ToolAnnotations(read_only_hint=False))
def login(username: str, password: str) -> Session:
    """Log in to the archive (every other tool needs it)."""
    if username != "ada" or not password or password != os.environ.get("ARCHIVE_PASSWORD"):
        raise ToolError("login failed: invalid username or password")
    STATE["user"] = username
    return Session(logged_in_as=username)


@srv.tool(annotations=READ)
def list_folders() -> list[Folder]:
    """List the archive's folders."""
    _user()
    return [Folder(folder=f) for f in sorted(FOLDERS)]


@srv.tool(annotations=READ)
def list_documents(folder: str) -> list[Doc]:
    """List the documents of a folder."""
    _user()
    if folder not in FOLDERS:
        raise ToolError(f"no such folder: {folder}")
    return [Doc(doc_id=d, title=DOCS[d]) for d in FOLDERS[folder]]


@srv.tool(annotations=READ)
def project_documents(project: str) -> list[Doc]:
    """List the documents filed under a project."""
    _user()
    if project not in PROJECTS:
        raise ToolError(f"no such project: {project}")
    return [Doc(doc_id=d, title=DOCS[d]) for d in PROJECTS[project]]


@srv.tool()
def read_document(doc_id: str) -> Text:
    """Read a document's text."""
    _user()
    if doc_id not in DOCS:
        raise ToolError(f"no such document: {doc_id}")
    return Text(doc_id=doc_id, text=DOCS[doc_id])


if __name__ == "__main__":
    srv.run("stdio")
