"""Faults on the cluster path (docs/scale-out.md, "Faults"), on the services the distributed build's tests use (the
session's PostgreSQL cluster, Redis broker and two Celery workers: tests/conftest.py) and the scripted teacher on
loopback: the teacher's budget holds for the whole build however many workers run it; a worker killed mid-step
loses the step, which the build re-executes from the failure to the undisturbed build's corpus; a broker that does
not answer, and a storage root that is missing or read-only, fail the build at once naming what is wrong, with
nothing written anywhere else; a broker lost mid-build fails it within its timeout naming the broker, and the next
build (through a PostgreSQL restart) keeps the steps done and writes the undisturbed corpus; a database that stays
down fails the build naming it, and Dagster's run monitoring fails the run it left "started"."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from assets import distributed
from assets.cluster import ClusterUnavailable, InstanceUnavailable, database_url, instance_lost
from assets.orchestrate import BuildRun, build, run_error
from assets.resources import ensure_partitions
from pipeline.core.config import BuildConfig, DeploymentConfig, QueryConfig
from pipeline.core.storage import StorageRootError
from tests.builds import build_run
from tests.services import CeleryCluster, Postgres, dagster_home, free_port, workers_logs
from tests.teacher_endpoint import ScriptedTeacher

BUDGET = 4  # query.max_concurrency: the teacher's requests in flight for the whole build
EXAMPLES = 8


@dataclass
class Disturbed:
    build: BuildRun
    peak_in_flight: int  # the most requests the teacher's endpoint held at once during the build
    killed: list[int]  # the pool process killed while its step asked the teacher
    undisturbed: BuildRun  # the same config built in process, nothing killed


@pytest.fixture(scope="module")
def home(tmp_path_factory, pg_cluster: Postgres) -> Path:
    return dagster_home(tmp_path_factory.mktemp("faults_home"), pg_cluster.database("cluster_faults"))


@pytest.fixture(scope="module")
def instance(home: Path) -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.from_config(str(home)) as inst:
        yield inst


def on_cluster(data: Path, cluster: CeleryCluster, teacher: ScriptedTeacher, servers: list[str]) -> BuildConfig:
    data.mkdir(parents=True, exist_ok=True)
    return BuildConfig(
        examples=EXAMPLES,
        servers=servers,
        data_dir=str(data),
        query=QueryConfig(backend="llm", llm_base_url=teacher.url, llm_model="m", max_concurrency=BUDGET),
        deployment=DeploymentConfig(executor="celery", broker=cluster.broker),  # workers: 0, counted at the start
    )


def kill_when_teacher_asked(cluster: CeleryCluster, teacher: ScriptedTeacher, killed: list[int]) -> None:
    """SIGKILL the workers' pool process that is talking to the teacher (a step asking it), once."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if teacher.requests:  # a step asks the teacher now: find its process by its connection
            proc = cluster.pool_process_talking_to(teacher.port)
            if proc is not None:
                proc.kill()
                killed.append(proc.pid)
                return
        time.sleep(0.05)


@pytest.fixture(scope="module")
def disturbed(tmp_path_factory, home, instance, celery_cluster: CeleryCluster) -> Disturbed:
    """Two servers built on the two workers at once (``--parallel 2``), the teacher on loopback; the step that first
    asks the teacher has its worker's pool process killed (SIGKILL). Then the same config built in process."""
    tmp = tmp_path_factory.mktemp("disturbed")
    with ScriptedTeacher(latency=0.2) as teacher, pytest.MonkeyPatch.context() as mp:
        mp.setenv("DAGSTER_HOME", str(home))  # the parallel build's processes open the instance from it
        cfg = on_cluster(tmp / "cluster", celery_cluster, teacher, ["banking", "crm"])
        killed: list[int] = []
        killer = threading.Thread(target=kill_when_teacher_asked, args=(celery_cluster, teacher, killed))
        killer.start()
        b = build(cfg, instance=instance, parallel=2)
        killer.join()
        peak = teacher.peak_in_flight
        local = cfg.model_copy(update={"data_dir": str(tmp / "one_machine"), "deployment": DeploymentConfig()})
        teacher.latency = 0.0  # the same answers without the pause (324 requests: about 20 s of waiting at 0.2 s)
        undisturbed = build_run(local)
    logs = workers_logs(celery_cluster.workers)
    assert b.success and not b.unavailable, f"{b.error()}; left out: {b.unavailable}\n{logs}"
    return Disturbed(b, peak, killed, undisturbed)


