"""filesystem: the rules its tools share: resolving paths, rwx permissions, the quota, and making, walking,
moving and removing nodes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from servers.filesystem.world import MAX_LINK_DEPTH, NOW, FsWorld, Kind, Node
from servers.kit import InvalidArgument, NotFound, PermissionDenied, StateConflict


def _stamp(w: FsWorld) -> str:
    w.clock += 1
    return (NOW + timedelta(seconds=w.clock)).strftime("%Y-%m-%dT%H:%M:%S")


def _path_of(w: FsWorld, node: Node) -> str:
    parts = []
    while node.parent_id is not None:
        parts.append(node.name)
        node = w.nodes[node.parent_id]
    if node.node_id != w.root_id:
        return "(trash)/" + "/".join(reversed(parts))
    return "/" + "/".join(reversed(parts))


def _norm(w: FsWorld, path: str, base: list[str]) -> list[str]:
    if "\x00" in path:
        raise InvalidArgument("path must not contain NUL characters")
    if path == "~" or path.startswith("~/"):
        path = w.users[w.user].home + path[1:]
    comps = [] if path.startswith("/") else list(base)
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if comps:
                comps.pop()
        else:
            comps.append(part)
    return comps


def _cwd_comps(w: FsWorld) -> list[str]:
    node = w.nodes.get(w.cwd_id)
    p = _path_of(w, node) if node is not None else w.users[w.user].home
    if p.startswith("(trash)"):
        p = w.users[w.user].home
    return [c for c in p.split("/") if c]


def _abs(w: FsWorld, path: str) -> list[str]:
    return _norm(w, path, _cwd_comps(w))


def _show(comps: list[str]) -> str:
    return "/" + "/".join(comps)


def _bits(w: FsWorld, node: Node) -> int:
    if w.user == "root":
        return 7
    if node.owner == w.user:
        return int(node.mode[0])
    if node.group in w.users[w.user].groups:
        return int(node.mode[1])
    return int(node.mode[2])


def _perm_string(node: Node) -> str:
    head = {"file": "-", "directory": "d", "symlink": "l"}[node.kind]
    out = head
    for ch in node.mode:
        v = int(ch)
        out += ("r" if v & 4 else "-") + ("w" if v & 2 else "-") + ("x" if v & 1 else "-")
    return out


def _deny(w: FsWorld, node: Node, path: str, action: str) -> PermissionDenied:
    return PermissionDenied(
        f"permission denied: cannot {action} '{path}' ({_perm_string(node)} {node.owner}:{node.group}; "
        f"you are {w.user}, groups {','.join(w.users[w.user].groups)})"
    )


def _need(w: FsWorld, node: Node, bit: str, path: str, action: str) -> None:
    if node.kind == "symlink":
        return
    if not _bits(w, node) & {"r": 4, "w": 2, "x": 1}[bit]:
        raise _deny(w, node, path, action)


def _walk(w: FsWorld, comps: list[str], follow: bool, shown: str, depth: int = 0) -> Node:
    node = w.nodes[w.root_id]
    for i, name in enumerate(comps):
        here = _show(comps[:i])
        if node.kind != "directory":
            raise InvalidArgument(f"not a directory: '{here}' in path '{shown}' is a {node.kind}")
        _need(w, node, "x", here, "enter directory")
        cid = node.children.get(name)
        if cid is None:
            raise NotFound(
                f"no such file or directory: '{shown}' ('{_show(comps[: i + 1])}' does not exist; ls '{here}' shows what is there)"
            )
        node = w.nodes[cid]
        if node.kind == "symlink" and (i < len(comps) - 1 or follow):
            if depth >= MAX_LINK_DEPTH:
                raise InvalidArgument(f"too many levels of symbolic links resolving '{shown}'")
            node = _walk(w, _norm(w, node.target or "", comps[:i]), True, shown, depth + 1)
    return node


def _resolve(w: FsWorld, path: str, follow: bool = True) -> tuple[Node, str]:
    comps = _abs(w, path)
    return _walk(w, comps, follow, _show(comps)), _show(comps)


def _parent(w: FsWorld, path: str) -> tuple[Node, str, str]:
    """The directory that holds ``path``, the final name, and the absolute path."""
    comps = _abs(w, path)
    if not comps:
        raise InvalidArgument("path '/' is the root directory and cannot be used here")
    shown = _show(comps)
    parent = _walk(w, comps[:-1], True, shown)
    if parent.kind != "directory":
        raise InvalidArgument(f"not a directory: '{_show(comps[:-1])}'")
    name = comps[-1]
    if len(name) > 255:
        raise InvalidArgument(f"file name '{name[:40]}...' is longer than 255 characters")
    return parent, name, shown


def _child(w: FsWorld, parent: Node, name: str) -> Node | None:
    cid = parent.children.get(name)
    return w.nodes[cid] if cid else None


def _need_dir_write(w: FsWorld, parent: Node, path: str, action: str) -> None:
    if _bits(w, parent) & 3 != 3:
        raise PermissionDenied(
            f"permission denied: cannot {action} '{path}': no write access to directory '{_path_of(w, parent)}' "
            f"({_perm_string(parent)} {parent.owner}:{parent.group}; you are {w.user}, "
            f"groups {','.join(w.users[w.user].groups)})"
        )


def _size(w: FsWorld, node: Node) -> int:
    if node.kind == "file":
        return node.binary_size if node.binary_size is not None else len(node.content.encode())
    if node.kind == "symlink":
        return len((node.target or "").encode())
    return sum(_size(w, n) for n in _descendants(w, node) if n.kind != "directory")


def _descendants(w: FsWorld, node: Node) -> list[Node]:
    """``node`` and everything below it, depth first in directory order; iterative, so no tree is too deep."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        if n.kind == "directory":
            stack.extend(w.nodes[c] for c in reversed(n.children.values()))
    return out


