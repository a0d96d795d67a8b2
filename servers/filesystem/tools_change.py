"""filesystem tools, mkdir to find_by_tag (in tools/list order)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from servers.filesystem.results import (
    Copied,
    Emptied,
    Entry,
    LinkInfo,
    Moved,
    PathList,
    Removed,
    ReplaceResult,
    Restored,
    TagCount,
    TagList,
    Tags,
    TrashList,
    WriteResult,
    _entry,
)
from servers.filesystem.rules import (
    _abs,
    _check_tree_removable,
    _child,
    _delete_tree,
    _descendants,
    _destination,
    _is_ancestor,
    _join,
    _need,
    _need_dir_write,
    _new_node,
    _norm,
    _parent,
    _path_of,
    _protect,
    _quota,
    _resolve,
    _show,
    _size,
    _stamp,
    _text,
    _walk,
)
from servers.filesystem.world import TOOLS, Content, DirArg, FsWorld, Node, PathArg, TagArg, TrashItem
from servers.kit import InvalidArgument, NotFound, PermissionDenied, StateConflict, not_found


# ------------------------------------------------------------------ creating and writing
@TOOLS.tool()
def mkdir(
    w: FsWorld,
    path: PathArg,
    parents: Annotated[
        bool, Field(description="Also create missing parent directories; no error if the directory exists")
    ] = False,
) -> Entry:
    """Create a directory (with parents=true, also its missing parents, like mkdir -p)."""
    comps = _abs(w, path)
    if not comps:
        raise StateConflict("file exists: '/'")
    if parents:
        node = w.nodes[w.root_id]
        for i, name in enumerate(comps):
            here = _show(comps[: i + 1])
            c = _child(w, node, name)
            if c is not None and c.kind == "symlink":
                c = _walk(w, comps[: i + 1], True, here)
            if c is None:
                _need_dir_write(w, node, here, "create")
                c = _new_node(w, node, name, "directory")
            elif c.kind != "directory":
                raise StateConflict(f"file exists: '{here}' is a {c.kind}, not a directory")
            else:
                _need(w, c, "x", here, "enter directory")
            node = c
        return _entry(w, node, _show(comps))
    parent, name, shown = _parent(w, path)
    if _child(w, parent, name) is not None:
        raise StateConflict(f"file exists: '{shown}' already exists")
    _need_dir_write(w, parent, shown, "create")
    return _entry(w, _new_node(w, parent, name, "directory"), shown)


@TOOLS.tool()
def touch(w: FsWorld, path: PathArg) -> Entry:
    """Create an empty file, or update the modification time of an existing one."""
    parent, name, shown = _parent(w, path)
    c = _child(w, parent, name)
    if c is None:
        _need_dir_write(w, parent, shown, "create")
        return _entry(w, _new_node(w, parent, name, "file"), shown)
    if c.kind == "symlink":
        c, _ = _resolve(w, path)
    _need(w, c, "w", shown, "modify")
    c.modified_at = _stamp(w)
    return _entry(w, c, shown)


@TOOLS.tool(destructive=True, idempotent=True)
def write_file(
    w: FsWorld,
    path: PathArg,
    content: Content,
    overwrite: Annotated[
        bool, Field(description="Replace the content if the file already exists (otherwise that is an error)")
    ] = False,
) -> WriteResult:
    """Write text to a file, creating it; replacing an existing file's content needs overwrite=true."""
    parent, name, shown = _parent(w, path)
    c = _child(w, parent, name)
    if c is not None and c.kind == "symlink":
        c, _ = _resolve(w, path)
    if c is None:
        _need_dir_write(w, parent, shown, "create")
        _quota(w, len(content.encode()))
        n = _new_node(w, parent, name, "file", content=content)
        return WriteResult(path=shown, size=_size(w, n), created=True, modified_at=n.modified_at)
    if c.kind == "directory":
        raise InvalidArgument(f"'{shown}' is a directory; give a file path")
    if not overwrite:
        raise StateConflict(
            f"file exists: '{shown}' ({_size(w, c)} bytes); pass overwrite=true to replace it or append_file to add to it"
        )
    _need(w, c, "w", shown, "write")
    _quota(w, len(content.encode()) - _size(w, c) if c.owner == w.user else 0)
    c.content, c.binary_size, c.modified_at = content, None, _stamp(w)
    return WriteResult(path=shown, size=_size(w, c), created=False, modified_at=c.modified_at)


