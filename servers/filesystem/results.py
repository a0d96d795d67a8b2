"""filesystem: what its tools answer (the result models), and a node as a listing entry."""

from __future__ import annotations

from pydantic import BaseModel, Field

from servers.filesystem.rules import _perm_string, _size
from servers.filesystem.world import DIR_SIZE, FsWorld, Kind, Node, TrashItem, User


class Entry(BaseModel):
    path: str
    name: str
    kind: Kind
    size: int
    owner: str
    group: str
    mode: str = Field(description="Octal permission bits, e.g. '644'")
    permissions: str = Field(description="ls-style permission string, e.g. '-rw-r--r--'")
    modified_at: str
    target: str | None = Field(default=None, description="Link target (symlinks only)")
    tags: list[str] = []


class FileInfo(Entry):
    created_at: str
    inode: str
    binary: bool
    readable: bool
    writable: bool
    entries: int | None = Field(default=None, description="Number of entries (directories only)")


class Listing(BaseModel):
    path: str
    entries: list[Entry]
    total: int


class PathList(BaseModel):
    entries: list[Entry]
    total: int
    skipped: list[str] = Field(default=[], description="Directories that could not be searched (permission denied)")


class Cwd(BaseModel):
    path: str


class WhoAmI(BaseModel):
    username: str
    groups: list[str]
    home: str
    cwd: str


class UserList(BaseModel):
    users: list[User]
    groups: list[str]
    total: int


class TreeEntry(BaseModel):
    path: str
    kind: Kind
    depth: int


class Tree(BaseModel):
    path: str
    tree: str
    entries: list[TreeEntry]
    directories: int
    files: int


class FileContent(BaseModel):
    path: str
    content: str
    start_line: int
    end_line: int
    total_lines: int
    size: int


class Lines(BaseModel):
    path: str
    lines: list[str]
    count: int
    total_lines: int


class WordCount(BaseModel):
    path: str
    lines: int
    words: int
    bytes: int
    characters: int


class GrepMatch(BaseModel):
    path: str
    line_number: int
    line: str


class GrepResult(BaseModel):
    pattern: str
    matches: list[GrepMatch]
    total: int
    files_searched: int
    skipped: list[str] = []


class DuEntry(BaseModel):
    path: str
    kind: Kind
    size: int


class DiskUsage(BaseModel):
    path: str
    size: int
    human: str
    children: list[DuEntry]
    skipped: list[str] = []


class FsUsage(BaseModel):
    capacity_bytes: int
    used_bytes: int
    free_bytes: int
    used_percent: float
    username: str
    quota_bytes: int
    quota_used_bytes: int
    trash_bytes: int
    by_directory: list[DuEntry]


class DiffResult(BaseModel):
    path_a: str
    path_b: str
    identical: bool
    added: int
    removed: int
    diff: str


class WriteResult(BaseModel):
    path: str
    size: int
    created: bool
    modified_at: str


class Moved(BaseModel):
    source: str
    path: str = Field(description="The new location")
    kind: Kind


class Copied(BaseModel):
    source: str
    path: str = Field(description="The new copy")
    kind: Kind
    files_copied: int
    bytes_copied: int


class Removed(BaseModel):
    path: str
    kind: Kind
    removed_count: int
    freed_bytes: int


class TrashList(BaseModel):
    items: list[TrashItem]
    total: int
    total_bytes: int


class Restored(BaseModel):
    trash_id: str
    path: str
    kind: Kind


class Emptied(BaseModel):
    removed_count: int
    freed_bytes: int


class LinkInfo(BaseModel):
    path: str
    target: str
    resolved_path: str
    target_exists: bool


class Tags(BaseModel):
    path: str
    tags: list[str]


class TagCount(BaseModel):
    tag: str
    count: int


class TagList(BaseModel):
    tags: list[TagCount]
    total: int


class ReplaceResult(BaseModel):
    path: str
    replacements: int
    size: int


def _human(n: int) -> str:
    for unit in ("B", "K", "M", "G"):
        if n < 1024 or unit == "G":
            return f"{n}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def _entry(w: FsWorld, node: Node, path: str) -> Entry:
    size = DIR_SIZE if node.kind == "directory" else _size(w, node)
    return Entry(
        path=path,
        name=node.name or "/",
        kind=node.kind,
        size=size,
        owner=node.owner,
        group=node.group,
        mode=node.mode,
        permissions=_perm_string(node),
        modified_at=node.modified_at,
        target=node.target,
        tags=list(node.tags),
    )
