"""A build whose steps run on two Celery workers (Dagster's instance on PostgreSQL, a Redis broker, the storage
root on a JuiceFS mount; every service real, on loopback: tests/services.py) writes the very corpus the
one-machine build writes; and a server the corpus run lists but whose stage output is gone fails that run by name."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from assets.automated_build import AutomatedBuild
from assets.definitions import make_definitions
from assets.orchestrate import BuildRun, build, corpus_run, run_error
from pipeline.core.config import BuildConfig, DeploymentConfig
from tests.builds import build_run
from tests.services import (
    CeleryCluster,
    CeleryWorker,
    Postgres,
    dagster_home,
    juicefs_mount,
    juicefs_volume,
    workers_logs,
)

SERVERS = ["banking", "crm", "calendar"]
EXAMPLES = 40
PER_SERVER_STEPS = 6  # probe -> replay
CORPUS_STEPS = 8  # dedup, augment, corpus, rejections and the corpus's four checks


@dataclass
class OnCelery:
    build: BuildRun
    workers: list[CeleryWorker]
    root: Path  # the storage root on the JuiceFS mount
    log_from: list[int]  # where each worker's log stood when the build started (the session's workers are shared)


def content_hash(version: Path | None) -> str:
    assert version is not None
    return json.loads((version / "manifest.json").read_text())["content_hash"]


@pytest.fixture(scope="module")
def one_machine(tmp_path_factory) -> BuildRun:
    """The default build of the config: every run in this process, the data in a local folder."""
    data = tmp_path_factory.mktemp("one_machine") / "data"
    return build_run(BuildConfig(examples=EXAMPLES, servers=SERVERS, data_dir=str(data)))


@pytest.fixture(scope="module")
def on_celery(tmp_path_factory, pg_cluster: Postgres, celery_cluster: CeleryCluster) -> Iterator[OnCelery]:
    """The same config with ``deployment.executor: celery``: a PostgreSQL instance, the session's Redis broker and
    two workers in empty folders, and ``data_dir`` on a JuiceFS mount. The services stay up for the module's tests."""
    tmp = tmp_path_factory.mktemp("on_celery")
    home = dagster_home(tmp / "dagster_home", pg_cluster.database("distributed_build"))
    broker, workers = celery_cluster.broker, celery_cluster.workers
    log_from = [len(w.log_text()) for w in workers]
    with (
        juicefs_volume(tmp / "juicefs") as volume,
        juicefs_mount(volume) as mnt,
        dg.DagsterInstance.from_config(str(home)) as instance,
    ):
        (mnt / "prove").mkdir()  # the storage root: a build on a cluster never creates it (a mount may be missing)
        cfg = BuildConfig(
            examples=EXAMPLES,
            servers=SERVERS,
            data_dir=str(mnt / "prove"),
            deployment=DeploymentConfig(executor="celery", broker=broker),
        )
        b = build(cfg, instance=instance)
        assert b.success and not b.unavailable, f"{b.error()}; left out: {b.unavailable}\n{workers_logs(workers)}"
        yield OnCelery(b, workers, mnt / "prove", log_from)


def steps_run_by(worker: CeleryWorker, log_from: int = 0) -> Counter[str]:
    """The steps a worker's log says it executed since ``log_from`` (dagster-celery's task result names each
    one's step)."""
    return Counter(re.findall(r'"text": "([a-z_]+)"\}, "label": "step_keys"', worker.log_text()[log_from:]))