@TOOLS.tool()
def append_file(
    w: FsWorld,
    path: PathArg,
    content: Annotated[
        str,
        Field(
            description="Text to add at the end (include a trailing newline yourself)", min_length=1, max_length=100_000
        ),
    ],
) -> WriteResult:
    """Append text to the end of a file, creating the file if it does not exist."""
    parent, name, shown = _parent(w, path)
    c = _child(w, parent, name)
    if c is not None and c.kind == "symlink":
        c, _ = _resolve(w, path)
    if c is None:
        _need_dir_write(w, parent, shown, "create")
        _quota(w, len(content.encode()))
        n = _new_node(w, parent, name, "file", content=content)
        return WriteResult(path=shown, size=_size(w, n), created=True, modified_at=n.modified_at)
    _text(w, c, shown)
    _need(w, c, "w", shown, "write")
    _quota(w, len(content.encode()) if c.owner == w.user else 0)
    c.content += content
    c.modified_at = _stamp(w)
    return WriteResult(path=shown, size=_size(w, c), created=False, modified_at=c.modified_at)


@TOOLS.tool(idempotent=False)
def replace_in_file(
    w: FsWorld,
    path: PathArg,
    old_text: Annotated[str, Field(description="Exact text to find", min_length=1)],
    new_text: Annotated[str, Field(description="Replacement text (may be empty)")],
    count: Annotated[int, Field(description="Replace at most this many occurrences; 0 replaces all", ge=0)] = 0,
) -> ReplaceResult:
    """Replace exact occurrences of a text in a file (like sed s/old/new/g) and return how many were replaced."""
    node, shown = _resolve(w, path)
    text = _text(w, node, shown)
    n = text.count(old_text)
    if n == 0:
        raise InvalidArgument(
            f"old_text {old_text[:60]!r} does not occur in '{shown}'; read_file or grep shows its content"
        )
    _need(w, node, "w", shown, "write")
    done = n if count == 0 else min(n, count)
    grow = done * (len(new_text.encode()) - len(old_text.encode()))  # the size change, known before allocating anything
    _quota(w, grow if node.owner == w.user else 0)
    if len(text.encode()) + grow > w.quota_bytes:  # another user's file: no quota of yours, still a bounded size
        raise InvalidArgument(
            f"replacing {done} occurrences would make '{shown}' {len(text.encode()) + grow} bytes, over the "
            f"largest file this filesystem holds ({w.quota_bytes} bytes); replace fewer (count) or shorter text"
        )
    node.content, node.modified_at = text.replace(old_text, new_text, done), _stamp(w)
    return ReplaceResult(path=shown, replacements=done, size=_size(w, node))


@TOOLS.tool()
def ln(
    w: FsWorld,
    target: Annotated[
        str,
        Field(
            description="What the link points to (absolute, or relative to the link's directory); it need not exist",
            min_length=1,
        ),
    ],
    link_path: Annotated[str, Field(description="Where to create the symbolic link", min_length=1)],
) -> Entry:
    """Create a symbolic link at link_path pointing to target (like ln -s)."""
    parent, name, shown = _parent(w, link_path)
    if _child(w, parent, name) is not None:
        raise StateConflict(f"file exists: '{shown}' already exists")
    _need_dir_write(w, parent, shown, "create")
    return _entry(w, _new_node(w, parent, name, "symlink", target=target), shown)


