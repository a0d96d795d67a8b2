"""A chain of statements for a tool that runs any SQL statement (``query(sql)``: the database's reader and writer).

Such a server may have that one tool only, so its chains are the same tool called again and again, and what makes
one chain differ from another is what each statement does. :func:`plan` writes them together, grounded in the rows
the probe read (:mod:`pipeline.language.sqltext`): a look-up with a real filter value, or a join along a reference
column (``orders.customer_id`` -> ``customers.id``) filtered on a real value of the referenced table; a change
(INSERT, UPDATE or DELETE of a real row); and after a change, a read that shows it (the new row by a value it was
given, the updated row by its id, the count after a delete). What a statement does in a few words (``insert
orders``) tells two chains of the one tool apart (:func:`pipeline.core.similarity.statement_signature`).
"""

from __future__ import annotations

import ast
import random
import re
from typing import Any

from pipeline.language.lexicon import singular
from pipeline.language.sqltext import _PRINTED, _filterable, _lit, _words, _write, compose, foreign_keys, sql_kind

_INSERT = re.compile(r"INSERT INTO (\w+) \(([^)]*)\) VALUES \((.*)\)$")
_UPDATE = re.compile(r"UPDATE (\w+) SET (\w+) = (.+) WHERE id = (\d+)$")
_DELETE = re.compile(r"DELETE FROM (\w+) WHERE id = (\d+)$")
_VALUES = re.compile(r",\s*(?=(?:[^']*'[^']*')*[^']*$)")