def test_the_teachers_max_concurrency_is_the_budget_of_the_whole_build_on_two_workers(disturbed):
    b = disturbed.build
    assert b.cfg.deployment.workers == 2  # counted from the workers that answered (deployment.workers: 0)
    assert 0 < disturbed.peak_in_flight <= BUDGET, (
        f"{disturbed.peak_in_flight} requests in flight at the endpoint at once; the budget is {BUDGET}"
    )
    # each teacher step keeps to its share, half the budget: the two workers may run two such steps at once
    peaks = {
        (step, server): b.metadata(step, server)["teacher_peak_in_flight"]
        for step in ("user_queries", "conversations")
        for server in b.cfg.servers
    }
    assert max(peaks.values()) == BUDGET // 2, peaks


def test_a_worker_killed_mid_step_is_re_executed_from_the_failure_to_the_undisturbed_corpus(disturbed, instance):
    b = disturbed.build
    assert disturbed.killed, "no step was killed while it asked the teacher"
    runs = [instance.get_run_by_id(r) for r in b.runs]
    retries = [r for r in runs if r is not None and r.parent_run_id is not None]
    assert len(retries) == 1, [(r.run_id, r.status, r.tags) for r in runs if r is not None]
    retry = retries[0]
    first = instance.get_run_by_id(retry.parent_run_id)
    assert first is not None and first.status == dg.DagsterRunStatus.FAILURE
    assert retry.tags["prove/retry_of"] == first.run_id and retry.status == dg.DagsterRunStatus.SUCCESS
    why = first_failure(instance, first.run_id)
    assert "WorkerLostError" in why and "SIGKILL" in why, why
    # the killed step wrote no output: its first run materialized none of it, and no half-written file is left
    lost = [s for s in ("dependency_graphs", "user_queries", "conversations") if f"[{s}]" in why]
    assert lost, why
    assert not materialized(instance, first.run_id, lost[0])
    assert materialized(instance, retry.run_id, lost[0])
    assert not list(Path(b.cfg.data_dir).rglob("*.tmp")), "a half-written file was left under the storage root"
    assert content_hash(b.corpus_path) == content_hash(disturbed.undisturbed.corpus_path)


def content_hash(version: Path | None) -> str:
    assert version is not None
    return json.loads((version / "manifest.json").read_text())["content_hash"]


def first_failure(instance: dg.DagsterInstance, run_id: str) -> str:
    for rec in instance.all_logs(run_id, of_type=dg.DagsterEventType.RUN_FAILURE):
        err = rec.dagster_event.event_specific_data.error
        return err.message if err is not None else ""
    return ""


def materialized(instance: dg.DagsterInstance, run_id: str, asset: str) -> bool:
    recs = instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
    return any(r.dagster_event.asset_key == dg.AssetKey(asset) for r in recs)


def test_a_broker_that_does_not_answer_fails_the_build_within_its_timeout_naming_it(tmp_path, instance):
    broker = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there: Redis is down
    cfg = BuildConfig(
        examples=EXAMPLES,
        servers=["banking"],
        data_dir=str(tmp_path / "data"),
        deployment=DeploymentConfig(executor="celery", broker=broker, broker_timeout_s=2),
    )
    (tmp_path / "data").mkdir()
    t0 = time.monotonic()
    with pytest.raises(ClusterUnavailable, match=f"the Celery broker {broker} did not answer within 2 s"):
        build(cfg, instance=instance)
    assert time.monotonic() - t0 < 2 * 2 + 3
    assert os.listdir(tmp_path / "data") == []