@TOOLS.tool(read_only=True)
def readlink(w: FsWorld, path: PathArg) -> LinkInfo:
    """Show where a symbolic link points and whether its target exists."""
    node, shown = _resolve(w, path, follow=False)
    if node.kind != "symlink":
        raise InvalidArgument(f"'{shown}' is not a symbolic link (it is a {node.kind})")
    comps = _norm(w, node.target or "", _abs(w, path)[:-1])
    try:
        _walk(w, comps, True, _show(comps))
        exists = True
    except (NotFound, InvalidArgument, PermissionDenied):
        exists = False
    return LinkInfo(path=shown, target=node.target or "", resolved_path=_show(comps), target_exists=exists)


@TOOLS.tool()
def mv(
    w: FsWorld,
    source: Annotated[str, Field(description="Path of the file, directory or link to move", min_length=1)],
    destination: Annotated[str, Field(description="New path, or an existing directory to move into", min_length=1)],
) -> Moved:
    """Move (or rename) a file, directory or symlink; an existing directory as destination receives it. Never overwrites."""
    src, s_shown = _resolve(w, source, follow=False)
    if src.node_id == w.root_id:
        raise PermissionDenied("cannot move the root directory '/'")
    if src.kind == "directory" and _path_of(w, src) in {u.home for u in w.users.values()}:
        raise PermissionDenied(f"cannot move '{s_shown}': it is a user's home directory")
    old_parent = w.nodes[src.parent_id]  # type: ignore[index]
    parent, name, shown = _destination(w, src, destination)
    if _is_ancestor(w, src, parent):
        raise InvalidArgument(f"cannot move '{s_shown}' into itself ('{shown}')")
    _need_dir_write(w, old_parent, s_shown, "remove")
    _need_dir_write(w, parent, shown, "create")
    old_parent.children.pop(src.name)
    src.name, src.parent_id = name, parent.node_id
    parent.children[name] = src.node_id
    t = _stamp(w)
    old_parent.modified_at = parent.modified_at = t
    return Moved(source=s_shown, path=shown, kind=src.kind)


@TOOLS.tool()
def rename(
    w: FsWorld,
    path: PathArg,
    new_name: Annotated[
        str,
        Field(
            description="New name in the same directory (no '/')", min_length=1, max_length=255, pattern=r"^[^/\x00]+$"
        ),
    ],
) -> Moved:
    """Rename a file, directory or link within its directory."""
    if new_name in (".", ".."):
        raise InvalidArgument("new_name cannot be '.' or '..'")
    node, shown = _resolve(w, path, follow=False)
    if node.node_id == w.root_id:
        raise PermissionDenied("cannot rename the root directory '/'")
    if node.kind == "directory" and _path_of(w, node) in {u.home for u in w.users.values()}:
        raise PermissionDenied(f"cannot rename '{shown}': it is a user's home directory")
    parent = w.nodes[node.parent_id]  # type: ignore[index]
    new_path = _join(shown.rsplit("/", 1)[0] or "/", new_name)
    if new_name == node.name:
        return Moved(source=shown, path=new_path, kind=node.kind)
    if new_name in parent.children:
        raise StateConflict(f"file exists: '{new_path}' already exists")
    _need_dir_write(w, parent, shown, "rename")
    parent.children.pop(node.name)
    node.name = new_name
    parent.children[new_name] = node.node_id
    parent.modified_at = _stamp(w)
    return Moved(source=shown, path=new_path, kind=node.kind)


def _copy_tree(w: FsWorld, src: Node, into: Node, as_name: str) -> int:
    """Copy ``src`` (and, for a directory, everything below it, children in name order) into ``into`` as
    ``as_name``; the number of files copied. Iterative, so no tree is too deep to copy."""
    files = 0
    stack = [(src, into, as_name)]
    while stack:
        n, parent, name = stack.pop()
        c = _new_node(w, parent, name, n.kind, content=n.content, target=n.target, mode=n.mode)
        c.binary_size = n.binary_size
        files += n.kind == "file"
        stack.extend((w.nodes[n.children[k]], c, k) for k in sorted(n.children, reverse=True))
    return files


