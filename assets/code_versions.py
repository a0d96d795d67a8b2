"""Code versions of the assets, computed from the source they run.

An asset's ``code_version`` is a short hash of its function's source and of the files of the import
closure of the modules it uses: the modules it imports in its body and those defining the names it calls
(its stage function, the records it builds), every module of this project those import (at the top or
inside a function), and theirs, transitively, with the packages' ``__init__`` files. Third-party imports
are left out (their versions are the environment's), and so is every module the closure never reaches:
editing ``pipeline/discovery/chains.py`` marks the assets whose stages import it stale and leaves ``grpo_policy``
fresh until a new corpus arrives. (Built-in servers are loaded by name at run time, so their modules are
outside every closure; a server's changed tools change its snapshot's data version instead.)

Modules are found as files under the project root and read with ``ast``, never imported, so hashing the
training asset's closure does not import torch. No map is kept by hand: the closure is read from the code.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import inspect
import json
import textwrap
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from pipeline.core.storage import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
CODE_VERSION = "1"  # bumped by hand only for changes the source hashes cannot see (a changed output contract)


def project_packages(root: Path) -> frozenset[str]:
    """The top-level packages of the project: the folders under ``root`` with an ``__init__.py``."""
    return frozenset(p.name for p in root.iterdir() if (p / "__init__.py").is_file())


def module_file(name: str, root: Path) -> Path | None:
    """A module's file under ``root`` (a package's ``__init__.py``), or None when it is not one of ours."""
    base = root.joinpath(*name.split("."))
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f
    return None


def imported_modules(name: str, root: Path) -> set[str]:
    """The project modules one module imports anywhere in its source (``from pkg import sub`` counts ``pkg.sub``)."""
    f = module_file(name, root)
    if f is None:
        return set()
    st = f.stat()
    return _imports(name, str(f), root, st.st_mtime_ns, st.st_size)


@cache
def _imports(name: str, file: str, root: Path, mtime_ns: int, size: int) -> set[str]:
    """(cached by the file's modification time and size: an edited file is read again)"""
    found = imported_names(name, file, root, mtime_ns, size)
    ours = project_packages(root)
    return {m for m in found if m.split(".")[0] in ours and module_file(m, root) is not None}


def imported_names(name: str, file: str, root: Path, mtime_ns: int, size: int) -> frozenset[str]:
    """Every module name the file's import statements name, from :class:`ImportsCache` while the file has the
    modification time and size it was read with."""
    disk = ImportsCache.of(root)
    known = disk.get(file, mtime_ns, size)
    if known is not None:
        return known
    package = name if file.endswith("__init__.py") else name.rpartition(".")[0]
    found: set[str] = set()
    for node in statements(ast.parse(Path(file).read_bytes(), filename=file)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, up level - 1
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(p for p in (*parts, base) if p)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    disk.put(file, mtime_ns, size, found)
    return frozenset(found)


class ImportsCache:
    """The import statements of the project's files, kept in ``<root>/.prove-cache/code-imports.json`` between
    processes. Every Dagster process (a run, a step, a code server, a Celery worker) computes the code versions
    when it imports the definitions, and parsing the ~120 files of their closures was about a quarter of that
    import. An entry holds while its file's modification time and size are those it was read with (as Python's
    own ``.pyc`` check); a cache that cannot be read or written is left alone and everything is parsed."""

    _open: dict[Path, ImportsCache] = {}

    def __init__(self, root: Path) -> None:
        self.path = root / ".prove-cache" / "code-imports.json"
        try:
            self.entries: dict[str, list[Any]] = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.entries = {}
        self.dirty = False

    @classmethod
    def of(cls, root: Path) -> ImportsCache:
        if root not in cls._open:
            cls._open[root] = cls(root)
        return cls._open[root]

    def get(self, file: str, mtime_ns: int, size: int) -> frozenset[str] | None:
        e = self.entries.get(file)
        return frozenset(e[2]) if isinstance(e, list) and len(e) == 3 and e[:2] == [mtime_ns, size] else None

    def put(self, file: str, mtime_ns: int, size: int, found: set[str]) -> None:
        self.entries[file] = [mtime_ns, size, sorted(found)]
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        self.dirty = False
        with contextlib.suppress(OSError):  # a read-only tree: the next process parses again
            atomic_write_text(self.path, json.dumps(self.entries, sort_keys=True))


def statements(tree: ast.Module) -> Iterator[ast.AST]:
    """Every statement of a module, nested ones included (function and class bodies, branches, handlers, cases),
    without the expressions inside them: an import is a statement, and walking a module's expressions too
    (``ast.walk``) was most of the cost of computing code versions as a process starts."""
    todo: list[Any] = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            todo.extend(getattr(node, field, None) or ())


def import_closure(modules: set[str] | list[str], root: Path = ROOT) -> set[str]:
    """Every project module reached from ``modules`` through imports, with the packages they live in."""
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        m = todo.pop()
        if m in seen or module_file(m, root) is None:
            continue
        seen.add(m)
        parts = m.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # importing a.b runs a/__init__.py
        todo.extend(imported_modules(m, root))
    ImportsCache.of(root).save()
    return seen


def function_modules(fn: Callable[..., Any]) -> set[str]:
    """The modules an asset's function uses: those it imports in its body, and those defining the names it
    refers to (a helper of its own module counts through the modules *it* uses, not its whole module)."""
    also = getattr(fn, "also_runs", ())
    found: set[str] = {f.__module__ for f in also}  # what the function runs counts with its whole module
    todo, seen = [fn, *also], set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        src = textwrap.dedent(inspect.getsource(f))
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names)
        for name in _names(f.__code__):
            obj = f.__globals__.get(name)
            if inspect.ismodule(obj):
                found.add(obj.__name__)
            elif inspect.isfunction(obj) and obj.__module__ == f.__module__:
                todo.append(obj)
            elif getattr(obj, "__module__", None):
                found.add(obj.__module__)
    return found


def _names(code: Any) -> set[str]:
    out = set(code.co_names)
    for c in code.co_consts:  # lambdas, comprehensions and nested functions
        if inspect.iscode(c):
            out |= _names(c)
    return out


def code_version(fn: Callable[..., Any], root: Path = ROOT, n: int = 12) -> str:
    """An asset's code version: a short hash of its function's source and of the files of the import closure
    of the modules it uses (names and bytes). A function that runs code its source does not name (an asset
    made from a registered stage calls the stage's ``run``) lists it in ``also_runs``: hashed the same way."""
    fns = (fn, *getattr(fn, "also_runs", ()))
    h = hashlib.sha256("\n".join(textwrap.dedent(inspect.getsource(f)) for f in fns).encode())
    for m in sorted(import_closure(function_modules(fn), root)):
        h.update(f"\nmodule:{m}\n".encode())
        h.update(module_file(m, root).read_bytes())  # type: ignore[union-attr]
    return f"{CODE_VERSION}-{h.hexdigest()[:n]}"


def versioned(**asset_kw: Any) -> Callable[[Callable[..., Any]], Any]:
    """``dg.asset`` with the code version computed from the function (:func:`code_version`)."""
    import dagster as dg

    return lambda fn: dg.asset(code_version=code_version(fn), **asset_kw)(fn)
