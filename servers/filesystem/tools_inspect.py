"""filesystem tools, pwd to get_disk_usage (in tools/list order)."""

from __future__ import annotations

import difflib
import fnmatch
import re
import warnings
from typing import Annotated, Any, Literal

import re2
from pydantic import Field

from servers.filesystem.results import (
    Cwd,
    DiffResult,
    DiskUsage,
    DuEntry,
    FileContent,
    FileInfo,
    FsUsage,
    GrepMatch,
    GrepResult,
    Lines,
    Listing,
    PathList,
    Tree,
    TreeEntry,
    UserList,
    WhoAmI,
    WordCount,
    _entry,
    _human,
)
from servers.filesystem.rules import (
    _bits,
    _cwd_comps,
    _iter_tree,
    _join,
    _need,
    _owned_bytes,
    _path_of,
    _resolve,
    _show,
    _size,
    _text,
)
from servers.filesystem.world import DATE_PATTERN, TOOLS, DirArg, FsWorld, Kind, Node, PathArg
from servers.kit import InvalidArgument


@TOOLS.tool(read_only=True)
def pwd(w: FsWorld) -> Cwd:
    """Print the current working directory (relative paths are resolved against it)."""
    return Cwd(path=_show(_cwd_comps(w)))


@TOOLS.tool(idempotent=True)
def cd(w: FsWorld, path: DirArg) -> Cwd:
    """Change the current working directory; '..' goes up, '~' goes home."""
    node, shown = _resolve(w, path)
    if node.kind != "directory":
        raise InvalidArgument(f"not a directory: '{shown}' is a {node.kind}")
    _need(w, node, "x", shown, "enter directory")
    w.cwd_id = node.node_id
    return Cwd(path=_path_of(w, node))


@TOOLS.tool(read_only=True)
def whoami(w: FsWorld) -> WhoAmI:
    """Show who you are: username, groups (they decide group permissions), home directory and current directory."""
    u = w.users[w.user]
    return WhoAmI(username=u.username, groups=u.groups, home=u.home, cwd=_show(_cwd_comps(w)))


@TOOLS.tool(read_only=True)
def list_users(w: FsWorld) -> UserList:
    """List the system's users and groups (valid values for chown)."""
    groups = sorted({g for u in w.users.values() for g in u.groups})
    return UserList(users=list(w.users.values()), groups=groups, total=len(w.users))


# ------------------------------------------------------------------ reading the tree
@TOOLS.tool(read_only=True)
def ls(
    w: FsWorld,
    path: DirArg = ".",
    all: Annotated[bool, Field(description="Include hidden entries (names starting with '.')")] = False,
    sort_by: Annotated[
        Literal["name", "size", "modified"], Field(description="Sort order (size and modified: largest/newest first)")
    ] = "name",
) -> Listing:
    """List a directory's entries with size, owner, permissions and modification time (a file lists itself)."""
    node, shown = _resolve(w, path)
    if node.kind != "directory":
        return Listing(path=shown, entries=[_entry(w, node, shown)], total=1)
    _need(w, node, "r", shown, "list directory")
    out = [
        _entry(w, w.nodes[cid], _join(shown, name))
        for name, cid in node.children.items()
        if all or not name.startswith(".")
    ]
    if sort_by == "name":
        out.sort(key=lambda e: e.name)
    elif sort_by == "size":
        out.sort(key=lambda e: (-e.size, e.name))
    else:
        out.sort(key=lambda e: (e.modified_at, e.name), reverse=True)
    return Listing(path=shown, entries=out, total=len(out))


@TOOLS.tool(read_only=True)
def tree(
    w: FsWorld,
    path: DirArg = ".",
    max_depth: Annotated[int, Field(description="How many levels to descend", ge=1, le=8)] = 3,
    all: Annotated[bool, Field(description="Include hidden entries")] = False,
) -> Tree:
    """Show a directory hierarchy as an indented tree (symlinks are shown, not followed)."""
    node, shown = _resolve(w, path)
    if node.kind != "directory":
        raise InvalidArgument(f"not a directory: '{shown}' is a {node.kind}")
    _need(w, node, "r", shown, "list directory")
    lines, entries, nd, nf = [shown], [], 0, 0

    def rec(n: Node, p: str, prefix: str, depth: int) -> None:
        nonlocal nd, nf
        if not (_bits(w, n) & 4 and _bits(w, n) & 1):
            lines.append(prefix + "└── [permission denied]")
            return
        names = [k for k in sorted(n.children) if all or not k.startswith(".")]
        for i, name in enumerate(names):
            c = w.nodes[n.children[name]]
            last = i == len(names) - 1
            label = name + ("/" if c.kind == "directory" else f" -> {c.target}" if c.kind == "symlink" else "")
            lines.append(prefix + ("└── " if last else "├── ") + label)
            entries.append(TreeEntry(path=_join(p, name), kind=c.kind, depth=depth))
            if c.kind == "directory":
                nd += 1
                if depth < max_depth:
                    rec(c, _join(p, name), prefix + ("    " if last else "│   "), depth + 1)
            else:
                nf += 1

    rec(node, shown, "", 1)
    return Tree(path=shown, tree="\n".join(lines), entries=entries, directories=nd, files=nf)