@TOOLS.tool()
def cp(
    w: FsWorld,
    source: Annotated[str, Field(description="Path of the file or directory to copy", min_length=1)],
    destination: Annotated[
        str, Field(description="Path of the copy, or an existing directory to copy into", min_length=1)
    ],
    recursive: Annotated[bool, Field(description="Required to copy a directory and everything in it")] = False,
    overwrite: Annotated[bool, Field(description="Replace an existing destination file's content")] = False,
) -> Copied:
    """Copy a file (or, with recursive=true, a directory tree); copies are owned by you and count against your quota."""
    src, s_shown = _resolve(w, source)
    if src.kind == "directory" and not recursive:
        raise InvalidArgument(f"'{s_shown}' is a directory; pass recursive=true to copy it")
    tree_nodes = _descendants(w, src)
    for n in tree_nodes:
        p = s_shown + _path_of(w, n)[len(_path_of(w, src)) :]
        if n.kind != "symlink":
            _need(w, n, "r", p, "read")
        if n.kind == "directory":
            _need(w, n, "x", p, "enter directory")
    nbytes = sum(_size(w, n) for n in tree_nodes if n.kind == "file")
    if overwrite and src.kind == "file":
        try:
            d_node, d_shown = _resolve(w, destination)
        except NotFound:
            d_node = None
        if d_node is not None and d_node.kind == "directory":
            d_node = _child(w, d_node, src.name)
            d_shown = _join(d_shown, src.name)
            if d_node is not None and d_node.kind == "symlink":
                d_node, _ = _resolve(w, d_shown)
        if d_node is not None and d_node.kind == "file":
            if d_node.node_id == src.node_id:
                raise InvalidArgument(f"'{s_shown}' and '{d_shown}' are the same file")
            _need(w, d_node, "w", d_shown, "write")
            _quota(w, nbytes - (_size(w, d_node) if d_node.owner == w.user else 0))
            d_node.content, d_node.binary_size, d_node.modified_at = src.content, src.binary_size, _stamp(w)
            return Copied(source=s_shown, path=d_shown, kind="file", files_copied=1, bytes_copied=nbytes)
    parent, name, shown = _destination(w, src, destination)
    if _is_ancestor(w, src, parent):
        raise InvalidArgument(f"cannot copy '{s_shown}' into itself ('{shown}')")
    _need_dir_write(w, parent, shown, "create")
    _quota(w, nbytes)

    files = _copy_tree(w, src, parent, name)
    return Copied(source=s_shown, path=shown, kind=src.kind, files_copied=files, bytes_copied=nbytes)


# ------------------------------------------------------------------ removing, trash
@TOOLS.tool(destructive=True, idempotent=True)
def rmdir(w: FsWorld, path: DirArg) -> Removed:
    """Remove an empty directory."""
    node, shown = _resolve(w, path, follow=False)
    if node.kind != "directory":
        raise InvalidArgument(f"not a directory: '{shown}' is a {node.kind}; use rm for files and links")
    _protect(w, node, shown, "remove")
    if node.children:
        raise StateConflict(
            f"directory not empty: '{shown}' holds {len(node.children)} entries ({', '.join(sorted(node.children)[:5])}); "
            "remove them first or use rm with recursive=true"
        )
    parent = w.nodes[node.parent_id]  # type: ignore[index]
    _need_dir_write(w, parent, shown, "remove")
    parent.children.pop(node.name)
    parent.modified_at = _stamp(w)
    _delete_tree(w, node)
    return Removed(path=shown, kind="directory", removed_count=1, freed_bytes=0)