def test_a_storage_root_that_is_gone_fails_the_build_naming_it_and_nothing_is_written_in_its_place(
    tmp_path, instance, celery_cluster
):
    mountpoint = tmp_path / "mnt"  # a shared file system's mount point, left empty when it is not mounted
    mountpoint.mkdir()
    root = mountpoint / "prove"
    cfg = BuildConfig(
        examples=EXAMPLES,
        servers=["banking"],
        data_dir=str(root),
        deployment=DeploymentConfig(executor="celery", broker=celery_cluster.broker),
    )
    with pytest.raises(StorageRootError, match=f"the storage root {root} \\(data_dir\\) does not exist"):
        build(cfg, instance=instance)
    # a worker whose mount is gone fails its step the same way (the run config names the root; no check before)
    ensure_partitions(instance, ["banking"])
    r = distributed.execute("server_job", cfg, instance=instance, tags={}, loggers={}, partition="banking")
    assert not r.success
    why = run_error(r)
    assert why.startswith("server_snapshots: ") and f"the storage root {root} (data_dir) does not exist" in why, why
    assert r.dagster_run.parent_run_id is None  # a step that failed itself is not re-executed
    assert os.listdir(mountpoint) == []


@contextlib.contextmanager
def read_only_bind(source: Path, target: Path) -> Iterator[Path]:
    target.mkdir()
    r = subprocess.run(["mount", "--bind", "-o", "ro", str(source), str(target)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"a read-only bind mount needs mount privileges here: {r.stderr.strip()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], capture_output=True)


def test_a_read_only_storage_root_fails_the_build_naming_it(tmp_path, instance, celery_cluster):
    (tmp_path / "src").mkdir()
    with read_only_bind(tmp_path / "src", tmp_path / "ro") as root:
        cfg = BuildConfig(
            examples=EXAMPLES,
            servers=["banking"],
            data_dir=str(root),
            deployment=DeploymentConfig(executor="celery", broker=celery_cluster.broker),
        )
        with pytest.raises(
            StorageRootError, match=f"the storage root {root} \\(data_dir\\) cannot be written: Read-only"
        ):
            build(cfg, instance=instance)
    assert os.listdir(tmp_path / "src") == []


# ---- the broker lost mid-build, and the instance's database restarted ----------------------------------------

SMALL = 4  # examples of the one-server builds below


def small_on_cluster(
    data: Path, cluster: CeleryCluster, servers: tuple[str, ...] = ("banking",), **deployment: float
) -> BuildConfig:
    data.mkdir(parents=True, exist_ok=True)
    return BuildConfig(
        examples=SMALL,
        servers=list(servers),
        data_dir=str(data),
        deployment=DeploymentConfig(executor="celery", broker=cluster.broker, **deployment),
    )


def when_stored(data: Path, asset: str, action, server: str = "banking", timeout: float = 300) -> threading.Thread:
    """``action`` in a thread once the build has stored ``asset``'s output of ``server`` (one step done)."""

    def wait() -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not (data / "stages" / asset / f"{server}.pkl").exists():
            time.sleep(0.05)
        action()

    t = threading.Thread(target=wait)
    t.start()
    return t


def when_started(instance: dg.DagsterInstance, test: str, action, timeout: float = 300) -> threading.Thread:
    """``action`` in a thread once the build's first run (tagged ``prove/test: test``) has started."""

    def wait() -> None:
        deadline = time.monotonic() + timeout
        started = dg.RunsFilter(tags={"prove/test": test}, statuses=[dg.DagsterRunStatus.STARTED])
        while time.monotonic() < deadline and not instance.get_runs(started, limit=1):
            time.sleep(0.1)
        action()

    t = threading.Thread(target=wait)
    t.start()
    return t


def workers_answer(cluster: CeleryCluster, timeout: float = 60) -> None:
    """Until both workers answer Celery's ping again (they reconnect to a broker that came back by themselves)."""
    from celery import Celery

    app = Celery(broker=cluster.broker, backend=cluster.broker)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                if len(app.control.inspect(timeout=1).ping() or {}) == len(cluster.workers):
                    return
            time.sleep(0.5)
        raise AssertionError(f"the workers did not come back to the broker\n{workers_logs(cluster.workers)}")
    finally:
        app.close()


def steps_started(instance: dg.DagsterInstance, run_id: str) -> set[str]:
    return {r.dagster_event.step_key for r in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_START)}


def test_a_broker_lost_mid_build_fails_it_naming_the_broker_and_the_next_build_keeps_the_steps_done(
    tmp_path, instance, pg_cluster, celery_cluster
):
    """Two servers built one after the other; Redis stopped once the build has stored crm's dependency graphs
    (banking's run done): the build fails within the broker's timeout naming it. Built again with Redis back, and
    PostgreSQL restarted during that build (``pg_ctl stop -m smart`` then ``start``: dagster-postgres retries its
    connections meanwhile): banking's run is kept as it is, crm's failed run is re-executed from its failure, the
    steps it finished are not run again, and the corpus is the undisturbed build's."""
    redis = celery_cluster.redis
    assert redis is not None
    data = tmp_path / "cluster"
    cfg = small_on_cluster(data, celery_cluster, ("banking", "crm"), broker_timeout_s=2)
    stopped: list[float] = []

    def stop_broker() -> None:
        redis.stop()
        stopped.append(time.monotonic())

    try:
        lost = when_stored(data, "dependency_graphs", stop_broker, server="crm")
        with pytest.raises(ClusterUnavailable, match=f"the Celery broker {cfg.deployment.broker} stopped answering"):
            build(cfg, instance=instance)
        failed_after = time.monotonic() - stopped[0]
        lost.join()
    finally:
        if redis.proc is None or redis.proc.poll() is not None:
            redis.start()  # back on the same port, empty (the tasks it held are gone)
        workers_answer(celery_cluster)
    assert failed_after < 2 * 2 + 5, f"the build failed {failed_after:.1f} s after the broker stopped"
    (kept,) = instance.get_runs(dg.RunsFilter(tags={distributed.BUILD_KEY: key(cfg, "banking")}))
    assert kept.status == dg.DagsterRunStatus.SUCCESS
    (first,) = instance.get_runs(dg.RunsFilter(tags={distributed.BUILD_KEY: key(cfg, "crm")}))
    assert first.status == dg.DagsterRunStatus.FAILURE
    done = steps_started(instance, first.run_id)
    assert {"server_snapshots", "dependency_graphs"} <= done, done

    def restart_database() -> None:
        pg_cluster.stop("smart")
        restarted.append(time.monotonic())
        pg_cluster.start()

    restarted: list[float] = []
    try:
        bounce = when_stored(data, "tool_chains", restart_database, server="crm")
        again = build(cfg, instance=instance)
        bounce.join()
    finally:
        with contextlib.suppress(Exception):
            pg_cluster.start()  # already running unless the restart failed half-way
    assert restarted, "PostgreSQL was not restarted during the build"
    assert again.success, again.error()
    # banking's run of the same build succeeded with its outputs intact: kept, not run again
    assert again.runs[0] == kept.run_id
    assert len(instance.get_runs(dg.RunsFilter(tags={distributed.BUILD_KEY: key(cfg, "banking")}))) == 1
    resumed = instance.get_run_by_id(again.runs[1])
    assert resumed.parent_run_id == first.run_id and resumed.status == dg.DagsterRunStatus.SUCCESS
    redone = steps_started(instance, resumed.run_id)
    assert redone and not redone & done, (done, redone)  # only the steps the first run did not finish
    assert not list(data.rglob("*.tmp")), "a half-written file was left under the storage root"
    local = cfg.model_copy(update={"data_dir": str(tmp_path / "one_machine"), "deployment": DeploymentConfig()})
    assert content_hash(again.corpus_path) == content_hash(build_run(local).corpus_path)
    # that build wrote its corpus version: a third one starts afresh (its servers may have changed since), it does
    # not keep what this one ran
    prepared = distributed.for_workers(cfg)
    for server in cfg.servers:
        assert distributed.resumable(instance, prepared, "server_job", key(cfg, server), server) is None


def key(cfg: BuildConfig, server: str) -> str:
    """The build key of ``server``'s run of a build of ``cfg`` (as ``prove build`` makes it)."""
    prepared_cfg = distributed.for_workers(cfg)
    return distributed.build_key("server_job", prepared_cfg, False, None, server)


def test_a_database_down_during_a_build_fails_it_naming_the_database_and_run_monitoring_fails_the_run_left(
    tmp_path, instance, pg_cluster, celery_cluster
):
    """PostgreSQL stopped once the build's first run has started, and kept down: each write to the instance is
    retried by dagster-postgres (5 connections over about 6 s), then the build fails naming the database. The run it
    could not mark failed is left "started" until Dagster's run monitoring (on in the cluster's instance config,
    examples/cluster/dagster.yaml) finds it past its maximum runtime and fails it."""
    data = tmp_path / "cluster"
    cfg = small_on_cluster(data, celery_cluster)
    url = database_url(instance)
    assert url.startswith("postgresql+psycopg2://prove@127.0.0.1:") and url.endswith("/cluster_faults")
    stopped: list[float] = []
    try:
        down = when_started(instance, "database-down", lambda: (pg_cluster.stop(), stopped.append(time.monotonic())))
        with pytest.raises(InstanceUnavailable, match=f"the Dagster instance's database {re.escape(url)} did not"):
            build(cfg, instance=instance, tags={"prove/test": "database-down"})
        failed_after = time.monotonic() - stopped[0]
        down.join()
    finally:
        pg_cluster.start()
    assert failed_after < 120, f"the build failed {failed_after:.0f} s after the database stopped"
    (left,) = instance.get_runs(dg.RunsFilter(tags={"prove/test": "database-down"}))
    assert left.status == dg.DagsterRunStatus.STARTED  # nobody could write its failure
    # what the daemon's run monitoring does each poll with the instance's settings (its check of a started run's
    # runtime; max_runtime_seconds shortened to 1 s here, the shipped one is a day)
    from dagster._daemon.monitoring.run_monitoring import check_run_timeout  # private: the daemon's own check

    assert instance.run_monitoring_enabled and instance.run_monitoring_max_runtime_seconds == 86400
    time.sleep(1.1)
    check_run_timeout(instance, instance.get_run_record_by_id(left.run_id), logging.getLogger("run_monitoring"), 1)
    after = instance.get_run_by_id(left.run_id)
    assert after.status == dg.DagsterRunStatus.FAILURE
    why = [r.message for r in instance.all_logs(left.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)]
    assert any("maximum runtime" in m or "forcibly marked as failed" in m for m in why), why


def test_a_connection_the_database_ends_during_a_query_is_named_as_the_instance_database(instance, pg_cluster):
    """A stop or a restart of PostgreSQL ends the sessions it has: a query then running on the instance's database
    (a run's event written, its record read) fails with the connection, which dagster-postgres does not retry. The
    build names the database, as for a connection it could not make (seen when the database-down test's stop came
    as Dagster read a run back after writing its start)."""
    import sqlalchemy as sa

    engine = sa.create_engine(instance.run_storage.postgres_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn, engine.connect() as other:
            pid = conn.execute(sa.text("select pg_backend_pid()")).scalar()
            ended = threading.Timer(0.5, lambda: other.execute(sa.text(f"select pg_terminate_backend({pid})")))
            ended.start()
            with pytest.raises(InstanceUnavailable) as raised, instance_lost(instance):
                conn.execute(sa.text("select pg_sleep(30)"))
            ended.join()
    finally:
        engine.dispose()
    said = str(raised.value)
    named = f"the Dagster instance's database {database_url(instance)} did not answer: it ended the connection"
    assert said.startswith(named), said
    assert "server closed the connection unexpectedly" in said and "Start it and build again" in said, said


def test_prove_build_on_a_cluster_says_a_missing_root_or_a_silent_broker_in_one_line_and_makes_no_root(
    tmp_path, capsys
):
    from assets.cli import main

    mountpoint = tmp_path / "mnt"  # an unmounted shared file system: an empty mount point
    mountpoint.mkdir()
    broker = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    build_file = tmp_path / "scale.yaml"
    for root in (mountpoint / "prove", tmp_path / "data"):
        build_file.write_text(
            json.dumps(
                {
                    "data_dir": str(root),
                    "servers": ["banking"],
                    "deployment": {"executor": "celery", "broker": broker, "broker_timeout_s": 1},
                }
            )
        )
        if root.parent == mountpoint:
            with pytest.raises(SystemExit, match=f"prove: the storage root {root} \\(data_dir\\) does not exist"):
                main(["build", "--config", str(build_file), "--no-train", "--examples", "4"])
            assert os.listdir(mountpoint) == []  # not even the build's log: the root was never made
        else:
            root.mkdir()
            assert main(["build", "--config", str(build_file), "--no-train", "--examples", "4"]) == 1
            err = capsys.readouterr().err.strip()
            assert err.startswith(f"prove: the Celery broker {broker} did not answer within 1 s"), err
            assert "Traceback" not in err
