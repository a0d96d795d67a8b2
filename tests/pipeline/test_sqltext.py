"""SQL composed from a discovered schema (pipeline.language.sqltext): the columns a describing tool printed, a few rows,
and statements of each tool's kind that a real SQLite database built from the sqlite fixture's seed accepts."""

import ast
import random
import sqlite3
from pathlib import Path

import pytest

from pipeline.core.records import CallResult, Snapshot, ToolSpec
from pipeline.language.requests.step import StepWriter
from pipeline.language.sqltext import columns_in, compose, kind_of, say, sql_kind
from pipeline.language.values import fill_args

SEED = Path(__file__).resolve().parents[1] / "thirdparty" / "seeds" / "sqlite" / "shop.sql"


def _tool(name: str, desc: str, param: str = "query") -> ToolSpec:
    return ToolSpec(
        name=name,
        server="sqlite",
        description=desc,
        input_schema={"type": "object", "properties": {param: {"type": "string"}}, "required": [param]},
    )


READ = _tool("read_query", "Execute a SELECT query on the SQLite database")
WRITE = _tool("write_query", "Execute an INSERT, UPDATE, or DELETE query on the SQLite database")
CREATE = _tool("create_table", "Create a new table in the SQLite database")


@pytest.fixture()
def db():
    conn = sqlite3.connect(":memory:")
    conn.executescript(SEED.read_text())
    yield conn
    conn.close()


def recorded_schema(conn) -> dict:
    """What the probe records: each table's columns as describe_table prints them (PRAGMA rows as a Python
    repr, read back the way the probe reads them), and the first rows of each table."""
    conn.row_factory = sqlite3.Row
    tables = {}
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
        printed = str([dict(r) for r in conn.execute(f'PRAGMA table_info("{name}")')])
        rows = [dict(r) for r in conn.execute(f"SELECT * FROM {name} LIMIT 5")]
        tables[name] = {"columns": columns_in(ast.literal_eval(printed)), "rows": rows}
    conn.row_factory = None
    return tables


def test_columns_are_read_from_pragma_rows_and_from_create_table_text(db):
    cols = recorded_schema(db)["customers"]["columns"]
    assert [c["name"] for c in cols] == ["id", "name", "email", "city"] and cols[0]["pk"] and not cols[1]["pk"]
    ddl = columns_in(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, title TEXT NOT NULL, price REAL, FOREIGN KEY (id) REFERENCES x(id))"
    )
    assert [(c["name"], c["type"], c["pk"]) for c in ddl] == [
        ("id", "INTEGER", True),
        ("title", "TEXT", False),
        ("price", "REAL", False),
    ]
    assert columns_in([{"name": "Ada"}]) == []  # records without a type are no column listing


def test_the_sql_parameter_and_the_statement_kind_are_told_from_the_tools_words():
    assert (sql_kind(READ, "query"), sql_kind(WRITE, "query"), sql_kind(CREATE, "query")) == ("read", "write", "create")
    search = _tool("search_nodes", "Search for nodes in the knowledge graph based on a query")
    assert sql_kind(search, "query") is None


def test_composed_statements_run_on_the_real_database_and_writes_change_it(db):
    tables = recorded_schema(db)
    rng = random.Random(3)
    for _ in range(40):
        sql = compose("read", tables, rng)
        assert kind_of(sql) == "read"
        db.execute(sql).fetchall()  # raises on anything sqlite refuses
    for _ in range(20):  # each on the seeded database, as each session starts from the seed
        sql = compose("write", tables, rng, table="orders")
        assert kind_of(sql) == "write" and "orders" in sql
        conn = sqlite3.connect(":memory:")
        conn.executescript(SEED.read_text())
        before = conn.total_changes
        conn.execute(sql)
        assert conn.total_changes == before + 1, sql
        conn.close()
    db.execute(compose("create", tables, rng))