@TOOLS.tool(destructive=True, idempotent=True)
def rm(
    w: FsWorld,
    path: PathArg,
    recursive: Annotated[bool, Field(description="Required to remove a directory and everything in it")] = False,
    force: Annotated[bool, Field(description="Also remove write-protected (read-only) files")] = False,
) -> Removed:
    """Permanently delete a file, link or (with recursive=true) a directory tree; it cannot be restored (use trash for that)."""
    node, shown = _resolve(w, path, follow=False)
    if node.kind == "directory" and not recursive:
        raise InvalidArgument(f"'{shown}' is a directory; pass recursive=true, or use rmdir for an empty directory")
    _protect(w, node, shown, "remove")
    parent = w.nodes[node.parent_id]  # type: ignore[index]
    _need_dir_write(w, parent, shown, "remove")
    _check_tree_removable(w, node, shown, force, "remove")
    freed = _size(w, node)
    parent.children.pop(node.name)
    parent.modified_at = _stamp(w)
    count = _delete_tree(w, node)
    return Removed(path=shown, kind=node.kind, removed_count=count, freed_bytes=freed)


@TOOLS.tool()
def trash(w: FsWorld, path: PathArg) -> TrashItem:
    """Move a file, link or directory to the trash; restore brings it back, empty_trash deletes it for good."""
    node, shown = _resolve(w, path, follow=False)
    _protect(w, node, shown, "trash")
    parent = w.nodes[node.parent_id]  # type: ignore[index]
    _need_dir_write(w, parent, shown, "remove")
    _check_tree_removable(w, node, shown, True, "trash")
    t = _stamp(w)
    parent.children.pop(node.name)
    parent.modified_at = t
    node.parent_id = None
    tid = w.new_id("TRS")
    item = TrashItem(
        trash_id=tid,
        original_path=shown,
        name=node.name,
        kind=node.kind,
        size=_size(w, node),
        trashed_at=t,
        node_id=node.node_id,
    )
    w.trash[tid] = item
    return item


@TOOLS.tool(read_only=True)
def list_trash(w: FsWorld) -> TrashList:
    """List what is in the trash with each item's trash_id and original path."""
    items = sorted(w.trash.values(), key=lambda t: t.trashed_at, reverse=True)
    return TrashList(items=items, total=len(items), total_bytes=sum(t.size for t in items))


@TOOLS.tool()
def restore(
    w: FsWorld,
    trash_id: Annotated[str, Field(description="Trash item id, e.g. 'TRS-0001' (from list_trash)")],
    destination: Annotated[str | None, Field(description="Restore to this path instead of the original one")] = None,
) -> Restored:
    """Restore an item from the trash to its original path (or to destination); fails if that path is taken."""
    item = w.trash.get(trash_id)
    if item is None:
        raise not_found("trash item", trash_id, "list_trash shows valid trash ids")
    parent, name, shown = _parent(w, destination or item.original_path)
    if _child(w, parent, name) is not None:
        raise StateConflict(f"file exists: '{shown}' is occupied; pass destination to restore {trash_id} elsewhere")
    _need_dir_write(w, parent, shown, "create")
    node = w.nodes[item.node_id]
    node.name, node.parent_id = name, parent.node_id
    parent.children[name] = node.node_id
    parent.modified_at = _stamp(w)
    del w.trash[trash_id]
    return Restored(trash_id=trash_id, path=shown, kind=node.kind)


@TOOLS.tool(destructive=True)
def empty_trash(
    w: FsWorld,
    trash_id: Annotated[
        str | None, Field(description="Delete only this trash item (default: everything in the trash)")
    ] = None,
) -> Emptied:
    """Permanently delete everything in the trash (or one item), freeing its space."""
    if trash_id is not None and trash_id not in w.trash:
        raise not_found("trash item", trash_id, "list_trash shows valid trash ids")
    ids = [trash_id] if trash_id else list(w.trash)
    freed = count = 0
    for tid in ids:
        item = w.trash.pop(tid)
        node = w.nodes.get(item.node_id)
        if node is not None:
            freed += _size(w, node)
            count += _delete_tree(w, node)
    return Emptied(removed_count=count, freed_bytes=freed)


