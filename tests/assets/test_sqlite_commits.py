"""The build's relaxed SQLite commits: Dagster's events are all stored and readable by another process's
connection, the relaxed settings hold only inside the block, and nothing is left open after it."""

import sqlite3
import subprocess
import sys

import dagster as dg
from sqlalchemy import create_engine, text

from assets import sqlite_commits
from assets.sqlite_commits import relaxed_sync


@dg.asset
def counted(context) -> int:  # noqa: ANN001 (Dagster reads the annotation)
    for i in range(3):
        context.log.info(f"line {i}")
    return 1


def sync_level(url: str) -> int:
    with create_engine(url).connect() as c:
        return c.execute(text("PRAGMA synchronous")).scalar()


def test_inside_the_block_commits_are_normal_and_outside_full(tmp_path):
    url = f"sqlite:///{tmp_path / 'x.db'}"
    with relaxed_sync():
        assert sync_level(url) == 1  # NORMAL
        with relaxed_sync():  # nested blocks share the outer one's keepers
            assert sync_level(url) == 1
        assert sync_level(url) == 1
    assert sync_level(url) == 2  # FULL, SQLite's default, again
    assert sqlite_commits._KEEPERS.conns == {}


def test_a_build_instance_stores_every_event_and_another_process_reads_them(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    instance = dg.DagsterInstance.get()
    with relaxed_sync():
        r = dg.materialize([counted], instance=instance)
        held = set(sqlite_commits._KEEPERS.held)
        # while the block runs, the run's own file is held open in WAL mode (its per-event closes do not checkpoint)
        assert any(r.run_id in p for p in held), held
        inside = len(instance.all_logs(r.run_id))
    assert r.success
    assert sqlite_commits._KEEPERS.conns == {}
    run_db = next(tmp_path.rglob(f"{r.run_id}.db"))
    # a fresh process (as the Dagster UI would be) sees every event, with the log lines among them
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
            "print(c.execute('select count(*) from event_logs').fetchone()[0]);"
            "print(c.execute('pragma journal_mode').fetchone()[0])",
            str(run_db),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert int(out[0]) == inside >= 3 + 5
    assert out[1] == "wal"
    assert (
        sqlite3.connect(run_db).execute("select count(*) from event_logs where event like '%line 2%'").fetchone()[0]
        == 1
    )
