"""Every repository path and project module the Markdown files name exists.

Which files: every ``*.md`` file git tracks or would track (``git ls-files --cached --others
--exclude-standard``), so new docs count before they are committed; under ``data/`` (generated outputs)
only ``data/README.md``. Files listed in the index but deleted from the working tree are skipped.

What is checked, in each file, line by line:

* **Code** (inline code spans and fenced code blocks alike) is split into words at whitespace; each word is
  stripped of the punctuation around it (quotes, brackets, commas, a final ``.``, ``:`` or ``;``) and of a
  call's arguments (``servers.kit.not_found(kind`` -> ``servers.kit.not_found``).
* A word is a **repository path** when its first component (before the first ``/``) is a top-level entry
  of the repository: a name git tracks at the root (``pipeline``, ``assets``, ``training``, ``servers``,
  ``tests``, ``bench``, ``docs``, ``scripts``, ``.ci``, ``run.sh``, ``test.sh``, ``pyproject.toml``,
  ``dagster.yaml``, ``README.md``, ...; read from ``git ls-files``), except ``data``, which holds
  generated outputs (``data/corpus/<version>/``) that a checkout does not have. A word holding a
  placeholder character (``<``, ``>``, ``*``, ``{``, ``}``, ``$``, ``[``, ``]``, ``|``, ``...``) is a
  pattern, not a path, and is skipped. A trailing ``:LINE`` (or ``:LINE-LINE``) is dropped; a trailing
  ``/`` asks for a directory. The path, from the repository root, must exist.
* A word is a **module name** when it is dotted and starts with ``pipeline.``, ``assets.``, ``training.``
  or ``servers.`` and every part is an identifier, unless its last part is a file suffix (``servers.yaml``
  names a user's file, not a module). The longest prefix that is a module (``a/b/c.py`` or
  ``a/b/c/__init__.py``) must exist, and when parts follow it (an attribute:
  ``pipeline.core.config.BuildConfig``), the first of them must be a name that module defines at its top
  level (a def, class, assignment or import) or one it can serve through a module ``__getattr__``; so
  ``pipeline.config.BuildConfig`` fails once ``pipeline/config.py`` is gone, as ``pipeline`` defines no
  ``config``.
* **Link targets** ``[text](target)`` and ``![alt](target)`` that are relative (no scheme, not only an
  ``#anchor``) must exist, resolved from the Markdown file's own folder as GitHub resolves them.

Each miss is reported as ``file:line: what is missing``.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

GENERATED_TOP = "data"  # generated outputs; only data/README.md is documentation
MODULE_PACKAGES = ("pipeline", "assets", "training", "servers")
FILE_SUFFIXES = frozenset(
    [
        "py",
        "md",
        "yaml",
        "yml",
        "toml",
        "json",
        "jsonl",
        "txt",
        "png",
        "parquet",
        "csv",
        "log",
        "sh",
        "cfg",
        "ini",
        "db",
        "duckdb",
        "html",
        "lock",
    ]
)
PLACEHOLDER = re.compile(r"[<>*{}$\[\]|]|\.\.\.")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
LINE_SUFFIX = re.compile(r":\d+(?:-\d+)?$")
STRIP = "`'\"()[]{},;"


def _git_files(root: Path, *patterns: str) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *patterns],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(set(out.splitlines()))


def top_level_entries(root: Path) -> frozenset[str]:
    """The names at the repository root that git tracks (or would track), less the generated ``data``."""
    return frozenset(f.split("/", 1)[0] for f in _git_files(root)) - {GENERATED_TOP}


def markdown_files(root: Path) -> list[Path]:
    """The Markdown files to check: tracked or new, present in the working tree; under data/ only its README."""
    files = []
    for f in _git_files(root, "*.md"):
        if f.split("/", 1)[0] == GENERATED_TOP and f != f"{GENERATED_TOP}/README.md":
            continue
        if (root / f).is_file():
            files.append(root / f)
    return files


def _lines(text: str) -> Iterator[tuple[int, str, bool]]:
    """(line number, line, whether it is inside a fenced code block) for every line but the fences themselves."""
    fence: str | None = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif (
            fence is not None
            and m
            and m.group(1)[0] == fence[0]
            and len(m.group(1)) >= len(fence)
            and not line.strip().strip(fence[0])
        ):
            fence = None
        else:
            yield n, line, fence is not None


def code_words(text: str) -> list[tuple[int, str]]:
    """(line number, word) for every word of code: inline code spans and fenced code blocks."""
    words: list[tuple[int, str]] = []
    for n, line, fenced in _lines(text):
        spans = [line] if fenced else [m.group(2) for m in INLINE_CODE.finditer(line)]
        words.extend((n, w) for span in spans for w in span.split())
    return words


def link_targets(text: str) -> list[tuple[int, str]]:
    """(line number, target) for every relative link or image target outside code."""
    found: list[tuple[int, str]] = []
    for n, line, fenced in _lines(text):
        if fenced:
            continue
        for link in LINK.finditer(INLINE_CODE.sub("", line)):
            target = link.group(1)
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                continue
            found.append((n, target.split("#", 1)[0]))
    return found


def _clean(word: str) -> str:
    word = word.strip(STRIP)
    if "(" in word:  # a call: keep what is called
        word = word.split("(", 1)[0]
    word = word.rstrip(".:;,").strip(STRIP)
    return word


@cache
def _module_file(root: Path, dotted: str) -> Path | None:
    base = root.joinpath(*dotted.split("."))
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f
    return None


@cache
def _top_level_names(file: Path) -> frozenset[str]:
    """The names a module binds at its top level (into if/try/with blocks); ``*`` when it has ``__getattr__``."""
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Import):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                names.update(a.asname or a.name for a in node.names)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    names.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                visit(getattr(node, "finalbody", []))
                for h in getattr(node, "handlers", []):
                    visit(h.body)

    visit(ast.parse(file.read_bytes(), filename=str(file)).body)
    if "__getattr__" in names:
        names.add("*")
    return frozenset(names)


def check_module(root: Path, dotted: str) -> str | None:
    """Why a dotted module name (maybe with an attribute) does not resolve, or None when it does."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        f = _module_file(root, ".".join(parts[:k]))
        if f is None:
            continue
        if k == len(parts):
            return None
        defined = _top_level_names(f)
        if parts[k] in defined or "*" in defined or _module_file(root, ".".join(parts[: k + 1])):
            return None
        return f"module {dotted}: {'.'.join(parts[:k])} ({f.relative_to(root)}) has no {parts[k]}"
    return f"module {dotted}: no module {parts[0]}"