# ------------------------------------------------------------------ ownership and permissions
@TOOLS.tool(idempotent=True)
def chmod(
    w: FsWorld,
    path: PathArg,
    mode: Annotated[
        str,
        Field(description="Octal permission bits for owner, group, others, e.g. '644' or '755'", pattern=r"^[0-7]{3}$"),
    ],
) -> Entry:
    """Change a file's or directory's permission bits; only its owner may do this."""
    node, shown = _resolve(w, path)
    if node.owner != w.user:
        raise PermissionDenied(f"cannot chmod '{shown}': it is owned by {node.owner}, not by you ({w.user})")
    node.mode = mode
    node.modified_at = _stamp(w)
    return _entry(w, node, shown)


@TOOLS.tool(idempotent=True)
def chown(
    w: FsWorld,
    path: PathArg,
    owner: Annotated[str, Field(description="New owner's username (from list_users)", min_length=1)],
    group: Annotated[
        str | None, Field(description="New group name (from list_users); default: keep the current group")
    ] = None,
) -> Entry:
    """Give a file or directory you own to another user and/or group (you lose owner rights over it)."""
    node, shown = _resolve(w, path)
    if owner not in w.users:
        raise not_found("user", owner, f"owner must be one of {', '.join(sorted(w.users))}")
    groups = {g for u in w.users.values() for g in u.groups}
    if group is not None and group not in groups:
        raise not_found("group", group, f"group must be one of {', '.join(sorted(groups))}")
    if node.owner != w.user:
        raise PermissionDenied(f"cannot chown '{shown}': it is owned by {node.owner}, not by you ({w.user})")
    if group is not None and group not in w.users[w.user].groups and group not in w.users[owner].groups:
        raise PermissionDenied(f"cannot set group {group!r}: neither you nor {owner} belong to it")
    node.owner = owner
    if group is not None:
        node.group = group
    node.modified_at = _stamp(w)
    return _entry(w, node, shown)


# ------------------------------------------------------------------ tags
@TOOLS.tool(idempotent=True)
def tag_file(w: FsWorld, path: PathArg, tag: TagArg) -> Tags:
    """Attach a tag to a file or directory you can write (tags are searchable with find_by_tag)."""
    node, shown = _resolve(w, path)
    _need(w, node, "w", shown, "tag")
    if tag not in node.tags:
        node.tags = sorted(node.tags + [tag])
    return Tags(path=shown, tags=list(node.tags))


@TOOLS.tool(idempotent=True)
def untag_file(w: FsWorld, path: PathArg, tag: TagArg) -> Tags:
    """Remove a tag from a file or directory."""
    node, shown = _resolve(w, path)
    if tag not in node.tags:
        raise StateConflict(f"'{shown}' has no tag {tag!r}; its tags are {node.tags or 'none'}")
    _need(w, node, "w", shown, "untag")
    node.tags = [t for t in node.tags if t != tag]
    return Tags(path=shown, tags=list(node.tags))


@TOOLS.tool(read_only=True)
def list_tags(w: FsWorld) -> TagList:
    """List all tags in use with the number of files carrying each."""
    counts: dict[str, int] = {}
    for n in w.nodes.values():
        if not n.tags or _path_of(w, n).startswith("(trash)"):
            continue
        for t in n.tags:
            counts[t] = counts.get(t, 0) + 1
    out = [TagCount(tag=t, count=c) for t, c in sorted(counts.items())]
    return TagList(tags=out, total=len(out))


@TOOLS.tool(read_only=True)
def find_by_tag(w: FsWorld, tag: TagArg) -> PathList:
    """List the files and directories carrying a tag (items in the trash are not included)."""
    out = []
    for n in w.nodes.values():
        if tag in n.tags:
            p = _path_of(w, n)
            if not p.startswith("(trash)"):
                out.append(_entry(w, n, p))
    if not out:
        known = sorted({t for n in w.nodes.values() for t in n.tags})
        raise not_found("tag", tag, f"tags in use: {', '.join(known) or 'none'}")
    out.sort(key=lambda e: e.path)
    return PathList(entries=out, total=len(out))