def test_a_filter_uses_a_value_a_row_holds_and_reads_like_a_request(db):
    tables = recorded_schema(db)
    rng = random.Random(0)
    filters = {s for s in (compose("read", tables, rng, table="customers") for _ in range(60)) if " WHERE " in s}
    assert "SELECT * FROM customers WHERE city = 'Lyon'" in filters
    assert say("SELECT * FROM customers WHERE city = 'Lyon'") == "show me the customers in Lyon"
    assert say("SELECT COUNT(*) FROM orders") == "count the orders"
    assert say("SELECT * FROM products ORDER BY price DESC LIMIT 3") == "show me the top 3 products by price"
    assert (
        say("INSERT INTO customers (name, city) VALUES ('Eli Brooks', 'Osaka')")
        == "add a new customer with name Eli Brooks, city Osaka"
    )
    assert say("UPDATE orders SET status = 'shipped' WHERE id = 3") == "change the status of order 3 to shipped"
    assert say("DROP TABLE customers") is None


def _snapshot(tables: dict) -> Snapshot:
    return Snapshot(
        snapshot_id="s", server="sqlite", seed=0, schema_hash="h", tools=[READ, WRITE, CREATE], tables=tables
    )


def test_fill_args_composes_sql_on_the_table_an_earlier_result_named(db):
    snap = _snapshot(recorded_schema(db))
    rng = random.Random(1)
    for _ in range(10):
        q = fill_args(READ, snap, rng, fixed={"query": "products"})["query"]
        assert kind_of(q) == "read" and "products" in q
        db.execute(q)
    # another tool's statement (an INSERT into orders, picked up for a later step) becomes a read of that table
    q = fill_args(READ, snap, rng, pick={"query": "INSERT INTO orders (customer_id) VALUES (1)"})["query"]
    assert q.startswith("SELECT") and "orders" in q
    # a value naming no table (the graph's control value) is left alone, so the tool refuses it
    assert fill_args(READ, snap, rng, fixed={"query": "prove-no-such-query"})["query"] == "prove-no-such-query"
    assert kind_of(fill_args(WRITE, snap, rng)["query"]) == "write"


def test_the_request_for_a_sql_step_says_what_it_asks_for_not_the_statement():
    step = {
        "tool": READ,
        "args": {"query": "SELECT * FROM customers WHERE city = 'Lyon'"},
        "sources": {},
        "source_fields": {},
        "result": CallResult(ok=True, data="[]"),
        "index": 0,
    }
    w = StepWriter([step], {}, "2026-03-02", random.Random(0))
    assert w.phrase(step, [], terse=False) == "show me the customers in Lyon"


def test_asked_for_a_withheld_statement_the_user_says_what_they_want_from_the_database():
    from pipeline.language.replies import answer_with

    said = answer_with(
        CREATE,
        "query",
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT)",
        "2026-03-02",
        random.Random(0),
        {},
    )
    assert "create a notes table with title and body columns" in said.lower() and "CREATE TABLE" not in said


def test_printed_rows_are_replied_to_as_records_not_pasted():
    from pipeline.language.replies import step_reply

    tables = ToolSpec(name="list_tables", server="sqlite", read_only=True)
    said = step_reply(
        tables, {}, CallResult(ok=True, data="[{'name': 'customers'}, {'name': 'orders'}]"), random.Random(0)
    )
    assert "customers and orders" in said and "[{" not in said
    row = step_reply(
        READ.model_copy(update={"read_only": True}),
        {},
        CallResult(ok=True, data="[{'id': 3, 'city': 'Madrid', 'note': None}]"),
        random.Random(0),
    )
    assert "city Madrid" in row and "None" not in row


def test_lint_takes_a_statement_asked_for_in_words_as_named_by_the_user():
    from pipeline.corpus.lint_calls import _sql_said

    assert _sql_said("Hi. Show me the customers in Lyon, please.", "SELECT * FROM customers WHERE city = 'Lyon'")
    assert not _sql_said("Show me the orders.", "SELECT * FROM customers WHERE city = 'Lyon'")
