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
from pipeline.env.workdir import same_result
from pipeline.language.sqltext import rows_in, sql_kind
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
        if after.ok and not (after.data == before.data or same_result(after.data, before.data)):
            return True
    return False