def _is_ancestor(w: FsWorld, anc: Node, node: Node | None) -> bool:
    while node is not None:
        if node.node_id == anc.node_id:
            return True
        node = w.nodes.get(node.parent_id) if node.parent_id else None
    return False


def _protect(w: FsWorld, node: Node, path: str, action: str) -> None:
    if node.node_id == w.root_id:
        raise PermissionDenied(f"cannot {action} the root directory '/'")
    if _is_ancestor(w, node, w.nodes.get(w.cwd_id)):
        raise StateConflict(
            f"cannot {action} '{path}': it is or contains the current working directory "
            f"({_path_of(w, w.nodes[w.cwd_id])}); cd elsewhere first"
        )
    if node.kind == "directory" and _path_of(w, node) in {u.home for u in w.users.values()}:
        raise PermissionDenied(f"cannot {action} '{path}': it is a user's home directory")


def _owned_bytes(w: FsWorld, user: str) -> int:
    return sum(_size(w, n) for n in w.nodes.values() if n.kind == "file" and n.owner == user)


def _quota(w: FsWorld, extra: int) -> None:
    if extra <= 0:
        return
    used = _owned_bytes(w, w.user)
    if used + extra > w.quota_bytes:
        raise StateConflict(
            f"disk quota exceeded: user {w.user} uses {used} of {w.quota_bytes} bytes and this needs {extra} more; "
            "rm files or empty_trash to free space (get_disk_usage shows usage)"
        )


def _text(w: FsWorld, node: Node, path: str) -> str:
    if node.kind == "directory":
        raise InvalidArgument(f"'{path}' is a directory, not a file; ls lists its entries")
    _need(w, node, "r", path, "read")
    if node.binary_size is not None:
        raise StateConflict(
            f"'{path}' is a binary file ({node.binary_size} bytes) and has no text content; stat shows its metadata"
        )
    return node.content


def _new_node(
    w: FsWorld,
    parent: Node,
    name: str,
    kind: Kind,
    content: str = "",
    target: str | None = None,
    mode: str | None = None,
) -> Node:
    t = _stamp(w)
    u = w.users[w.user]
    nid = w.new_id("INO", 5)
    n = Node(
        node_id=nid,
        name=name,
        kind=kind,
        parent_id=parent.node_id,
        content=content,
        target=target,
        owner=w.user,
        group=u.groups[0],
        mode=mode or {"file": "644", "directory": "755", "symlink": "777"}[kind],
        created_at=t,
        modified_at=t,
    )
    w.nodes[nid] = n
    parent.children[name] = nid
    parent.modified_at = t
    return n


def _delete_tree(w: FsWorld, node: Node) -> int:
    gone = _descendants(w, node)
    for n in gone:
        w.nodes.pop(n.node_id, None)
    return len(gone)


def _check_tree_removable(w: FsWorld, node: Node, path: str, force: bool, action: str) -> None:
    for n in _descendants(w, node):
        p = path + _path_of(w, n)[len(_path_of(w, node)) :]
        if n.kind == "directory" and (n is not node or n.children):
            _need(w, n, "r", p, f"{action} '{path}': cannot list")
            _need(w, n, "w", p, f"{action} '{path}': cannot remove the entries of")
        if n.kind == "file" and not force and not _bits(w, n) & 2:
            raise PermissionDenied(
                f"'{p}' is write-protected ({_perm_string(n)} {n.owner}:{n.group}); pass force=true to remove it anyway"
            )


def _join(base: str, name: str) -> str:
    return base.rstrip("/") + "/" + name


def _iter_tree(
    w: FsWorld, node: Node, path: str, max_depth: int, skipped: list[str], depth: int = 0
) -> Iterator[tuple[Node, str, int]]:
    """Yield (node, path, depth) below ``node`` without following symlinks; unreadable directories are skipped."""

    def enter(n: Node, p: str, d: int) -> Iterator[tuple[Node, str, int]] | None:
        if n.kind != "directory" or d >= max_depth:
            return None
        if not (_bits(w, n) & 4 and _bits(w, n) & 1):
            skipped.append(p)
            return None
        return ((w.nodes[n.children[name]], _join(p, name), d + 1) for name in sorted(n.children))

    first = enter(node, path, depth)
    stack = [first] if first is not None else []  # iterative: a tree of any depth is walked without recursion
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        yield item
        below = enter(*item)
        if below is not None:
            stack.append(below)


# ------------------------------------------------------------------ moving and copying
def _destination(w: FsWorld, src: Node, destination: str) -> tuple[Node, str, str]:
    """(parent, name, shown) for placing ``src`` at ``destination`` (into it when it is a directory)."""
    try:
        d_node, d_shown = _resolve(w, destination)
    except NotFound:
        d_node = None
    if d_node is not None and d_node.kind == "directory":
        c = _child(w, d_node, src.name)
        shown = _join(d_shown, src.name)
        if c is not None:
            raise StateConflict(f"file exists: '{shown}' already exists; choose another destination or remove it first")
        return d_node, src.name, shown
    parent, name, shown = _parent(w, destination)
    if _child(w, parent, name) is not None:
        raise StateConflict(f"file exists: '{shown}' already exists; choose another destination or remove it first")
    return parent, name, shown
