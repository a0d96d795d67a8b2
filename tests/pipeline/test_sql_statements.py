"""A tool that runs any SQL statement (``query(query)``, the database's reader and writer): its schema and rows read
through it (pipeline.discovery.sql_schema), chains of statements planned together (pipeline.language.statements), on
a real DuckDB and on tests/thirdparty/statement_server.py, shaped like mcp-server-duckdb (tuples printed as text)."""

import random
import sys
from pathlib import Path

import duckdb
import pytest

from pipeline.core.config import BuildConfig, ServerConfig
from pipeline.core.records import ToolSpec
from pipeline.core.similarity import call_name, jaccard, shingles
from pipeline.discovery.sql_schema import CATALOG_COLUMNS, CATALOGS, columns_from_catalog
from pipeline.language.replies import step_reply
from pipeline.language.sqltext import rows_in, say, sql_kind
from pipeline.language.statements import plan, statement_reply
from pipeline.stages.base import open_env
from pipeline.stages.discovery import stage_chains, stage_graph, stage_snapshot
from pipeline.stages.synthesis import stage_conversations, stage_queries, stage_validate

THIRDPARTY = Path(__file__).resolve().parents[1] / "thirdparty"
SEED = THIRDPARTY / "seeds" / "duckdb" / "library.sql"
QUERY = ToolSpec(
    name="query",
    server="duckdb",
    description="Execute a query on the DuckDB database",
    input_schema={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "SQL query to execute"}},
        "required": ["query"],
    },
)


def seeded() -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect(":memory:")
    conn.execute(SEED.read_text())
    return conn


def tables_as_probed(conn) -> dict:
    """The schema as the probe reads it through the tool: the catalog's printed rows, then each table's."""
    printed = str(conn.execute(CATALOGS[0]).fetchall())
    tables = {t: {"columns": cols} for t, cols in columns_from_catalog(rows_in(printed, CATALOG_COLUMNS)).items()}
    for t, info in tables.items():
        info["rows"] = rows_in(str(conn.execute(f"SELECT * FROM {t} LIMIT 5").fetchall()), info["columns"])
    return tables


def test_a_statement_tool_whose_words_name_no_kind_reads_and_writes():
    read = QUERY.model_copy(update={"name": "read_query", "description": "Execute a SELECT query on the database"})
    search = ToolSpec(
        name="search_nodes",
        server="memory",
        description="Search for nodes in the knowledge graph based on a query",
        input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    )
    assert (sql_kind(QUERY, "query"), sql_kind(read, "query"), sql_kind(search, "query")) == ("any", "read", None)


def test_the_catalog_and_printed_tuples_read_as_tables_of_named_rows():
    tables = tables_as_probed(seeded())
    assert sorted(tables) == ["authors", "books", "members"]
    assert [c["name"] for c in tables["books"]["columns"]] == ["id", "title", "author_id", "year", "copies"]
    assert tables["books"]["rows"][1] == {
        "id": 2,
        "title": "Invisible Cities",
        "author_id": 2,
        "year": 1972,
        "copies": 1,
    }
    assert rows_in("[(1, datetime.date(2024, 1, 2), Decimal('4.50'))]", [{"name": n} for n in "abc"]) == [
        {"a": 1, "b": "2024-01-02", "c": 4.5}
    ]


def test_planned_chains_run_on_duckdb_and_every_change_shows_in_the_read_after_it():
    tables = tables_as_probed(seeded())
    rng = random.Random(5)
    changes = joins = 0
    seed = seeded()
    for _ in range(25):
        chain = plan(tables, rng.choice([2, 3, 4]), rng)
        conn = seeded()
        for k, sql in enumerate(chain):
            conn.execute(sql).fetchall()  # raises on anything DuckDB refuses
            joins += " JOIN " in sql
            if not sql.startswith("SELECT") and k + 1 < len(chain):
                changes += 1
                check = chain[k + 1]
                assert check.startswith("SELECT"), chain
                assert conn.execute(check).fetchall() != seed.execute(check).fetchall(), chain
    assert changes >= 12 and joins >= 2, (changes, joins)


