"""Faults on the cluster path (docs/scale-out.md, "Faults"), on the services the distributed build's tests use (the
session's PostgreSQL cluster, Redis broker and two Celery workers: tests/conftest.py) and the scripted teacher on
loopback: the teacher's budget holds for the whole build however many workers run it; a worker killed mid-step
loses the step, which the build re-executes from the failure to the undisturbed build's corpus; a broker that does
not answer, and a storage root that is missing or read-only, fail the build at once naming what is wrong, with
nothing written anywhere else."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from assets import distributed
from assets.cluster import ClusterUnavailable
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
