"""A filesystem MCP server shaped like @modelcontextprotocol/server-filesystem's structured results: every text
result is wrapped in an output schema of one field (``{"content": "..."}``: the allowed directory, a listing, a
JSON directory tree, a file's text, what ``move_file`` moved where; like the published one, it refuses a destination
that exists), and ``read_media_file`` returns the file's bytes as a base64 resource blob
(``{"content": [{"type": "resource", "resource": {"uri", "mimeType", "blob"}}]}``). The allowed directory is
``--root`` (the session's directory, which the results name); relative paths are taken from it.
Plain mcp ``MCPServer``, not prove's kit. Run: python tests/thirdparty/wrapped_files_server.py --root DIR
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import argparse
import base64
import json
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

srv = MCPServer("wrapped_files", log_level="ERROR")
READ = ToolAnnotations(read_only_hint=True)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
ROOT = Path(".")


class Text(BaseModel):
    content: str


class Blob(BaseModel):
    uri: str
    mimeType: str  # noqa: N815 (the published server's field name)
    blob: str


class Item(BaseModel):
    type: str
    resource: Blob


class Media(BaseModel):
    content: list[Item]


def resolve(path: str) -> Path:
    target = (ROOT / path).resolve()
    if target != ROOT and ROOT not in target.parents:
        raise ToolError(f"Access denied - path outside allowed directories: {path}")
    return target


def existing(path: str) -> Path:
    target = resolve(path)
    if not target.exists():
        raise ToolError(f"ENOENT: no such file or directory, open '{target}'")
    return target


def tree(target: Path) -> list[dict]:
    out: list[dict] = []
    for p in sorted(target.iterdir()):
        entry: dict = {"name": p.name, "type": "directory" if p.is_dir() else "file"}
        if p.is_dir():
            entry["children"] = tree(p)
        out.append(entry)
    return out


@srv.tool(annotations=READ)
def list_allowed_directories() -> Text:
    """List the directories this server may access"""
    return Text(content=f"Allowed directories:\n{ROOT}")


@srv.tool(annotations=READ)
def list_directory(path: str) -> Text:
    """List the files and directories in a directory"""
    target = existing(path)
    return Text(content="\n".join(f"[{'DIR' if p.is_dir() else 'FILE'}] {p.name}" for p in sorted(target.iterdir())))


@srv.tool(annotations=READ)
def directory_tree(path: str) -> Text:
    """A recursive tree of a directory as JSON"""
    return Text(content=json.dumps(tree(existing(path)), indent=2))


@srv.tool(annotations=READ)
def read_text_file(path: str) -> Text:
    """Read a file's text"""
    target = existing(path)
    if target.is_dir():
        raise ToolError(f"EISDIR: illegal operation on a directory, read '{target}'")
    return Text(content=target.read_text())


@srv.tool(annotations=READ)
def read_media_file(path: str) -> Media:
    """Read a file as base64-encoded data with its MIME type"""
    target = existing(path)
    if target.is_dir():
        raise ToolError(f"EISDIR: illegal operation on a directory, read '{target}'")
    blob = base64.b64encode(target.read_bytes()).decode()
    return Media(
        content=[Item(type="resource", resource=Blob(uri=f"file://{target}", mimeType="text/plain", blob=blob))]
    )


@srv.tool(annotations=WRITE)
def write_file(path: str, content: str) -> Text:
    """Create a file or overwrite it with new content"""
    target = resolve(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    return Text(content=f"Successfully wrote to {path}")


@srv.tool(annotations=WRITE)
def move_file(source: str, destination: str) -> Text:
    """Move or rename a file or directory; fails if the destination exists"""
    target = resolve(destination)
    if target.exists():
        raise ToolError(f"EEXIST: file already exists, rename '{source}' -> '{destination}'")
    existing(source).rename(target)
    return Text(content=f"Successfully moved {source} to {destination}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ROOT = Path(ap.parse_args().root).resolve()
    srv.run("stdio")
