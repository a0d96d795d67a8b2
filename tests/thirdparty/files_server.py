"""A filesystem MCP server rooted at its working directory, shaped like @modelcontextprotocol/server-filesystem.

Paths are relative to the root (the working directory, or ``--root DIR``); a path that leaves the root
is refused. Listings are text lines (``[FILE] a.txt`` / ``[DIR] notes``); results are text with no output
schemas. ``get_file_info`` reports a deterministic ``modified`` stamp (the number of writes this server
made to the file), so a replay gives the same text. Plain mcp ``MCPServer``, not prove's kit.
Run: python tests/thirdparty/files_server.py [--root DIR] [--http PORT] [--tools NAME,NAME...]
(``--tools``: serve only the tools named, a smaller server for tests about sessions rather than about its tools.)
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import argparse
import difflib
import fnmatch
import functools
import json
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

p = argparse.ArgumentParser()
p.add_argument("--root", default=".")
p.add_argument("--http", type=int)
p.add_argument("--tools", help="serve only these tools (comma-separated); default: all")
ARGS = p.parse_args()
ROOT = Path(ARGS.root).resolve()
WRITES: dict[str, int] = {}
srv = MCPServer("secure-filesystem-server", log_level="ERROR")
READ = ToolAnnotations(read_only_hint=True)
ONLY = set(ARGS.tools.split(",")) if ARGS.tools else None


def tool(**kw):
    """``srv.tool``, for the tools this run serves (all of them, or those ``--tools`` names)."""
    return lambda fn: srv.tool(**kw)(fn) if ONLY is None or fn.__name__ in ONLY else fn


class Edit(BaseModel):
    oldText: str = Field(description="Text to search for - must match exactly")
    newText: str = Field(description="Text to replace with")


def fs_errors(fn):
    """File system errors come back as tool errors in Node's style (``EISDIR: ...``), as the published server's do."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except OSError as exc:
            code = {21: "EISDIR", 20: "ENOTDIR", 17: "EEXIST", 2: "ENOENT", 39: "ENOTEMPTY", 22: "EINVAL"}.get(
                exc.errno or 0, "EIO"
            )
            where = (
                rel(Path(exc.filename)) if exc.filename and ROOT in Path(exc.filename).parents else exc.filename or ""
            )
            raise ToolError(f"{code}: {exc.strerror or exc}, '{where}'") from None

    return wrapper


def resolve(path: str) -> Path:
    target = (ROOT / path).resolve()  # symlinks resolved first, so a link cannot lead out
    if target != ROOT and ROOT not in target.parents:
        raise ToolError(f"Access denied - path outside allowed directories: {path}")
    return target


def rel(target: Path) -> str:
    return target.relative_to(ROOT).as_posix() or "."


def existing(path: str, kind: str | None = None) -> Path:
    target = resolve(path)
    if not target.exists():
        raise ToolError(f"ENOENT: no such file or directory, '{path}'")
    if kind == "file" and not target.is_file():
        raise ToolError(f"EISDIR: illegal operation on a directory, '{path}'")
    if kind == "dir" and not target.is_dir():
        raise ToolError(f"ENOTDIR: not a directory, '{path}'")
    return target


def written(target: Path) -> None:
    WRITES[rel(target)] = WRITES.get(rel(target), 0) + 1


@tool(structured_output=False, annotations=READ)
@fs_errors
def read_file(path: str) -> str:
    """Read the complete contents of a file from the file system. Handles various text encodings and provides
    detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of
    a single file. Only works within allowed directories."""
    return existing(path, "file").read_text()


@tool(structured_output=False)
@fs_errors
def write_file(path: str, content: str) -> str:
    """Create a new file or completely overwrite an existing file with new content. Use with caution as it will
    overwrite existing files without warning. Handles text content with proper encoding. Only works within
    allowed directories."""
    target = resolve(path)
    if not target.parent.is_dir():
        raise ToolError(f"ENOENT: no such file or directory, '{path}'")
    target.write_text(content)
    written(target)
    return f"Successfully wrote to {path}"


