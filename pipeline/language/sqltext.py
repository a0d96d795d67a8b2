"""SQL for tools that take SQL text, composed from the schema the probe discovered.

A database server's useful tools take a statement (``read_query(query)``, ``write_query(query)``,
``create_table(query)``): no value in any result fits such a parameter, so without SQL of its own the
pipeline cannot call them. :func:`sql_kind` recognises the parameter (its name says query/sql/statement
and the tool's words speak of SQL, a database or a table) and what the tool runs (a read, a write, a
CREATE TABLE). The probe records each table's columns from a describing tool's result
(:func:`columns_in`: ``PRAGMA table_info`` rows, ``information_schema`` rows, ``CREATE TABLE`` text) and a
few rows read with ``SELECT * ... LIMIT`` through an allowed reading tool; :func:`compose` writes a
statement of the tool's kind against that schema (a filter on a value a row holds, a count, a top-n;
an INSERT of a plausible row, an UPDATE or DELETE of an existing one), and :func:`say` says it the way a
person asks for it ("show me the customers in Lyon").
"""

from __future__ import annotations

import ast
import json
import random
import re
from typing import Any

from pipeline.language.entities import parse_result
from pipeline.language.lexicon import singular

BIND_PARAMS = ("params", "parameters", "bind_params", "bindings")  # values for a statement's placeholders
SQL_PARAMS = ("query", "sql", "statement", "sql_query", "stmt", "sql_statement")
SQL_WORDS = re.compile(r"\b(sql|sqlite|select|insert|database|postgres(?:ql)?|mysql|create table|table)\b", re.I)
_NAME_KEYS = ("name", "column_name", "column", "field", "Field", "COLUMN_NAME")
_TYPE_KEYS = ("type", "data_type", "column_type", "Type", "DATA_TYPE")
_DDL_COL = re.compile(r"^\s*\"?(\w+)\"?\s+(\w+)(.*)$")
_TABLE_IN = re.compile(r"\b(?:FROM|INTO|UPDATE|TABLE)\s+\"?(\w+)\"?", re.I)
TEXT_VALUES = {
    "name": ["Dana Novak", "Eli Brooks", "Farah Khan"],
    "email": ["dana@example.com", "eli@example.com"],
    "city": ["Lisbon", "Denver", "Osaka"],
    "status": ["pending", "shipped"],
    "title": ["Spring catalogue", "Team offsite"],
}


READ_WORDS = re.compile(r"\b(select|read|reads|read-only|readonly|fetch|retrieve)\b", re.I)


def sql_kind(tool: Any, param: str) -> str | None:
    """``"read"``, ``"write"`` or ``"create"`` when ``param`` of a tool whose result is text (no output schema, or
    one wrapping a text: ``{"result": "..."}``) takes SQL text, ``"any"`` when the tool's words name no kind of
    statement (``query``: "Execute a query on the DuckDB database"): the database's reader and writer both; else
    None."""
    if not tool.text_result or not (param in SQL_PARAMS or "sql" in param.lower()):
        return None
    spec = tool.properties.get(param) or {}
    said = f"{tool.name.replace('_', ' ')} {tool.description} {spec.get('description') or ''}"
    if not SQL_WORDS.search(said):
        return None
    if re.search(r"create[ _]table", said, re.I):
        return "create"
    if re.search(r"\b(insert|update|delete|write|modify|execute_write)\b", said, re.I):
        return "write"
    return "read" if READ_WORDS.search(said) else "any"


def unwrapped(data: Any) -> Any:
    """A result wrapped as one text field (``{"result": "..."}``: a ``-> str`` tool's structured output) as the data
    its text holds (:func:`pipeline.language.entities.parse_result`); any other result as it is."""
    return parse_result(data) if isinstance(data, dict) else data


