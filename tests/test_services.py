"""The throwaway services the distributed tests run on (tests/services.py): each starts on loopback, does its job
for real, and is gone when its block ends."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster_celery import celery_executor
from upath import UPath

from tests.services import (
    Postgres,
    ServiceMissing,
    celery_workers,
    dagster_home,
    juicefs_gateway,
    juicefs_mount,
    juicefs_volume,
    postgres,
    program,
    redis_server,
    workers_logs,
)


def refused(url_port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", url_port), timeout=1).close()
    except OSError:
        return True
    return False


def test_postgres_cluster_stores_rows_in_a_new_database_and_is_gone_after():
    import sqlalchemy

    with postgres() as pg:
        url = pg.database("services_sql")
        assert url == f"postgresql+psycopg2://prove@127.0.0.1:{pg.port}/services_sql"
        pg.query("CREATE TABLE runs (id text PRIMARY KEY, n int)", db="services_sql")
        pg.query("INSERT INTO runs VALUES ('a', 1), ('b', 2)", db="services_sql")
        assert pg.query("SELECT id, n FROM runs ORDER BY id", db="services_sql") == [("a", "1"), ("b", "2")]
        # the URL's driver is the one dagster-postgres ships
        engine = sqlalchemy.create_engine(url)
        with engine.connect() as conn:
            assert conn.execute(sqlalchemy.text("SELECT sum(n) FROM runs")).scalar() == 3
        engine.dispose()
    assert refused(pg.port)
    assert not pg.folder.exists()


def test_redis_server_keeps_values_and_stops(tmp_path: Path):
    import redis

    with redis_server(tmp_path / "redis") as url:
        client = redis.Redis.from_url(url)
        assert client.ping()
        client.set("prove", "corpus")
        assert client.get("prove") == b"corpus"
        port = client.connection_pool.connection_kwargs["port"]
        client.close()
    assert refused(port)
    assert os.listdir(tmp_path / "redis") == ["redis.log"]  # nothing saved to disk


def test_juicefs_mount_and_gateway_share_one_volume(tmp_path: Path):
    import fsspec

    with juicefs_volume(tmp_path / "jfs") as volume:
        with juicefs_mount(volume) as mnt, juicefs_gateway(volume) as s3:
            assert os.path.ismount(mnt)
            # an atomic write through the mount: write a temporary file, rename it into place
            (mnt / "stages").mkdir()
            (mnt / "stages" / ".part").write_bytes(b"banking rows")
            os.replace(mnt / "stages" / ".part", mnt / "stages" / "banking.pkl")
            assert (mnt / "stages" / "banking.pkl").read_bytes() == b"banking rows"
            # the same volume over S3
            fs = fsspec.filesystem("s3", **s3.storage_options())
            assert fs.cat(f"{s3.bucket}/stages/banking.pkl") == b"banking rows"
            fs.pipe(f"{s3.bucket}/corpus/LATEST", b"v1")
            assert (mnt / "corpus" / "LATEST").read_bytes() == b"v1"
            # an s3:// root as a universal-pathlib path
            root = UPath(f"s3://{s3.bucket}", **s3.storage_options())
            assert sorted(p.name for p in root.iterdir() if p.name in ("corpus", "stages")) == ["corpus", "stages"]
            assert (root / "stages" / "banking.pkl").read_bytes() == b"banking rows"
        assert not os.path.ismount(mnt)
    # the data lives in the volume's object storage (chunks, not the files' names)
    assert any(p.is_file() for p in (volume.bucket / volume.name).rglob("*"))


def test_a_missing_program_is_named_with_its_install_command():
    with pytest.raises(ServiceMissing, match="no-such-server is not installed.*apt-get install -y no-such-server"):
        program("no-such-server", "apt-get install -y no-such-server")


@dg.op(out=dg.Out(int))
def seed() -> int:
    return 3


@dg.op
def on_a_worker(n: int) -> tuple[int, int]:
    time.sleep(1.0)  # long enough that the parallel steps are taken by both free workers
    return os.getpid(), n * 2


@dg.op
def gather(a: tuple[int, int], b: tuple[int, int], c: tuple[int, int], d: tuple[int, int]) -> int:
    return sum(x[1] for x in (a, b, c, d))


@dg.job(executor_def=celery_executor)
def split_job() -> None:
    n = seed()
    gather(*(on_a_worker.alias(f"on_a_worker_{i}")(n) for i in range(4)))


def test_dagster_steps_run_split_on_two_celery_workers_that_leave_their_folders_empty(
    pg_cluster: Postgres, redis_url: str, tmp_path: Path
):
    # the instance in PostgreSQL, the steps sent through Redis to two workers (dagster-celery's executor)
    home = dagster_home(tmp_path / "dagster_home", pg_cluster.database("celery_steps"))
    instance = dg.DagsterInstance.from_config(str(home))
    config = {"execution": {"config": {"broker": redis_url, "backend": redis_url}}}
    with celery_workers(tmp_path / "celery", redis_url, count=2) as workers:
        with dg.execute_job(dg.reconstructable(split_job), instance=instance, run_config=config) as r:
            assert r.success, workers_logs(workers)
            assert r.output_for_node("gather") == 24
            pids = {r.output_for_node(f"on_a_worker_{i}")[0] for i in range(4)}
        procs = [w.proc for w in workers]
    # the parallel steps ran in the workers' own processes, some on each
    assert pids == {p.pid for p in procs}
    assert all(p.poll() is not None for p in procs)  # stopped
    for w in workers:
        assert w.log_text().count("Task execute_plan[") >= 2, workers_logs([w])  # received and succeeded
        assert os.listdir(w.cwd) == [], f"{w.name} wrote into its working folder"
    assert pg_cluster.query("SELECT status FROM runs", db="celery_steps") == [("SUCCESS",)]
