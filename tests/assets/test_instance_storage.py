"""The instance storage dagster.yaml names: Dagster's SQLite storage whose event log keeps one engine per file.
Every event is stored where plain ``storage: sqlite`` reads it, a run makes each file's engine once, and a
wiped event log is written again."""

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

from assets import instance_storage
from assets.instance_storage import ENGINES_KEPT, KeptEnginesEventLogStorage

ROOT = Path(__file__).resolve().parents[2]


@dg.asset
def first(context) -> int:  # noqa: ANN001 (Dagster reads the annotation)
    for i in range(4):
        context.log.info(f"line {i}")
    return 1


@dg.asset
def second(context, first: int) -> int:  # noqa: ANN001
    context.log.info("second")
    return first + 1


def project_instance(home: Path, monkeypatch) -> dg.DagsterInstance:
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    (home / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text())
    return dg.DagsterInstance.get()


def test_a_run_makes_each_files_engine_once_and_plain_sqlite_storage_reads_every_event(tmp_path, monkeypatch):
    made: list[str] = []
    real = instance_storage.create_engine

    def counted(url, **kw):
        made.append(url)
        return real(url, **kw)

    monkeypatch.setattr(instance_storage, "create_engine", counted)
    instance = project_instance(tmp_path, monkeypatch)
    assert isinstance(instance.event_log_storage, KeptEnginesEventLogStorage)
    made.clear()
    r = dg.materialize([first, second], instance=instance)
    assert r.success
    stored = instance.all_logs(r.run_id)
    assert len(stored) > 20  # step events, log lines, materializations
    # the run's own file and the index, each once, however many events were stored and read
    assert sorted(Path(u.split("///")[-1]).stem for u in made) == sorted(["index", r.run_id])
    # a process with Dagster's plain SQLite storage over the same home (a home written before this storage,
    # or one switched back) sees the same events and the materializations
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "dagster.yaml").write_text(
        f"storage:\n  sqlite:\n    base_dir: {tmp_path}\ntelemetry:\n  enabled: false\n"
    )
    code = (
        "import dagster as dg, sys; i = dg.DagsterInstance.get(); print(type(i.event_log_storage).__name__);"
        "print(len(i.all_logs(sys.argv[1])));"
        "print(i.get_latest_materialization_event(dg.AssetKey('second')).run_id)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, r.run_id],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "DAGSTER_HOME": str(plain)},
    ).stdout.split()
    assert out == ["SqliteEventLogStorage", str(len(stored)), r.run_id]


def test_a_wiped_event_log_is_written_again(tmp_path, monkeypatch):
    instance = project_instance(tmp_path, monkeypatch)
    before = dg.materialize([first], instance=instance)
    instance.event_log_storage.wipe()  # deletes the run files; their kept engines hold no connection open
    assert instance.all_logs(before.run_id) == []
    after = dg.materialize([first], instance=instance)
    assert after.success
    assert len(instance.all_logs(after.run_id)) > 5
    assert instance.get_latest_materialization_event(dg.AssetKey("first")).run_id == after.run_id


def test_the_engines_kept_are_the_most_recently_used_few(tmp_path):
    storage = KeptEnginesEventLogStorage(str(tmp_path / "runs"))
    first_engine = storage.engine("run-0")
    assert storage.engine("run-0") is first_engine
    for i in range(1, ENGINES_KEPT + 5):
        storage.engine(f"run-{i}")
    assert len(storage._engines) == ENGINES_KEPT
    assert "run-0" not in storage._engines  # the oldest let go
    assert storage.engine("run-0") is not first_engine
    storage.dispose()
    assert storage._engines == {}


def test_a_table_found_in_the_index_is_not_looked_for_again_and_one_missing_is(tmp_path, monkeypatch):
    storage = KeptEnginesEventLogStorage(str(tmp_path / "runs"))
    engine = storage.engine("index")
    opened = []
    monkeypatch.setattr(engine, "connect", lambda real=engine.connect: opened.append(1) or real())
    assert storage.has_table("dynamic_partitions") and storage.has_table("dynamic_partitions")
    assert len(opened) == 1
    assert not storage.has_table("no_such_table") and not storage.has_table("no_such_table")
    assert len(opened) == 3
    storage.dispose()