def test_a_statement_is_asked_for_and_answered_in_words():
    joined = (
        "SELECT books.* FROM books JOIN authors ON books.author_id = authors.id WHERE authors.name = 'Italo Calvino'"
    )
    assert say(joined) == "show me the books of Italo Calvino"
    assert say("SELECT * FROM books WHERE id = 2") == "show me book 2"
    rng = random.Random(0)
    found = statement_reply(joined, "[(2, 'Invisible Cities', 2, 1972, 1)]", rng)
    assert "one book" in found and "Invisible Cities" in found and "(" not in found
    assert statement_reply("SELECT COUNT(*) FROM members", "[(2,)]", rng) == "There are 2 members."
    said = step_reply(QUERY, {"query": "UPDATE books SET copies = 3 WHERE id = 2"}, _ok("[(1,)]"), rng)
    assert said.endswith("the copies of book 2 is now 3.") and "queried" not in said


def _ok(data):
    from pipeline.core.records import CallResult

    return CallResult(ok=True, data=data)


def test_chains_of_the_one_tool_are_told_apart_by_what_their_statements_do():
    a = [
        ("query", {"query": "INSERT INTO members (name, city) VALUES ('Eli', 'Oslo')"}),
        ("query", {"query": "SELECT * FROM members WHERE name = 'Eli'"}),
    ]
    b = [("query", {"query": "DELETE FROM books WHERE id = 3"}), ("query", {"query": "SELECT COUNT(*) FROM books"})]
    assert jaccard(shingles(a), shingles(b)) < 0.7
    assert call_name("query", b[0][1]) == "query:delete books filter"
    assert call_name("send_message", {"text": "Update the plan, delete from the list"}) == "send_message"


@pytest.fixture(scope="module")
def statements(tmp_path_factory):
    """The fixture server through the pipeline's stages: probe, graph and chains; one chain on through its query,
    its conversation and the replay (each write there costs a server process, so one)."""
    server = ServerConfig(
        name="statements",
        kind="stdio",
        command=sys.executable,
        args=[str(THIRDPARTY / "statement_server.py")],
        cwd=str(SEED.parent),
    )
    data = tmp_path_factory.mktemp("statements")
    cfg = BuildConfig(examples=6, servers=["statements"], server_configs=[server], data_dir=str(data))
    # one environment through every stage (each would open its own): a process left at its seed by one stage is
    # the next one's (pipeline.env.reuse), instead of a new one started per stage
    with open_env(cfg, "statements") as env:
        snap = stage_snapshot(cfg, "statements", env)
        graph, _ = stage_graph(cfg, snap, env)
        chains = stage_chains(cfg, snap, graph).items
        first = [next(c for c in chains if len(c.steps) >= 2)]
        convs = stage_conversations(cfg, snap, first, stage_queries(cfg, snap, first, env).items, env).items
        return snap, graph, chains, convs, stage_validate(cfg, convs, "statements", env)


def test_the_schema_and_rows_are_read_through_the_one_statement_tool(statements):
    snap, graph, _, _, _ = statements
    assert snap.tables["members"]["rows"] == [
        {"id": 1, "name": "Nora Lindqvist", "city": "Uppsala"},
        {"id": 2, "name": "Kwame Mensah", "city": "Accra"},
    ]
    assert all(c["arguments"]["query"].startswith("SELECT") for c in snap.probe_calls)  # the probe only reads
    assert [(e.src, e.dst) for e in graph.edges if e.confirmed] == [("query", "query")]


def test_chains_of_the_one_tool_are_statements_planned_together(statements):
    _, _, chains, _, _ = statements
    assert len(chains) >= 3 and all(s.name == "query" for c in chains for s in c.steps)
    planned = [[s.args["query"].value for s in c.steps] for c in chains]
    assert all(q and q.split()[0] in ("SELECT", "INSERT", "UPDATE", "DELETE") for p in planned for q in p), planned
    assert len({tuple(p) for p in planned}) == len(planned)  # no two chains alike


def test_a_conversation_of_statements_replays_and_asks_in_words(statements):
    _, _, _, convs, validated = statements
    assert convs and len(validated.items) == len(convs), validated.stats
    users = " ".join(m.content or "" for c in convs for m in c.messages if m.role == "user")
    assert users and not any(w in users for w in ("SELECT", "INSERT", "UPDATE", "DELETE"))
    calls = [call.arguments.get("query") for c in convs for call in c.trace if call.ok]
    assert len(set(calls)) > 1, calls  # a chain of different statements, not one repeated