def test_a_celery_build_on_a_juicefs_root_writes_the_corpus_of_the_one_machine_build(one_machine, on_celery):
    assert content_hash(on_celery.build.corpus_path) == content_hash(one_machine.corpus_path)
    # everything that outlives a step is under the storage root the run config named
    root = on_celery.root
    assert on_celery.build.corpus_path.parent == root / "corpus"
    assert (root / "corpus" / "LATEST").read_text().strip() == on_celery.build.corpus_path.name
    assert (root / "corpus" / "prove.duckdb").is_file()
    assert sorted(p.name for p in (root / "stages" / "validated_conversations").glob("*.pkl")) == sorted(
        [f"{s}.pkl" for s in SERVERS] + [f"{s}.rejections.pkl" for s in SERVERS]
    )
    assert (root / "cache" / "graphs").is_dir()
    runs = on_celery.build.instance.get_run_records()
    assert len(runs) == len(SERVERS) + 1
    assert {r.dagster_run.tags.get("dagster/partition") for r in runs} == {*SERVERS, None}


def test_the_steps_are_split_between_both_workers_whose_folders_stay_empty(on_celery):
    ran = [steps_run_by(w, at) for w, at in zip(on_celery.workers, on_celery.log_from, strict=True)]
    assert all(sum(c.values()) > 0 for c in ran), f"a worker ran no step: {ran}\n{workers_logs(on_celery.workers)}"
    assert sum(sum(c.values()) for c in ran) == len(SERVERS) * PER_SERVER_STEPS + CORPUS_STEPS, (
        ran,
        workers_logs(on_celery.workers),
    )
    assert {"server_snapshots", "validated_conversations", "unique_conversations", "corpus"} <= set(sum(ran, Counter()))
    for w in on_celery.workers:
        assert os.listdir(w.cwd) == [], f"{w.name} wrote into its working folder"


@pytest.mark.parametrize("where", ["one_machine", "on_celery"])
def test_a_listed_server_whose_stage_output_is_gone_fails_the_corpus_run_naming_it(where, request):
    got = request.getfixturevalue(where)
    b = got if isinstance(got, BuildRun) else got.build
    stages = Path(b.cfg.data_dir) / "stages" / "validated_conversations"
    for f in stages.glob("crm.*"):
        f.unlink()
    r = corpus_run(b)
    assert not r.success
    why = run_error(r)
    assert "crm" in why and "validated_conversations" in why, why
    assert "banking" not in why and "calendar" not in why, why


def test_the_jobs_the_ui_and_the_automation_launch_follow_the_deployment_and_carry_the_storage_root(tmp_path):
    cfg = BuildConfig(
        examples=EXAMPLES,
        servers=SERVERS,
        data_dir=str(tmp_path / "shared"),
        deployment=DeploymentConfig(executor="celery", broker="redis://127.0.0.1:6379/0"),
    )
    build = AutomatedBuild(cfg, train=False, source="test")
    defs = make_definitions(build=build)
    run = build.run_config()
    for job in ("server_job", "corpus_job"):
        assert defs.resolve_job_def(job).executor_def.name == "celery", job
    execution = run["execution"]["config"]
    assert {k: execution[k] for k in ("broker", "backend")} == {
        "broker": "redis://127.0.0.1:6379/0",
        "backend": "redis://127.0.0.1:6379/0",
    }
    assert execution["config_source"]["broker_connection_timeout"] == cfg.deployment.broker_timeout_s
    assert run["resources"]["io_manager"]["config"]["base_dir"] == str(tmp_path / "shared" / "stages")
    assert run["resources"]["settings"]["config"]["build"]["data_dir"] == str(tmp_path / "shared")
    # the one-machine default runs the steps in the run's process, as prove build does, with no executor config
    plain = AutomatedBuild(BuildConfig(servers=SERVERS), train=False, source="test")
    assert "execution" not in plain.run_config()
    default = make_definitions(build=plain).resolve_job_def("server_job").executor_def
    assert default is dg.in_process_executor


def test_a_celery_deployment_without_a_broker_and_a_url_as_data_dir_are_refused_by_name():
    with pytest.raises(ValueError, match="needs a broker"):
        DeploymentConfig(executor="celery")
    with pytest.raises(ValueError, match="mount the bucket"):
        BuildConfig(data_dir="s3://bucket/prove")