@TOOLS.tool(read_only=True)
def stat(
    w: FsWorld,
    path: PathArg,
    follow_symlinks: Annotated[bool, Field(description="Describe the link's target instead of the link itself")] = True,
) -> FileInfo:
    """Show a file's or directory's metadata: kind, size, owner, group, permissions, times, tags and whether you can read/write it."""
    node, shown = _resolve(w, path, follow_symlinks)
    e = _entry(w, node, shown)
    b = _bits(w, node) if node.kind != "symlink" else 7
    return FileInfo(
        **e.model_dump(),
        created_at=node.created_at,
        inode=node.node_id,
        binary=node.binary_size is not None,
        readable=bool(b & 4),
        writable=bool(b & 2),
        entries=len(node.children) if node.kind == "directory" else None,
    )


@TOOLS.tool(read_only=True)
def read_file(
    w: FsWorld,
    path: PathArg,
    offset: Annotated[int, Field(description="First line to return (1-based)", ge=1)] = 1,
    limit: Annotated[int, Field(description="Maximum number of lines to return", ge=1, le=5000)] = 500,
) -> FileContent:
    """Read a text file (optionally a window of lines); binary files and directories cannot be read."""
    node, shown = _resolve(w, path)
    text = _text(w, node, shown)
    lines = text.splitlines(keepends=True)
    chunk = lines[offset - 1 : offset - 1 + limit]
    return FileContent(
        path=shown,
        content="".join(chunk),
        start_line=offset,
        end_line=offset - 1 + len(chunk),
        total_lines=len(lines),
        size=_size(w, node),
    )


@TOOLS.tool(read_only=True)
def head(
    w: FsWorld, path: PathArg, count: Annotated[int, Field(description="Number of lines", ge=1, le=1000)] = 10
) -> Lines:
    """Show the first lines of a text file."""
    node, shown = _resolve(w, path)
    lines = _text(w, node, shown).splitlines()
    return Lines(path=shown, lines=lines[:count], count=len(lines[:count]), total_lines=len(lines))


@TOOLS.tool(read_only=True)
def tail(
    w: FsWorld, path: PathArg, count: Annotated[int, Field(description="Number of lines", ge=1, le=1000)] = 10
) -> Lines:
    """Show the last lines of a text file (e.g. the newest log entries)."""
    node, shown = _resolve(w, path)
    lines = _text(w, node, shown).splitlines()
    out = lines[-count:]
    return Lines(path=shown, lines=out, count=len(out), total_lines=len(lines))


@TOOLS.tool(read_only=True)
def wc(w: FsWorld, path: PathArg) -> WordCount:
    """Count lines, words, bytes and characters of a text file."""
    node, shown = _resolve(w, path)
    text = _text(w, node, shown)
    return WordCount(
        path=shown, lines=text.count("\n"), words=len(text.split()), bytes=len(text.encode()), characters=len(text)
    )


@TOOLS.tool(read_only=True)
def diff(
    w: FsWorld,
    path_a: Annotated[str, Field(description="First (old) text file path", min_length=1)],
    path_b: Annotated[str, Field(description="Second (new) text file path", min_length=1)],
    context: Annotated[int, Field(description="Lines of context around changes", ge=0, le=10)] = 3,
) -> DiffResult:
    """Compare two text files and return a unified diff with counts of added and removed lines."""
    na, sa = _resolve(w, path_a)
    nb, sb = _resolve(w, path_b)
    ta, tb = _text(w, na, sa), _text(w, nb, sb)
    lines = list(difflib.unified_diff(ta.splitlines(), tb.splitlines(), fromfile=sa, tofile=sb, n=context, lineterm=""))
    added = sum(1 for ln_ in lines if ln_.startswith("+") and not ln_.startswith("+++"))
    removed = sum(1 for ln_ in lines if ln_.startswith("-") and not ln_.startswith("---"))
    return DiffResult(path_a=sa, path_b=sb, identical=ta == tb, added=added, removed=removed, diff="\n".join(lines))


