"""Entities in any tool result, not only JSON records with an ``id``.

Servers nobody here wrote key their records by ``name``, ``path``, ``title`` or ``key``, answer
with text listings (one file per line, ``[FILE] notes.txt`` rows, ``| a | b |`` tables, bullets)
or print Python rows (``[{'id': 1, 'name': 'Ada'}]``, ``[(1, 'Ada')]``). :func:`parse_result`
turns text into data where it is data (JSON first, then a Python literal through
:func:`ast.literal_eval`, then a listing); :func:`generic_entities` finds the entities in it,
each with a kind (the list it sits in, or the tool's noun) and the key it was named by.

The probe uses this where the ``*_id`` walk finds nothing (so a server whose records carry ids is
probed as before), and the graph uses :func:`result_values` to see which values of one tool's
result another tool accepts.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, NamedTuple

from pipeline.language.lexicon import singular

# keys that name the record they sit in, most telling first
NAME_KEYS = (
    "name",
    "path",
    "title",
    "key",
    "slug",
    "filename",
    "file",
    "uri",
    "url",
    "email",
    "username",
    "symbol",
    "sku",
    "code",
    "branch",
    "table",
    "table_name",
    "label",
    "handle",
    "commit",
    "sha",
    "revision",
)
# what a result's listing line may look like
# [FILE] notes.txt, [DIR] docs, [FILE] notes.txt    16 B (a column after two spaces is no part of the name)
_TAGGED = re.compile(r"^\s*\[([A-Za-z]+)\]\s+(\S.*?)(?:\s{2,}\S.*)?\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+(\S.*?)\s*$")  # - main, * main, 1. notes
_TOKEN = re.compile(r"^\s*([^\s|]{1,120})\s*$")  # one word, path or name per line
_PATHLIKE = re.compile(r"^(?:/|\./|~/)?[\w.@~-]+(?:/[\w.@ ~-]+)*/?$")
_EXT = re.compile(r"\.[A-Za-z0-9]{1,6}$")
_VERBS = {
    "list",
    "get",
    "read",
    "search",
    "find",
    "show",
    "query",
    "describe",
    "fetch",
    "open",
    "view",
    "lookup",
    "all",
    "my",
}
_CONTENT_VERBS = {"read", "cat"}  # a text such a tool returns is the content of the thing it was given
MAX_LITERAL = 200_000  # longer texts are not parsed as Python literals
# naming keys that also say what the record is (a printed block named by ``Commit:`` is a commit)
_KIND_KEYS = {"commit": "commit", "branch": "branch", "table": "table", "table_name": "table"}


class Found(NamedTuple):
    """One entity: its value (the id used to name it), kind, the key it was named by and its record."""

    value: str
    kind: str
    key: str
    record: dict[str, Any]


def parse_result(data: Any) -> Any:
    """Text as data where it is data: JSON, else a Python literal (repr rows), else the text itself. A ``-> str``
    tool's structured output (``{"result": "<JSON text>"}``, FastMCP's wrapper) is read as the data its text holds."""
    if isinstance(data, dict) and len(data) == 1 and isinstance(data.get("result"), str):
        inner = parse_result(data["result"])
        return inner if isinstance(inner, (dict, list)) else data
    if not isinstance(data, str):
        return data
    s = data.strip()
    if not s:
        return None
    if s[0] in "[{(\"'" or s[0].isdigit():
        try:
            return json.loads(s)
        except ValueError:
            pass
        if len(s) <= MAX_LITERAL:
            try:
                return ast.literal_eval(s)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                pass
    return data


def tool_noun(tool_name: str) -> str:
    """The thing a tool is about: ``list_tables`` -> ``table``, ``read_graph`` -> ``graph``, ``ls`` -> ``ls``."""
    words = [w for w in re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", tool_name) if w]
    nouns = [w.lower() for w in words if w.lower() not in _VERBS] or [w.lower() for w in words]
    return singular(nouns[-1]) if nouns else "entity"


def _name_key(rec: dict[str, Any]) -> str | None:
    for k in NAME_KEYS:
        v = rec.get(k)
        if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v).strip():
            return k
    return None


def _walk_named(data: Any, parent: str, noun: str, out: list[Found], depth: int = 0) -> None:
    if depth > 8:
        return
    if isinstance(data, dict):
        key = _name_key(data)
        if key is not None:
            kind = singular(parent) if parent else _KIND_KEYS.get(key, noun)
            out.append(
                Found(str(data[key]), kind, key, {k: v for k, v in data.items() if not isinstance(v, (dict, list))})
            )
        for k, v in data.items():
            if isinstance(v, (dict, list)) and not (key is not None and _names_only(v)):
                _walk_named(v, k, noun, out, depth + 1)  # a named record's list of words is its own, not things
    elif _names_only(data):
        _names(data, parent, noun, out)
    elif isinstance(data, (list, tuple)):
        for item in data:
            if (
                isinstance(item, (list, tuple))
                and item
                and all(isinstance(c, (str, int, float, type(None))) for c in item)
            ):
                _row(item, parent, noun, out)
            else:
                _walk_named(item, parent, noun, out, depth + 1)


def _names_only(data: Any) -> bool:
    """A list of plain names (``["patients", "appointments"]``): short strings, each one line of at most three words."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(x, str) and x.strip() and "\n" not in x and len(x) <= 120 for x in data)
        and all(len(x.split()) <= 3 for x in data)
    )