def references(table: str, tables: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(column, referenced table, referenced column) for each reference of ``table`` (its foreign keys as the
    catalog gave them, else guessed from column names: :func:`pipeline.language.sqltext.foreign_keys`) whose
    table has rows."""
    return [
        (col, ref, to)
        for col, ref, to in foreign_keys(table, tables)
        if ref != table and tables[ref].get("rows") and _filterable(ref, tables)
    ]


def _join(table: str, tables: dict[str, Any], rng: random.Random) -> str | None:
    """The rows of ``table`` that belong to a real row of a table it references (the orders of Carla Diaz)."""
    refs = references(table, tables)
    if not refs:
        return None
    col, ref, to = rng.choice(refs)
    held = {r.get(col) for r in tables[table].get("rows", [])}
    pairs = [(c, v) for c, v in _filterable(ref, tables) if c.lower() in ("name", "title", "email")]
    rows = {str(r.get(c)): r.get(to) for r in tables[ref]["rows"] for c, _ in pairs}
    pairs = [(c, v) for c, v in pairs if rows.get(str(v)) in held] or pairs
    if not pairs:
        return None
    c, v = rng.choice(pairs)
    return f"SELECT {table}.* FROM {table} JOIN {ref} ON {table}.{col} = {ref}.{to} WHERE {ref}.{c} = {_lit(v)}"


def _look(table: str, tables: dict[str, Any], rng: random.Random) -> str:
    """A read of ``table``: a join along a reference where it has one (half the time), else a composed read."""
    joined = _join(table, tables, rng) if rng.random() < 0.5 else None
    return joined or compose("read", tables, rng, table) or f"SELECT * FROM {table}"


def check_of(write: str, tables: dict[str, Any]) -> str | None:
    """The read that shows what ``write`` did: the new row by a text value it was given, the changed row by its id,
    the count of a table a row left."""
    if m := _INSERT.match(write):
        cols = [c.strip() for c in m.group(2).split(",")]
        vals = [v.strip() for v in _VALUES.split(m.group(3))]
        text = [(c, v) for c, v in zip(cols, vals) if v.startswith("'") and not c.lower().endswith("_id")]
        if not text:
            return f"SELECT COUNT(*) FROM {m.group(1)}"
        c, v = text[0]
        return f"SELECT * FROM {m.group(1)} WHERE {c} = {v}"
    if m := _UPDATE.match(write):
        return f"SELECT * FROM {m.group(1)} WHERE id = {m.group(4)}"
    if m := _DELETE.match(write):
        return f"SELECT COUNT(*) FROM {m.group(1)}"
    return None


def _changeable(tables: dict[str, Any]) -> list[str]:
    return sorted(t for t, info in tables.items() if info.get("columns") and info.get("rows"))


def _rows_named(table: str, look: str, tables: dict[str, Any]) -> dict[str, Any]:
    """``tables`` with ``table``'s rows narrowed to those a look-up on it names (``WHERE city = 'Lyon'``), so the
    change that follows works on a row the user just saw."""
    m = re.fullmatch(rf"SELECT \* FROM {table} WHERE (\w+) = '((?:[^']|'')*)'", look)
    if not m:
        return tables
    rows = [r for r in tables[table].get("rows", []) if str(r.get(m.group(1))) == m.group(2).replace("''", "'")]
    return {**tables, table: {**tables[table], "rows": rows}} if rows else tables


def _held(table: str, tables: dict[str, Any]) -> set[Any]:
    """The ids of ``table``'s rows that a sampled row of another table refers to: a database that keeps its
    references refuses to delete them (an author with books)."""
    return {
        r.get(col)
        for other in tables
        if other != table
        for col, ref, _to in references(other, tables)
        if ref == table
        for r in tables[other].get("rows", [])
    }


def _no_change(write: str, table: str, tables: dict[str, Any], held: set[Any]) -> bool:
    """A write that would change nothing (an UPDATE to the value the row holds) or be refused (the delete of a row
    still referred to)."""
    if m := _DELETE.match(write):
        return int(m.group(2)) in held
    if m := _UPDATE.match(write):
        row = next((r for r in tables[table].get("rows", []) if str(r.get("id")) == m.group(4)), {})
        return str(row.get(m.group(2))) == m.group(3).strip("'").replace("''", "'")
    return False


def _change(table: str, tables: dict[str, Any], rng: random.Random) -> str:
    """A change of ``table`` (:func:`pipeline.language.sqltext._write`) that changes something and is not refused."""
    held = _held(table, tables)
    write = _write(table, tables, rng)
    for _ in range(8):
        if not _no_change(write, table, tables, held):
            break
        write = _write(table, tables, rng)
    return write


def plan(tables: dict[str, Any], n: int, rng: random.Random) -> list[str]:
    """``n`` statements one after another, each grounded in the sampled rows: a change is followed by the read that
    shows it (a change after a look-up works on a row it found); ``[]`` where no table's columns are known."""
    known = sorted(t for t, info in tables.items() if info.get("columns"))
    if not known or n <= 0:
        return []
    changeable = _changeable(tables) or known
    out: list[str] = []
    wrote = False
    while len(out) < n:
        table = rng.choice(changeable)
        if n - len(out) >= 2 and (not wrote or rng.random() < 0.3):
            if not out and n >= 3 and rng.random() < 0.6:  # look first, then change what was found
                out.append(_look(table, tables, rng))
            write = _change(table, _rows_named(table, out[-1], tables) if out else tables, rng)
            check = check_of(write, tables)
            out += [write, check] if check else [write]
            wrote = True
        else:
            out.append(_look(table, tables, rng))
    return out[:n]


def _printed_rows(data: Any) -> list[Any] | None:
    """A statement's result as rows (records or tuples), from data or from its printed text; None otherwise."""
    if isinstance(data, str):
        text = data.strip()
        for pattern, repl in _PRINTED:
            text = pattern.sub(repl, text)
        try:
            data = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    return data if isinstance(data, list) else None


def _row_text(row: Any) -> str:
    if isinstance(row, dict):
        return ", ".join(f"{_words(k)} {v}" for k, v in row.items() if v is not None)
    values = row if isinstance(row, (tuple, list)) else [row]
    return ", ".join(str(v) for v in values if v is not None)


def statement_reply(sql: str, data: Any, rng: random.Random) -> str | None:
    """What the assistant says of a statement's result, by what the statement did: the rows it found (their values
    as printed), the count it took, the change it made; None where the result is no rows."""
    rows = _printed_rows(data)
    if rows is None:
        return None
    table = next(iter(re.findall(r"\b(?:FROM|INTO|UPDATE)\s+(\w+)", sql)), "row")
    one = singular(_words(table))
    if m := _UPDATE.match(sql):
        value = m.group(3).strip("'")
        return (
            rng.choice(["Done: ", "Updated: ", "That's changed: "])
            + f"the {_words(m.group(2))} of {one} {m.group(4)} is now {value}."
        )
    if m := _DELETE.match(sql):
        return rng.choice(["Done: ", "Deleted. ", "That's gone: "]) + f"{one} {m.group(2)} is no longer there."
    if _INSERT.match(sql):
        return rng.choice(["Added: the new {o} is in.", "Done: the {o} was added.", "The new {o} is saved."]).format(
            o=one
        )
    if "COUNT(*)" in sql and len(rows) == 1:
        n = next(iter(rows[0].values())) if isinstance(rows[0], dict) else rows[0][0]
        return f"There {'is' if n == 1 else 'are'} {n} {one if n == 1 else _words(table)}."
    if not rows:
        return rng.choice([f"No {_words(table)} matched.", f"I found no {_words(table)} for that."])
    shown = "; ".join(_row_text(r) for r in rows[:5])
    if len(rows) == 1:
        return rng.choice(["Found one {t}: {s}.", "There is one {t}: {s}.", "One {t} came back: {s}."]).format(
            t=one, s=shown
        )
    more = f" (and {len(rows) - 5} more)" if len(rows) > 5 else ""
    return rng.choice(["Found {n} {t}: {s}{m}.", "There are {n} {t}: {s}{m}.", "Here are the {n} {t}: {s}{m}."]).format(
        n=len(rows), t=_words(table), s=shown, m=more
    )


def runs_any(tool: Any) -> str | None:
    """The parameter of ``tool`` that takes any statement (the database's reader and writer), else None."""
    return next((p for p in tool.properties if sql_kind(tool, p) == "any"), None)