# ------------------------------------------------------------------ searching
@TOOLS.tool(read_only=True)
def find(
    w: FsWorld,
    path: DirArg = ".",
    name: Annotated[str | None, Field(description="Shell glob on the entry name, e.g. '*.md' or 'report*'")] = None,
    kind: Annotated[Kind | None, Field(description="Only entries of this kind")] = None,
    min_size: Annotated[int | None, Field(description="Only files of at least this many bytes", ge=0)] = None,
    max_size: Annotated[int | None, Field(description="Only files of at most this many bytes", ge=0)] = None,
    modified_after: Annotated[
        str | None, Field(description="Only entries modified on or after this date, YYYY-MM-DD", pattern=DATE_PATTERN)
    ] = None,
    max_depth: Annotated[int, Field(description="How many levels to descend", ge=1, le=20)] = 10,
    limit: Annotated[int, Field(description="Maximum number of results", ge=1, le=500)] = 100,
) -> PathList:
    """Find files and directories below a directory by name glob, kind, size or modification date (like find(1))."""
    node, shown = _resolve(w, path)
    if node.kind != "directory":
        raise InvalidArgument(f"not a directory: '{shown}' is a {node.kind}")
    skipped: list[str] = []
    out = []
    for n, p, _ in _iter_tree(w, node, shown, max_depth, skipped):
        if name is not None and not fnmatch.fnmatchcase(n.name, name):
            continue
        if kind is not None and n.kind != kind:
            continue
        size = _size(w, n)
        if (min_size is not None or max_size is not None) and n.kind != "file":
            continue
        if (min_size is not None and size < min_size) or (max_size is not None and size > max_size):
            continue
        if modified_after is not None and n.modified_at[:10] < modified_after:
            continue
        out.append(_entry(w, n, p))
    return PathList(entries=out[:limit], total=len(out[:limit]), skipped=skipped)


@TOOLS.tool(read_only=True)
def search_by_extension(
    w: FsWorld,
    extension: Annotated[
        str,
        Field(
            description="File extension with or without the dot, e.g. 'md' or '.py'", pattern=r"^\.?[A-Za-z0-9]{1,10}$"
        ),
    ],
    path: DirArg = "~",
    limit: Annotated[int, Field(description="Maximum number of results", ge=1, le=500)] = 100,
) -> PathList:
    """Find all files with a given extension below a directory (default: your home), case-insensitively."""
    node, shown = _resolve(w, path)
    if node.kind != "directory":
        raise InvalidArgument(f"not a directory: '{shown}' is a {node.kind}")
    ext = "." + extension.lstrip(".").lower()
    skipped: list[str] = []
    out = [
        _entry(w, n, p)
        for n, p, _ in _iter_tree(w, node, shown, 20, skipped)
        if n.kind == "file" and n.name.lower().endswith(ext)
    ]
    return PathList(entries=out[:limit], total=len(out[:limit]), skipped=skipped)