@tool(structured_output=False)
@fs_errors
def edit_file(path: str, edits: list[Edit], dryRun: bool = False) -> str:
    """Make line-based edits to a text file. Each edit replaces exact line sequences with new content.
    Returns a git-style diff showing the changes made. Only works within allowed directories."""
    target = existing(path, "file")
    before = target.read_text()
    after = before
    for e in edits:
        if e.oldText not in after:
            raise ToolError(f"Could not find exact match for edit:\n{e.oldText}")
        after = after.replace(e.oldText, e.newText, 1)
    diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), fromfile=path, tofile=path))
    if not dryRun:
        target.write_text(after)
        written(target)
    return f"```diff\n{diff}```"


@tool(structured_output=False)
@fs_errors
def create_directory(path: str) -> str:
    """Create a new directory or ensure a directory exists. Can create multiple nested directories in one
    operation. If the directory already exists, this operation will succeed silently. Only works within
    allowed directories."""
    resolve(path).mkdir(parents=True, exist_ok=True)
    return f"Successfully created directory {path}"


@tool(structured_output=False, annotations=READ)
@fs_errors
def list_directory(path: str) -> str:
    """Get a detailed listing of all files and directories in a specified path. Results clearly distinguish
    between files and directories with [FILE] and [DIR] prefixes. Only works within allowed directories."""
    target = existing(path, "dir")
    return "\n".join(f"[{'DIR' if c.is_dir() else 'FILE'}] {c.name}" for c in sorted(target.iterdir()))


def tree(target: Path) -> list[dict]:
    out = []
    for c in sorted(target.iterdir()):
        node: dict = {"name": c.name, "type": "directory" if c.is_dir() else "file"}
        if c.is_dir():
            node["children"] = tree(c)
        out.append(node)
    return out


@tool(structured_output=False, annotations=READ)
@fs_errors
def directory_tree(path: str) -> str:
    """Get a recursive tree view of files and directories as a JSON structure. Each entry includes 'name',
    'type' (file/directory), and 'children' for directories."""
    return json.dumps(tree(existing(path, "dir")), indent=2)


@tool(structured_output=False, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
@fs_errors
def move_file(source: str, destination: str) -> str:
    """Move or rename files and directories. Can move files between directories and rename them in a single
    operation. If the destination exists, the operation will fail."""
    src, dst = existing(source), resolve(destination)
    if dst.exists():
        raise ToolError(f"EEXIST: file already exists, '{destination}'")
    if not dst.parent.is_dir():
        raise ToolError(f"ENOENT: no such file or directory, '{destination}'")
    src.rename(dst)
    if rel(src) in WRITES:
        WRITES[rel(dst)] = WRITES.pop(rel(src))
    return f"Successfully moved {source} to {destination}"


@tool(structured_output=False, annotations=READ)
@fs_errors
def search_files(path: str, pattern: str) -> str:
    """Recursively search for files and directories matching a pattern. Searches through all subdirectories
    from the starting path. The search is case-insensitive and matches partial names. Returns full paths to
    all matching items."""
    base = existing(path, "dir")
    hits = [
        rel(c)
        for c in sorted(base.rglob("*"))
        if pattern.lower() in c.name.lower() or fnmatch.fnmatch(c.name.lower(), pattern.lower())
    ]
    return "\n".join(hits) if hits else "No matches found"


@tool(structured_output=False, annotations=READ)
@fs_errors
def get_file_info(path: str) -> str:
    """Retrieve detailed metadata about a file or directory."""
    target = existing(path)
    n = WRITES.get(rel(target), 0)
    lines = [
        f"size: {target.stat().st_size if target.is_file() else 0}",
        f"modified: 2025-01-01T00:00:{n:02d}Z",
        f"isDirectory: {str(target.is_dir()).lower()}",
        f"isFile: {str(target.is_file()).lower()}",
    ]
    return "\n".join(lines)


@tool(structured_output=False, annotations=READ)
@fs_errors
def list_allowed_directories() -> str:
    """Returns the list of directories that this server is allowed to access."""
    return "Allowed directories:\n."


if __name__ == "__main__":
    if ARGS.http:
        srv.run("streamable-http", port=ARGS.http)
    else:
        srv.run("stdio")
