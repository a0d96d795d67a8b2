"""A database's schema and rows read through a tool that runs any SQL statement (``query(sql)``), for a server
with no tool that lists its tables or describes them.

The probe sends such a tool reads only: the catalog first (``information_schema.columns`` for DuckDB, PostgreSQL
and MySQL; ``sqlite_master`` joined with ``pragma_table_info`` for SQLite; whichever the database answers), then a
few rows of each table (``SELECT * ... LIMIT 5``), printed rows read by the column order the catalog gave
(:func:`pipeline.language.sqltext.rows_in`). Graph discovery confirms such a tool's dependency on itself the way a
person would see it: a change, then the read that shows it (:func:`confirm_statement_loop`).
"""

from __future__ import annotations

import random
from typing import Any

from pipeline.core.records import Snapshot, ToolSpec
from pipeline.env import Session
from pipeline.env.workdir import same_answer, same_result
from pipeline.language.sqltext import foreign_keys, references_read, rows_in, sql_kind
from pipeline.language.statements import check_of, plan

CATALOGS = (
    # information_schema: DuckDB, PostgreSQL, MySQL
    "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema NOT IN "
    "('information_schema', 'pg_catalog', 'sys', 'mysql', 'performance_schema') ORDER BY table_name, ordinal_position",
    # SQLite
    "SELECT m.name, p.name, p.type, p.pk FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p "
    "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid",
)
CATALOG_COLUMNS = [{"name": n} for n in ("table", "column", "type")]
FOREIGN_KEYS = (
    # information_schema: PostgreSQL, DuckDB, MySQL (a key's column, and the column of the key it refers to)
    "SELECT kcu.table_name, kcu.column_name, ref.table_name, ref.column_name "
    "FROM information_schema.referential_constraints AS rc JOIN information_schema.key_column_usage AS kcu "
    "ON kcu.constraint_name = rc.constraint_name AND kcu.constraint_schema = rc.constraint_schema "
    "JOIN information_schema.key_column_usage AS ref ON ref.constraint_name = rc.unique_constraint_name "
    "AND ref.constraint_schema = rc.unique_constraint_schema "
    "AND ref.ordinal_position = kcu.position_in_unique_constraint "
    "ORDER BY kcu.table_name, kcu.column_name",
    # SQLite
    'SELECT m.name, f."from", f."table", f."to" FROM sqlite_master AS m JOIN pragma_foreign_key_list(m.name) AS f '
    "WHERE m.type = 'table' ORDER BY m.name, f.\"from\"",
)
FOREIGN_KEY_COLUMNS = [{"name": n} for n in ("table", "column", "references", "to")]


def statement_param(tool: ToolSpec, kinds: tuple[str, ...] = ("any",)) -> str | None:
    """The one required parameter of ``tool`` that takes a statement of one of ``kinds``, else None."""
    if len(tool.required) != 1:
        return None
    p = tool.required[0]
    return p if sql_kind(tool, p) in kinds else None


def columns_from_catalog(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each table's columns from the catalog's rows (table, column, type[, pk]): a column ``id`` is the key where
    the catalog does not say."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        vals = list(r.values())
        if len(vals) < 3 or not all(isinstance(v, str) for v in vals[:3]):
            continue
        pk = bool(vals[3]) if len(vals) > 3 else vals[1] == "id"
        out.setdefault(vals[0], []).append({"name": vals[1], "type": vals[2].upper(), "pk": pk})
    return out


def read_catalog(call: Any, tool: ToolSpec, param: str) -> dict[str, list[dict[str, Any]]]:
    """Each table's columns, from the first catalog the database answers (``call(tool, args)``: the probe's call,
    returning the result's data or None)."""
    for sql in CATALOGS:
        data = call(tool, {param: sql})
        rows = rows_in(data, CATALOG_COLUMNS) if data is not None else None
        if not rows:  # four columns (SQLite's key flag) are not three
            rows = rows_in(data, [*CATALOG_COLUMNS, {"name": "pk"}]) if data is not None else None
        tables = columns_from_catalog(rows or [])
        if tables:
            return tables
    return {}


def read_references(call: Any, tool: ToolSpec, param: str, tables: dict[str, dict[str, Any]]) -> bool:
    """Each known table's foreign keys, from the first catalog of them the database answers, as its
    ``references`` (``[{"column": "written_by", "table": "authors", "to": "id"}]``, ``[]`` for none): the joins
    statements make follow them, not names (:func:`pipeline.language.sqltext.foreign_keys`). False, and ``tables``
    as it was, where no catalog answered (the references are then guessed from column names)."""
    for sql in FOREIGN_KEYS:
        data = call(tool, {param: sql})
        rows = rows_in(data, FOREIGN_KEY_COLUMNS) if data is not None else None
        if rows is None:
            continue
        found: dict[str, list[dict[str, Any]]] = {t: [] for t in tables}
        for r in rows:
            vals = list(r.values())
            if len(vals) != 4 or vals[0] not in tables or vals[2] not in tables or not isinstance(vals[1], str):
                continue
            # SQLite names no column where the key is the referenced table's primary key
            pk = next((c["name"] for c in tables[vals[2]].get("columns", []) if c.get("pk")), "id")
            found[vals[0]].append({"column": vals[1], "table": vals[2], "to": vals[3] or pk})
        for t, refs in found.items():
            tables[t]["references"] = refs
        return True
    return False


def table_references(tables: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the joins follow, for the check's report: ``from`` (``catalog`` where the foreign keys were read,
    ``column names`` where they were guessed) and each reference as ``table.column -> table.column``."""
    return {
        "from": "catalog" if references_read(tables) else "column names",
        "joins": [f"{t}.{c} -> {ref}.{to}" for t in sorted(tables) for c, ref, to in foreign_keys(t, tables)],
    }


def confirm_statement_loop(s: Session, snap: Snapshot, tool: ToolSpec, rng: random.Random) -> bool:
    """A change through ``tool`` that the read after it shows (a new row found by its value, an updated row, a count
    after a delete): the tool depends on itself, so its chains are statements one after another."""
    param = statement_param(tool)
    if param is None or not snap.tables:
        return False
    for _attempt in range(3):
        write = next((x for x in plan(snap.tables, 2, rng) if not x.startswith("SELECT")), None)
        check = check_of(write, snap.tables) if write else None
        if check is None:
            continue
        before = s.call_at_seed(tool.name, {param: check})
        s.reset()
        if not before.ok or not s.call(tool.name, {param: write}).ok:
            continue
        after = s.call(tool.name, {param: check})
        if after.ok and not (same_answer(after.data, before.data) or same_result(after.data, before.data)):
            return True
    return False