def _linear_regex(pattern: str, ignore_case: bool) -> Any:
    """``pattern`` compiled for a linear-time engine (RE2): no pattern can make a search run for more than a time
    proportional to the text, where Python's backtracking ``re`` can take hours on ``(a+)+$``.

    The pattern is checked with Python's ``re`` first (so a malformed one is reported as before), then compiled
    with RE2; the few Python constructs RE2 lacks (backreferences, lookaround, possessive quantifiers and atomic
    groups: the ones that need backtracking) are refused with a named error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "possible nested set" and friends: the pattern is still valid
            re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise InvalidArgument(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None
    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.log_errors = False
    try:
        return re2.compile(_re2_syntax(pattern), options)
    except re2.error as exc:
        why = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise InvalidArgument(
            f"pattern {pattern!r} cannot be searched in linear time ({why}); grep does not support "
            "backreferences, lookahead/lookbehind, possessive quantifiers, atomic groups or repetition "
            "counts over 1000: rewrite the pattern without them"
        ) from None


def _re2_syntax(pattern: str) -> str:
    """Python's ``\\Z`` (end of text) is RE2's ``\\z``; everything else grep accepts is spelled the same."""
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            out.append("\\z" if pattern[i + 1] == "Z" else pattern[i : i + 2])
            i += 2
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


@TOOLS.tool(read_only=True)
def grep(
    w: FsWorld,
    pattern: Annotated[
        str, Field(description="Regular expression (Python syntax) to search for", min_length=1, max_length=500)
    ],
    path: PathArg = ".",
    recursive: Annotated[
        bool, Field(description="Search every file below a directory (required when path is a directory)")
    ] = True,
    ignore_case: Annotated[bool, Field(description="Case-insensitive matching")] = False,
    include: Annotated[
        str | None, Field(description="Only search files whose name matches this glob, e.g. '*.py'")
    ] = None,
    max_results: Annotated[int, Field(description="Stop after this many matching lines", ge=1, le=1000)] = 100,
) -> GrepResult:
    """Search text files for lines matching a regular expression; returns path, line number and line for each match."""
    rx = _linear_regex(pattern, ignore_case)
    node, shown = _resolve(w, path)
    skipped: list[str] = []
    if node.kind == "directory":
        if not recursive:
            raise InvalidArgument(f"'{shown}' is a directory; pass recursive=true or give a file path")
        _need(w, node, "r", shown, "list directory")
        files = [(n, p) for n, p, _ in _iter_tree(w, node, shown, 20, skipped) if n.kind == "file"]
    else:
        _text(w, node, shown)
        files = [(node, shown)]
    matches: list[GrepMatch] = []
    searched = 0
    for n, p in files:
        if include is not None and not fnmatch.fnmatchcase(n.name, include):
            continue
        if n.binary_size is not None:
            continue
        if not _bits(w, n) & 4:
            skipped.append(p)
            continue
        searched += 1
        for i, line in enumerate(n.content.splitlines(), 1):
            if rx.search(line):
                matches.append(GrepMatch(path=p, line_number=i, line=line[:500]))
                if len(matches) >= max_results:
                    break
        if len(matches) >= max_results:
            break
    return GrepResult(pattern=pattern, matches=matches, total=len(matches), files_searched=searched, skipped=skipped)


@TOOLS.tool(read_only=True)
def list_recent(
    w: FsWorld,
    path: DirArg = "~",
    limit: Annotated[int, Field(description="How many files", ge=1, le=100)] = 10,
) -> PathList:
    """List the most recently modified files below a directory (default: your home), newest first."""
    node, shown = _resolve(w, path)
    if node.kind != "directory":
        raise InvalidArgument(f"not a directory: '{shown}' is a {node.kind}")
    skipped: list[str] = []
    files = [(n, p) for n, p, _ in _iter_tree(w, node, shown, 20, skipped) if n.kind == "file"]
    files.sort(key=lambda t: (t[0].modified_at, t[1]), reverse=True)
    out = [_entry(w, n, p) for n, p in files[:limit]]
    return PathList(entries=out, total=len(out), skipped=skipped)


@TOOLS.tool(read_only=True)
def du(w: FsWorld, path: PathArg = ".") -> DiskUsage:
    """Show the total size of a directory (or file) and the size of each direct child, largest first."""
    node, shown = _resolve(w, path)
    skipped: list[str] = []
    if node.kind != "directory":
        return DiskUsage(path=shown, size=_size(w, node), human=_human(_size(w, node)), children=[])
    _need(w, node, "r", shown, "list directory")
    kids = []
    for name, cid in node.children.items():
        c = w.nodes[cid]
        if c.kind == "directory" and not _bits(w, c) & 4:
            skipped.append(_join(shown, name))
        kids.append(DuEntry(path=_join(shown, name), kind=c.kind, size=_size(w, c)))
    kids.sort(key=lambda k: (-k.size, k.path))
    total = _size(w, node)
    return DiskUsage(path=shown, size=total, human=_human(total), children=kids, skipped=skipped)


@TOOLS.tool(read_only=True)
def get_disk_usage(w: FsWorld) -> FsUsage:
    """Show disk capacity, used and free space, your quota usage, the space held by the trash, and usage per top-level directory."""
    root = w.nodes[w.root_id]
    used = sum(_size(w, n) for n in w.nodes.values() if n.kind == "file")
    trash = sum(_size(w, w.nodes[t.node_id]) for t in w.trash.values() if t.node_id in w.nodes)
    by_dir = sorted(
        (
            DuEntry(path="/" + name, kind=w.nodes[cid].kind, size=_size(w, w.nodes[cid]))
            for name, cid in root.children.items()
        ),
        key=lambda d: (-d.size, d.path),
    )
    return FsUsage(
        capacity_bytes=w.capacity_bytes,
        used_bytes=used,
        free_bytes=w.capacity_bytes - used,
        used_percent=round(100 * used / w.capacity_bytes, 2),
        username=w.user,
        quota_bytes=w.quota_bytes,
        quota_used_bytes=_owned_bytes(w, w.user),
        trash_bytes=trash,
        by_directory=by_dir,
    )