def check_path(root: Path, path: str, base: Path | None = None) -> str | None:
    """Why a path (from the repository root, or from ``base``) does not exist, or None when it does."""
    want_dir = path.endswith("/")
    if path.startswith("/"):  # a link from the repository root, as GitHub reads it
        path, base = path.lstrip("/"), root
    target = (base or root) / path.rstrip("/")
    if want_dir and target.is_dir() or not want_dir and target.exists():
        return None
    return f"{'directory' if want_dir else 'path'} {path}"


def problems(
    root: Path, name: str, text: str, base: Path | None = None, top: frozenset[str] | None = None
) -> list[str]:
    """Every missing path, module or link target a Markdown text names, as ``name:line: what``."""
    top = top_level_entries(root) if top is None else top
    found: list[str] = []
    for n, raw in code_words(text):
        word = _clean(raw)
        if not word or PLACEHOLDER.search(word):
            continue
        path = LINE_SUFFIX.sub("", word)
        if path.split("/", 1)[0] in top:
            why = check_path(root, path)
        elif (
            "." in word
            and word.split(".", 1)[0] in MODULE_PACKAGES
            and all(IDENT.match(p) for p in word.split("."))
            and word.rsplit(".", 1)[1] not in FILE_SUFFIXES
        ):
            why = check_module(root, word)
        else:
            continue
        if why:
            found.append(f"{name}:{n}: {why}")
    for n, target in link_targets(text):
        if target and (why := check_path(root, target, base)):
            found.append(f"{name}:{n}: link target {why}")
    return found


def test_every_path_named_in_the_docs_exists():
    top = top_level_entries(ROOT)
    missing: list[str] = []
    for md in markdown_files(ROOT):
        rel = md.relative_to(ROOT).as_posix()
        missing += problems(ROOT, rel, md.read_text(encoding="utf-8"), base=md.parent, top=top)
    assert not missing, f"{len(missing)} names in the Markdown files do not exist:\n" + "\n".join(missing)


def test_a_missing_path_module_or_link_is_reported():
    text = """# Title
The config is `pipeline/no_such_module.py:12`, read by `pipeline.no_such_module.Config`.
Real ones: `pyproject.toml`, `pipeline/`, `assets.code_versions.module_file`, `servers.yaml`, `data/corpus/x/`.
Patterns are skipped: `servers/<name>.py`, `pipeline/*.py`.
See [the guide](docs/no-such-guide.md) and [the kit](docs/server-kit.md#rules).
```bash
python -m assets.no_such_module tests/no_such_dir/
```
"""
    found = problems(ROOT, "synthetic.md", text, base=ROOT)
    assert found == [
        "synthetic.md:2: path pipeline/no_such_module.py",
        "synthetic.md:2: module pipeline.no_such_module.Config: pipeline (pipeline/__init__.py) has no no_such_module",
        "synthetic.md:7: module assets.no_such_module: assets (assets/__init__.py) has no no_such_module",
        "synthetic.md:7: directory tests/no_such_dir/",
        "synthetic.md:5: link target path docs/no-such-guide.md",
    ]
