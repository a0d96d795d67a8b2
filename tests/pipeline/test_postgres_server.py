"""A published PostgreSQL MCP server (mcp-postgres-server 0.1.2 from PyPI, installed by scripts/install-published.sh
into .published/postgres-venv) against the session's throwaway PostgreSQL (tests/services.py): its schema read from
information_schema through its own ``query`` tool, foreign keys included, and a small build's statements grounded in
the seeded rows (tests/thirdparty/seeds/lending). Each session gets a database of its own, cloned from the seeded
one (``createdb -T``), so a session's writes are invisible to every other."""

import json
import re
from pathlib import Path

import pytest

from pipeline.core.config import BuildConfig, ServerConfig
from pipeline.discovery.sql_schema import table_references
from pipeline.stages.base import open_env
from pipeline.stages.discovery import stage_chains, stage_graph, stage_snapshot
from pipeline.stages.synthesis import stage_conversations, stage_queries, stage_validate
from tests.services import PG_USER, install_published, run

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".published" / "postgres-venv" / "bin" / "mcp-postgres-server"
SEED = ROOT / "tests" / "thirdparty" / "seeds" / "lending" / "library.sql"
TEMPLATE = "lending_seed"
TABLES = ("books", "loans", "patrons", "writers")


def postgres_server(pg, template: str) -> ServerConfig:
    """The servers-file entry a user writes for it: a stdio process per session, on a database cloned from
    ``template`` for that session (named after the session's directory)."""
    clone = (
        f'db=s$(printf %s "$SESSION" | md5sum | cut -c1-20) && '
        f'{pg.bin_dir / "createdb"} -h 127.0.0.1 -p {pg.port} -U {PG_USER} -T {template} "$db" && '
        f"POSTGRES_DB=$db exec {SERVER}"
    )
    return ServerConfig(
        name="postgres",
        kind="stdio",
        command="bash",
        args=["-c", clone],
        env={
            "SESSION": "${SESSION_DIR}",
            "POSTGRES_HOST": "127.0.0.1",
            "POSTGRES_PORT": str(pg.port),
            "POSTGRES_USER": PG_USER,
            "ALLOW_WRITE": "true",
            "LOG_LEVEL": "ERROR",
            "POOL_MIN_SIZE": "1",
        },
        probe_allowlist=["query", "list_schemas", "list_tables", "describe_table"],  # no annotations; these read
    )


@pytest.fixture(scope="module")
def built(pg_cluster, tmp_path_factory):
    if not SERVER.exists():  # installed from PyPI by the script, as test_published_servers does (quick when there)
        done = install_published()
        if done.returncode != 0 or not SERVER.exists():
            pytest.skip(f"mcp-postgres-server==0.1.2 could not be installed: {done.stderr.strip()[-300:]}")
    pg_cluster.database(TEMPLATE)
    psql = [str(pg_cluster.bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(pg_cluster.port), "-U", PG_USER]
    run([*psql, "-d", TEMPLATE, "-v", "ON_ERROR_STOP=1", "-q", "-f", str(SEED)], "seeding the lending database")
    server = postgres_server(pg_cluster, TEMPLATE)
    cfg = BuildConfig(
        examples=6, servers=["postgres"], server_configs=[server], data_dir=str(tmp_path_factory.mktemp("pg"))
    )
    # one environment through every stage (each would open its own): a process left at its seed by one stage is
    # the next one's (pipeline.env.reuse), instead of a new server (and database clone) per stage
    with open_env(cfg, "postgres") as env:
        snap = stage_snapshot(cfg, "postgres", env)
        graph, _ = stage_graph(cfg, snap, env)
        chains = stage_chains(cfg, snap, graph).items
        picked = [c for c in chains if any(s.name == "execute" for s in c.steps)][:1] + [
            c for c in chains if all(s.name == "query" for s in c.steps)
        ][:1]
        convs = stage_conversations(cfg, snap, picked, stage_queries(cfg, snap, picked, env).items, env).items
        validated = stage_validate(cfg, convs, "postgres", env)
    seed_rows = pg_cluster.query("SELECT name FROM patrons UNION SELECT title FROM books", TEMPLATE)
    return snap, graph, convs, validated, seed_rows, pg_cluster


def test_the_schema_and_foreign_keys_come_from_information_schema(built):
    snap, _, _, _, _, _ = built
    catalog = [c for c in snap.probe_calls if "information_schema" in c["arguments"].get("sql", "")]
    assert catalog and all(c["ok"] for c in catalog)
    assert sorted(snap.tables) == ["books", "loans", "patrons", "writers"]
    assert table_references(snap.tables) == {
        "from": "catalog",
        "joins": ["books.written_by -> writers.id", "loans.borrower -> patrons.id", "loans.item -> books.id"],
    }
    assert snap.tables["patrons"]["rows"] == [
        {"id": 1, "name": "Nora Lindqvist", "city": "Uppsala"},
        {"id": 2, "name": "Kwame Mensah", "city": "Accra"},
    ]


def test_a_write_through_execute_is_confirmed_by_a_read_through_query(built):
    _, graph, _, _, _, _ = built
    confirmed = {(e.src, e.dst) for e in graph.edges if e.confirmed}
    assert ("execute", "query") in confirmed, sorted(confirmed)


def test_a_small_build_yields_replayed_examples_grounded_in_the_seeded_rows(built):
    _, _, convs, validated, seed_rows, pg = built
    assert convs and len(validated.items) == len(convs), validated.stats
    sql = [call.arguments["sql"] for c in convs for call in c.trace if call.ok and "sql" in call.arguments]
    assert any(s.split()[0] in ("INSERT", "UPDATE", "DELETE") for s in sql), sql
    seeded = {v for (v,) in seed_rows}
    quoted = {m.replace("''", "'") for s in sql for m in re.findall(r"'((?:[^']|'')*)'", s)}
    filters = [s for s in sql if s.startswith("SELECT") and " WHERE " in s and "'" in s.split(" WHERE ", 1)[1]]
    assert all(set(re.findall(r"= '((?:[^']|'')*)'", s)) <= seeded | quoted for s in filters), filters
    ids = {(t, int(i)) for t, i in pg.query(" UNION ".join(f"SELECT '{t}', id FROM {t}" for t in TABLES), TEMPLATE)}
    changed = [
        (m.group(1), int(m.group(2)))
        for q in sql
        if (m := re.search(r"^(?:UPDATE|DELETE FROM) (\w+).* id = (\d+)$", q))
    ]
    assert set(changed) <= ids, changed  # an UPDATE or DELETE changes a seeded row
    found = [
        json.loads(call.result["result"])["row_count"]
        for c in convs
        for call in c.trace
        if call.ok and call.name == "query"
    ]
    assert found and max(found) >= 1, found  # reads find rows
    assert pg.query("SELECT count(*) FROM patrons", TEMPLATE) == [("2",)]  # the seeded database is never written