def _names(data: list[str], parent: str, noun: str, out: list[Found]) -> None:
    """Each name of a list of plain names, of the kind its key says (``tables``), else the tool's noun."""
    for v in data:
        key = "path" if _PATHLIKE.match(v) and ("/" in v or _EXT.search(v)) else "name"
        out.append(Found(v.strip(), singular(parent) if parent else noun, key, {key: v.strip()}))


def _row(row: tuple | list, parent: str, noun: str, out: list[Found]) -> None:
    """A printed row ``(1, 'Ada', 'ada@x.org')``: named by its first text column."""
    text = next((c for c in row if isinstance(c, str) and c.strip()), None)
    if text is not None:
        out.append(Found(text, singular(parent) if parent else noun, "name", {f"col{i}": c for i, c in enumerate(row)}))


def _table(lines: list[str]) -> list[dict[str, str]] | None:
    """Rows of a ``| a | b |`` table (a header line, an optional ``---`` rule, then rows), or None."""
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines if "|" in ln]
    if len(rows) < 2 or len(rows) < len(lines) * 0.8:
        return None
    header = [h.lower().replace(" ", "_") for h in rows[0]]
    body = [r for r in rows[1:] if not all(re.fullmatch(r":?-{2,}:?", c) or not c for c in r)]
    return [dict(zip(header, r)) for r in body if len(r) == len(header)]


_FIELD_LINE = re.compile(r"^([A-Za-z][\w -]{0,30}?)\s*:\s+(\S.*?)\s*$")  # Commit: 3f2a1b9, Author: Ada


def record_blocks(text: str) -> list[dict[str, str]]:
    """Records printed as blocks of ``Field: value`` lines parted by blank lines (``git log``'s ``Commit: <sha>``,
    ``Author:``, ``Message:``), fields named in lower case; a heading line (``Commit history:``) is skipped. Empty
    unless at least two blocks of two or more such lines each, or one of three or more, make up the text."""
    blocks: list[list[str]] = [[]]
    for ln in text.splitlines():
        if not ln.strip():
            blocks.append([])
        elif not ln.rstrip().endswith(":"):
            blocks[-1].append(ln)
    blocks = [b for b in blocks if b]
    records = []
    for b in blocks:
        fields = [m for ln in b if (m := _FIELD_LINE.match(ln))]
        if len(fields) < max(2, 0.8 * len(b)):
            return []
        records.append({m.group(1).strip().lower().replace(" ", "_"): m.group(2) for m in fields})
    return records if len(records) >= 2 or (records and len(records[0]) >= 3) else []


def listing(text: str, noun: str) -> list[Found]:
    """Entities of a text listing: records printed as ``Field: value`` blocks, tagged rows, bullets, a table, or one
    name or path per line.

    Text that is mostly prose (fewer than 60% of its lines look like list items) is no listing."""
    records = record_blocks(text)
    if records:
        named: list[Found] = []
        _walk_named(records, "", noun, named)
        if named:
            return named
    lines = [
        ln for ln in text.splitlines() if ln.strip() and not ln.rstrip().endswith(":")
    ]  # "Allowed directories:" heads a list
    if not lines:
        return []
    table = _table(lines)
    if table:
        out: list[Found] = []
        _walk_named(table, "", noun, out)
        if not out:  # no naming column: the first one names the row
            first = next(iter(table[0]), None)
            out = [Found(r[first], noun, first, dict(r)) for r in table if first and r.get(first)]
        return out
    found: list[Found] = []
    for ln in lines:
        m = _TAGGED.match(ln)
        if m:
            tag = m.group(1).lower()
            kind = {"dir": "directory", "d": "directory", "f": "file"}.get(tag, tag)
            found.append(
                Found(
                    m.group(2),
                    kind,
                    "path" if kind in ("file", "directory") else "name",
                    {"path" if kind in ("file", "directory") else "name": m.group(2), "type": tag},
                )
            )
            continue
        m = _BULLET.match(ln) or _TOKEN.match(ln)
        if m:
            v = m.group(1)
            key = "path" if _PATHLIKE.match(v) and ("/" in v or _EXT.search(v) or v in (".", "..")) else "name"
            found.append(Found(v, noun, key, {key: v}))
    plain = [f for f in found if f.kind == noun]
    if len({f.key for f in plain}) > 1:  # one listing names its items one way (``* main``, ``feature/login``)
        key = "path" if 2 * sum(f.key == "path" for f in plain) > len(plain) else "name"
        found = [Found(f.value, f.kind, key, {key: f.value}) if f.kind == noun else f for f in found]
    # a summary under the list (``Total: 2 files``) is no item of it
    counted = [ln for ln in lines if not _FIELD_LINE.match(ln.strip())] if len(found) >= 2 else lines
    if len(found) < 0.6 * len(counted) or (len(lines) == 1 and found and found[0].key != "path"):
        return []  # prose, or a lone word (a status, a file's content), not a listing
    return found


