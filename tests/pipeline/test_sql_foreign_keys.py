"""A database's joins follow its foreign keys as its catalog gives them (pipeline.discovery.sql_schema.read_references),
not names: tests/thirdparty/seeds/lending, whose reference columns (``books.written_by``, ``loans.borrower``,
``loans.item``) match no ``<table>_id`` rule, on a real DuckDB and SQLite, and through
tests/thirdparty/statement_server.py."""

import random
import re
import sqlite3
import sys
from pathlib import Path

import duckdb
import pytest

from pipeline.core.config import BuildConfig, ServerConfig
from pipeline.core.records import ToolSpec
from pipeline.discovery.sql_schema import (
    CATALOG_COLUMNS,
    CATALOGS,
    columns_from_catalog,
    read_references,
    table_references,
)
from pipeline.language.sqltext import foreign_keys, rows_in
from pipeline.language.statements import plan
from pipeline.stages.discovery import stage_snapshot

THIRDPARTY = Path(__file__).resolve().parents[1] / "thirdparty"
SEED = THIRDPARTY / "seeds" / "lending" / "library.sql"
QUERY = ToolSpec(
    name="query",
    server="lending",
    description="Execute a query on the database",
    input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
READ = [
    {"column": "written_by", "table": "writers", "to": "id"},
]
LOANS = [
    {"column": "borrower", "table": "patrons", "to": "id"},
    {"column": "item", "table": "books", "to": "id"},
]


def _duckdb():
    conn = duckdb.connect(":memory:")
    conn.execute(SEED.read_text())
    return conn


def _sqlite():
    conn = sqlite3.connect(":memory:")  # the same tables, in SQLite's words (no sequences)
    script = "\n".join(line for line in SEED.read_text().splitlines() if not line.startswith("CREATE SEQUENCE"))
    conn.executescript(re.sub(r" DEFAULT nextval\('\w+'\)", "", script))
    return conn


def _printed(conn):
    """The tool as a server runs it: each statement's rows printed (``str()`` of the cursor's tuples), or its error."""

    def call(_tool, args):
        try:
            return str(conn.execute(args["query"]).fetchall())
        except (duckdb.Error, sqlite3.Error) as exc:
            return f"Database error: {exc}"

    return call


def _probed(conn) -> dict:
    call = _printed(conn)
    tables = {}
    for sql in CATALOGS:
        rows = rows_in(call(QUERY, {"query": sql}), CATALOG_COLUMNS) or rows_in(
            call(QUERY, {"query": sql}), [*CATALOG_COLUMNS, {"name": "pk"}]
        )
        if rows:
            tables = {t: {"columns": cols} for t, cols in columns_from_catalog(rows).items()}
            break
    for t, info in tables.items():
        info["rows"] = rows_in(call(QUERY, {"query": f"SELECT * FROM {t} LIMIT 5"}), info["columns"])
    return tables


@pytest.mark.parametrize("connect", [_duckdb, _sqlite], ids=["duckdb", "sqlite"])
def test_foreign_keys_are_read_from_the_catalog_and_joins_follow_them(connect):
    conn = connect()
    tables = _probed(conn)
    assert sorted(tables) == ["books", "loans", "patrons", "writers"]
    assert [foreign_keys(t, tables) for t in ("books", "loans")] == [[], []]  # no name says what they refer to
    assert read_references(_printed(conn), QUERY, "query", tables)
    assert tables["books"]["references"] == READ and tables["loans"]["references"] == LOANS
    assert tables["writers"]["references"] == []
    assert table_references(tables) == {
        "from": "catalog",
        "joins": ["books.written_by -> writers.id", "loans.borrower -> patrons.id", "loans.item -> books.id"],
    }
    rng = random.Random(3)
    joins = [q for _ in range(40) for q in plan(tables, 3, rng) if " JOIN " in q]
    assert any("ON books.written_by = writers.id" in q for q in joins), joins
    assert any("ON loans.borrower = patrons.id" in q or "ON loans.item = books.id" in q for q in joins), joins
    assert all(conn.execute(q).fetchall() for q in joins)  # each join finds the rows of a real referenced row


def test_references_are_guessed_from_names_only_where_no_catalog_answers():
    tables = _probed(_duckdb())
    assert not read_references(lambda _tool, _args: "Database error: not allowed", QUERY, "query", tables)
    tables["orders"] = {"columns": [{"name": "id", "type": "INTEGER", "pk": True}, {"name": "book_id", "type": "INT"}]}
    assert table_references(tables) == {"from": "column names", "joins": ["orders.book_id -> books.id"]}


def test_the_probe_reads_a_statement_servers_foreign_keys(tmp_path):
    server = ServerConfig(
        name="lending",
        kind="stdio",
        command=sys.executable,
        args=[str(THIRDPARTY / "statement_server.py"), "--db-path", "library.duckdb"],
        cwd=str(SEED.parent),
    )
    cfg = BuildConfig(examples=4, servers=["lending"], server_configs=[server], data_dir=str(tmp_path))
    snap = stage_snapshot(cfg, "lending")
    assert snap.tables["books"]["references"] == READ and snap.tables["loans"]["references"] == LOANS
    assert snap.tables["writers"]["rows"][1] == {"id": 2, "name": "Italo Calvino", "country": "Italy"}
    assert all(c["arguments"]["query"].startswith("SELECT") for c in snap.probe_calls)  # the probe only reads