def columns_in(data: Any) -> list[dict[str, Any]]:
    """The columns a describing tool's (parsed) result lists: rows with a name and a type (a list, or an object's
    ``columns`` beside its ``primary_key``), or ``CREATE TABLE`` text."""
    data = unwrapped(data)
    if isinstance(data, str) and re.search(r"create\s+table", data, re.I) and "(" in data:
        body = data[data.index("(") + 1 : data.rindex(")")] if ")" in data else ""
        cols = []
        for part in re.split(r",(?![^(]*\))", body):
            m = _DDL_COL.match(part)
            if m and m.group(1).upper() not in ("PRIMARY", "FOREIGN", "UNIQUE", "CHECK", "CONSTRAINT"):
                cols.append({"name": m.group(1), "type": m.group(2).upper(), "pk": "PRIMARY KEY" in m.group(3).upper()})
        return cols
    keys: list[Any] = []
    if isinstance(data, dict) and isinstance(data.get("columns"), list):  # {"columns": [...], "primary_key": [...]}
        keys = data.get("primary_key") if isinstance(data.get("primary_key"), list) else []
        data = data["columns"]
    if not isinstance(data, list) or not data or not all(isinstance(r, dict) for r in data):
        return []
    cols = []
    for r in data:
        name = next((r[k] for k in _NAME_KEYS if isinstance(r.get(k), str)), None)
        typ = next((r[k] for k in _TYPE_KEYS if isinstance(r.get(k), str)), None)
        if name is None or typ is None:
            return []
        pk = bool(r.get("pk")) or r.get("Key") == "PRI" or bool(r.get("primary_key")) or name in keys
        cols.append({"name": name, "type": typ.upper(), "pk": pk})
    return cols


def table_of(sql: str, tables: dict[str, Any]) -> str | None:
    """The known table a value names: the value itself, or the table a statement reads or writes."""
    if sql in tables:
        return sql
    m = _TABLE_IN.search(sql or "")
    return m.group(1) if m and m.group(1) in tables else None


def kind_of(sql: str) -> str | None:
    head = (sql or "").lstrip().split(" ", 1)[0].upper()
    return {"SELECT": "read", "INSERT": "write", "UPDATE": "write", "DELETE": "write", "CREATE": "create"}.get(head)


def _lit(v: Any) -> str:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(v)
    return "'" + str(v).replace("'", "''") + "'"


def _numeric(col: dict[str, Any]) -> bool:
    return any(t in col["type"] for t in ("INT", "REAL", "NUM", "FLOA", "DOUB", "DEC"))