def reads_content(tool_name: str) -> bool:
    """Does the tool read a thing's content (``read_text_file``, ``cat``): is the text it returns the content of what
    it was given, rather than an answer about it (a listing, a tree, a report)?"""
    first = next((w.lower() for w in re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", tool_name) if w), "")
    return first in _CONTENT_VERBS


def generic_entities(data: Any, tool_name: str) -> list[Found]:
    """The entities a result names (JSON or Python records by a naming key, printed rows, listings)."""
    noun = tool_noun(tool_name)
    parsed = parse_result(data)
    if isinstance(parsed, str):
        return [] if reads_content(tool_name) else listing(parsed, noun)
    out: list[Found] = []
    if isinstance(parsed, dict) and len(parsed) == 1:  # {"result": "a\nb"}: the text a tool returned, wrapped
        only = next(iter(parsed.values()))
        if isinstance(only, str):
            return generic_entities(only, tool_name)
    _walk_named(parsed, "", noun, out)
    seen: set[tuple[str, str]] = set()
    return [f for f in out if not ((f.value, f.kind) in seen or seen.add((f.value, f.kind)))]


_LABELLED = re.compile(r"^\s*([A-Za-z][\w .-]{0,40}?)\s*:\s+(\S.*?)\s*$")  # modified: README.md, Home: 12 Elm Street
_ID_LINE = re.compile(
    r"^\s*([0-9a-f]{7,40}|[A-Za-z]*\d[\w.-]*|#\d+)\s+(\S.*?)\s*$"
)  # 3f2a1b9 Fix typo (git log --oneline)


def line_pairs(text: str) -> list[tuple[str, str]]:
    """(field, value) pairs of a text most of whose lines are ``label: value`` (each value under its label, then
    the label itself under ``key``: a saved place's name is its label) or ``<id> <text>`` (the ids)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    labelled = [m for ln in lines if (m := _LABELLED.match(ln))]
    if lines and len(labelled) >= 0.6 * len(lines):
        return [pair for m in labelled for pair in ((m.group(1), m.group(2)), ("key", m.group(1)))]
    ids = [m for ln in lines if (m := _ID_LINE.match(ln))]
    if lines and len(ids) >= 0.6 * len(lines):
        return [("id", m.group(1)) for m in ids]
    return []


def result_values(data: Any, tool_name: str, limit: int = 20) -> list[tuple[str, Any]]:
    """(field, value) pairs a result offers another tool: the entities it names (by their naming key),
    then every scalar field of its records, then for text that is no listing its labelled lines or the
    ids its lines open with (:func:`line_pairs`); at most ``limit``, in the order met."""
    out: list[tuple[str, Any]] = []
    for f in generic_entities(data, tool_name):
        if (f.key, f.value) not in out:
            out.append((f.key, f.value))
    parsed = parse_result(data)
    if isinstance(parsed, str) and not out:
        out += line_pairs(parsed)

    def scalars(d: Any, depth: int = 0) -> None:
        if depth > 6 or len(out) >= limit * 3:
            return
        if isinstance(d, dict):
            for k, v in d.items():
                if isinstance(v, (str, int)) and not isinstance(v, bool) and (k, v) not in out:
                    out.append((k, v))
                else:
                    scalars(v, depth + 1)
        elif isinstance(d, (list, tuple)):
            for x in d:
                scalars(x, depth + 1)

    scalars(parsed)
    return out[:limit]


def value_in(data: Any, field: str, tool_name: str = "") -> Any:
    """The first value ``field`` names in a result the JSON walk cannot read (text, repr rows):
    an entity named by that key, else a scalar field of that name."""
    for k, v in result_values(data, tool_name, limit=200):
        if k == field:
            return v
    return None