def foreign_keys(table: str, tables: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(column, referenced table, referenced column) for each reference of ``table``: the foreign keys the catalog
    gave where the probe read them (``references``, :func:`pipeline.discovery.sql_schema.read_references`), else
    guessed from column names (``customer_id`` -> ``customers.id``) where no catalog could be read."""
    info = tables.get(table) or {}
    if "references" in info:
        return [(r["column"], r["table"], r["to"]) for r in info["references"] if r["table"] in tables]
    out = []
    for c in info.get("columns", []):
        name = c["name"].lower()
        if name.endswith("_id"):
            ref = next((t for t in sorted(tables) if singular(t) == name[:-3] or t == name[:-3]), None)
            if ref is not None:
                out.append((c["name"], ref, "id"))
    return out


def references_read(tables: dict[str, Any]) -> bool:
    """Whether the tables' references are the catalog's foreign keys (else guessed from column names)."""
    return any("references" in info for info in tables.values())


def _new_value(col: dict[str, Any], table: str, tables: dict[str, Any], rng: random.Random) -> Any:
    """A plausible value for a new row's column: a value an existing row holds where the column refers to one (a
    foreign key), else by name and type."""
    name = col["name"].lower()
    fk = next(((ref, to) for c, ref, to in foreign_keys(table, tables) if c == col["name"]), None)
    if fk is not None:
        ids = [r.get(fk[1]) for r in (tables.get(fk[0]) or {}).get("rows", []) if r.get(fk[1]) is not None]
        if ids:
            return rng.choice(ids)
    if _numeric(col):
        seen = [r[col["name"]] for r in tables[table].get("rows", []) if isinstance(r.get(col["name"]), (int, float))]
        if "INT" in col["type"]:
            return rng.choice([1, 2, 3, 5, 10]) if not seen else max(1, int(rng.choice(seen)) + rng.choice([1, 2, 5]))
        return round(rng.choice(seen) * rng.choice([0.5, 1.5, 2]), 2) if seen else rng.choice([9.5, 19.99, 42.0])
    seen = [r[col["name"]] for r in tables[table].get("rows", []) if isinstance(r.get(col["name"]), str)]
    if name == "status" and seen:  # a status is one the table uses
        return rng.choice(sorted(set(seen)))
    for key, words in TEXT_VALUES.items():
        if key in name:
            return rng.choice(words)
    return rng.choice(seen) if seen else rng.choice(["new", "sample", "draft"])


def _filterable(table: str, tables: dict[str, Any]) -> list[tuple[str, Any]]:
    """(column, value) pairs a row of the table holds, for a WHERE clause: text columns, not ids."""
    out = []
    for r in tables[table].get("rows", []):
        for c, v in r.items():
            if isinstance(v, str) and not c.lower().endswith("id") and (c, v) not in out:
                out.append((c, v))
    return out


def _select(table: str, tables: dict[str, Any], rng: random.Random) -> str:
    cols = tables[table].get("columns", [])
    q = f"SELECT * FROM {table}"
    forms = (
        ["all", "count"]
        + (["where"] * 2 if _filterable(table, tables) else [])
        + (["top"] if any(_numeric(c) and not c["pk"] for c in cols) else [])
    )
    form = rng.choice(forms)
    if form == "count":
        return f"SELECT COUNT(*) FROM {table}"
    if form == "where":
        c, v = rng.choice(_filterable(table, tables))
        return f"{q} WHERE {c} = {_lit(v)}"
    if form == "top":
        c = rng.choice([c for c in cols if _numeric(c) and not c["pk"]])["name"]
        return f"{q} ORDER BY {c} DESC LIMIT 3"
    return q


def _write(table: str, tables: dict[str, Any], rng: random.Random) -> str:
    cols = [c for c in tables[table].get("columns", []) if not c["pk"]]
    rows = [r for r in tables[table].get("rows", []) if r.get("id") is not None]
    form = rng.choice(["insert", "insert", "update", "delete"]) if rows else "insert"
    if form == "update":
        c = rng.choice([c for c in cols if not c["name"].lower().endswith("_id")] or cols)
        return (
            f"UPDATE {table} SET {c['name']} = {_lit(_new_value(c, table, tables, rng))} "
            f"WHERE id = {rng.choice(rows)['id']}"
        )
    if form == "delete":
        return f"DELETE FROM {table} WHERE id = {rng.choice(rows)['id']}"
    vals = [_new_value(c, table, tables, rng) for c in cols]
    return f"INSERT INTO {table} ({', '.join(c['name'] for c in cols)}) VALUES ({', '.join(_lit(v) for v in vals)})"


def _create(tables: dict[str, Any], rng: random.Random) -> str:
    name, cols = rng.choice(
        [
            ("suppliers", "name TEXT NOT NULL, city TEXT"),
            ("reviews", "product_id INTEGER, rating INTEGER, comment TEXT"),
            ("notes", "title TEXT NOT NULL, body TEXT"),
        ]
    )
    while name in tables:
        name += "_new"
    return f"CREATE TABLE {name} (id INTEGER PRIMARY KEY, {cols})"


def compose(kind: str, tables: dict[str, Any], rng: random.Random, table: str | None = None) -> str | None:
    """A statement of ``kind`` on ``table`` (else a table drawn from those with known columns); None when none
    is known."""
    if kind == "create":
        return _create(tables, rng)
    known = sorted(t for t, info in tables.items() if info.get("columns"))
    if not known:
        return None
    t = table if table in known else rng.choice(known)
    return _select(t, tables, rng) if kind == "read" else _write(t, tables, rng)


def _words(col: str) -> str:
    return col.replace("_", " ").lower()


_JOINED = re.compile(r"SELECT (\w+)\.\* FROM \1 JOIN (\w+) ON \1\.\w+ = \2\.\w+ WHERE \2\.(\w+) = '((?:[^']|'')*)'")


def say(sql: str) -> str | None:
    """What a person asks for to get ``sql`` run (for the statements :func:`compose` writes); None for others."""
    if m := re.fullmatch(r"SELECT COUNT\(\*\) FROM (\w+)", sql):
        return f"count the {_words(m.group(1))}"
    if m := re.fullmatch(r"SELECT \* FROM (\w+) WHERE (\w+) = '((?:[^']|'')*)'", sql):
        t, c, v = _words(m.group(1)), m.group(2), m.group(3).replace("''", "'")
        return (
            f"show me the {t} in {v}"
            if c.lower() in ("city", "country", "region")
            else f"show me the {t} whose {_words(c)} is {v}"
        )
    if m := re.fullmatch(r"SELECT \* FROM (\w+) WHERE id = (\d+)", sql):
        return f"show me {singular(_words(m.group(1)))} {m.group(2)}"
    if m := _JOINED.fullmatch(sql):
        t, ref, c, v = _words(m.group(1)), singular(_words(m.group(2))), m.group(3), m.group(4).replace("''", "'")
        named = c.lower() in ("name", "title")
        return f"show me the {t} of {v}" if named else f"show me the {t} of the {ref} with {_words(c)} {v}"
    if m := re.fullmatch(r"SELECT \* FROM (\w+) ORDER BY (\w+) DESC LIMIT (\d+)", sql):
        return f"show me the top {m.group(3)} {_words(m.group(1))} by {_words(m.group(2))}"
    if m := re.fullmatch(r"SELECT \* FROM (\w+)", sql):
        return f"show me all the {_words(m.group(1))}"
    if m := re.fullmatch(r"INSERT INTO (\w+) \(([^)]*)\) VALUES \((.*)\)", sql):
        cols = [c.strip() for c in m.group(2).split(",")]
        vals = [v.strip().strip("'") for v in re.split(r",\s*(?=(?:[^']*'[^']*')*[^']*$)", m.group(3))]
        what = ", ".join(f"{_words(c)} {v}" for c, v in zip(cols, vals))
        return f"add a new {singular(_words(m.group(1)))} with {what}"
    if m := re.fullmatch(r"UPDATE (\w+) SET (\w+) = (.+) WHERE id = (\d+)", sql):
        table, column, value, row = m.group(1), m.group(2), m.group(3), m.group(4)
        return f"change the {_words(column)} of {singular(_words(table))} {row} to {value.strip(chr(39))}"
    if m := re.fullmatch(r"DELETE FROM (\w+) WHERE id = (\d+)", sql):
        return f"delete {singular(_words(m.group(1)))} {m.group(2)}"
    if m := re.fullmatch(r"CREATE TABLE (\w+) \(id INTEGER PRIMARY KEY, (.*)\)", sql):
        cols = [c.strip().split(" ")[0] for c in m.group(2).split(",")]
        return (
            f"create a {_words(m.group(1))} table with {', '.join(cols[:-1])} and {cols[-1]} columns"
            if len(cols) > 1
            else None
        )
    return None


def fill_sql(
    tool: Any,
    args: dict[str, Any],
    tables: dict[str, Any],
    rng: random.Random,
    fixed: set[str] | frozenset[str] = frozenset(),
) -> None:
    """Replace, in ``args``, each SQL parameter's value that is not already a statement of the tool's kind by a
    composed one, on the table the value names where it names one (a table name from an earlier result,
    another tool's statement). A ``fixed`` value (from an earlier result) that names no known table is left as it is."""
    if not tables:
        return
    for p in list(args):
        kind = sql_kind(tool, p)
        v = args[p]
        if kind is None or not isinstance(v, str):
            continue
        if (kind_of(v) == kind or (kind == "any" and kind_of(v) in ("read", "write"))) and table_of(v, tables):
            continue
        table = table_of(v, tables)
        if table is None and p in fixed:
            continue
        sql = compose("read" if kind == "any" else kind, tables, rng, table)
        if sql is not None:
            args[p] = sql
    if any(sql_kind(tool, p) for p in args):  # statements carry their values: no placeholders to bind values to
        for q in [q for q in args if q in BIND_PARAMS and q not in tool.required]:
            del args[q]


_PRINTED = (
    (
        re.compile(r"datetime\.date\((\d+), (\d+), (\d+)\)"),
        lambda m: "'{:04d}-{:02d}-{:02d}'".format(*map(int, m.groups())),
    ),
    (re.compile(r"Decimal\('(-?[\d.]+)'\)"), lambda m: m.group(1)),
)


def rows_in(data: Any, columns: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The rows a statement's (parsed) result holds, as records: records as they are, tuples (``str()`` of a
    cursor's rows: ``[(1, 'Dune', 1965)]``, or a JSON object's ``rows`` beside its ``columns``) by ``columns`` in
    their order, with printed dates and decimals read as text and numbers; None for anything else."""
    data = unwrapped(data)
    if isinstance(data, str):
        text = data
        for pattern, repl in _PRINTED:
            text = pattern.sub(repl, text)
        try:
            data = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            try:
                data = json.loads(data)
            except ValueError:
                return None
    if isinstance(data, dict) and isinstance(data.get("rows"), list) and isinstance(data.get("columns"), list):
        # {"columns": [...], "rows": [[...]]}: by ``columns`` where they fit, else by the names the result gives
        named, data = [str(c) for c in data["columns"]], data["rows"]
        if not all(isinstance(r, list) and len(r) == len(columns) for r in data):
            data = [dict(zip(named, r)) for r in data if isinstance(r, list)]
    if not isinstance(data, list):
        return None
    if all(isinstance(r, dict) for r in data):
        return data
    names = [c["name"] for c in columns]
    if all(isinstance(r, (tuple, list)) and len(r) == len(names) for r in data):
        return [dict(zip(names, r)) for r in data]
    return None
