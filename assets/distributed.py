"""Runs whose steps execute outside the calling process: Dagster's multiprocess executor (each step its own process
on this machine) or its Celery executor (each step a task that any Celery worker, on any machine, may take).

``assets.orchestrate`` comes here when the build's ``deployment.executor`` is not ``in_process``
(``pipeline.core.config.DeploymentConfig``; docs/scale-out.md); the default build never does. Each run (a server's
partition of ``server_job``, then ``corpus_job``) goes through Dagster's job execution, :func:`dagster.execute_job`
on a reconstructable job: a worker rebuilds the job from this module (:func:`job_for`) and takes everything a step
needs from the run's config, which the instance keeps with the run (:func:`run_config`): the build settings (their
``data_dir``, the storage root, made absolute by :func:`for_workers`), the training settings and the stage store's
folder. Nothing a step reads comes from a worker's working directory or its environment (the teacher's API key
aside, which stays a secret of the machine that calls the teacher).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from assets.automation import CROSS, asset_jobs
from assets.cluster import broker_lost, instance_lost
from assets.corpus import CHECKS
from assets.definitions import ALL_ASSETS, resources
from assets.executors import execution_config, executor_def
from assets.resources import WRITE_TOKEN, StageStore, write_token
from assets.synthesis import PER_SERVER
from pipeline.core.config import BuildConfig

# dagster-celery makes its Celery app again for each run and registers its one task on it again, which Celery warns of
warnings.filterwarnings("ignore", message="Task name 'execute_plan' is already registered")

# a step the Celery executor lost (its worker died): "[<step>]: <exception>: <message>" in the run's failure
LOST_STEP = re.compile(r"^\[([a-z0-9_]+)\]: (\S+: .*)$", re.M)

MODULE = __name__
# where the code is imported from, so a worker that reconstructs a job imports the same project
CODE_ROOT = str(Path(__file__).resolve().parents[1])


@functools.cache
def job_for(name: str, executor: str) -> dg.JobDefinition:
    """``server_job`` or ``corpus_job`` (the jobs ``prove build`` runs) with the named executor: what a worker
    rebuilds for each step. Its resources' values are placeholders that every run's config replaces."""
    jobs = asset_jobs(PER_SERVER, CROSS, launchpad=False)
    defs = dg.Definitions(
        assets=ALL_ASSETS, asset_checks=CHECKS, jobs=list(jobs), resources=resources(), executor=executor_def(executor)
    )
    return defs.resolve_job_def(name)


def for_workers(cfg: BuildConfig) -> BuildConfig:
    """The build's settings as a worker reads them: the storage root (``data_dir``), the caches and the imported
    files as absolute paths, resolved here (a worker's working directory is no part of the build)."""

    def absolute(p: str | None) -> str | None:
        return str(Path(p).resolve()) if p else p

    return cfg.model_copy(
        update={
            "data_dir": absolute(cfg.data_dir),
            "graph": cfg.graph.model_copy(update={"cache_dir": absolute(cfg.graph.cache_dir)}),
            "query": cfg.query.model_copy(update={"cache_dir": absolute(cfg.query.cache_dir)}),
            "augment": cfg.augment.model_copy(update={"import_files": [absolute(f) for f in cfg.augment.import_files]}),
        }
    )


def run_config(
    cfg: BuildConfig, train: bool, train_params: dict[str, Any] | None, loggers: dict[str, Any]
) -> dict[str, Any]:
    """Everything a step needs, in the run's config: the executor's settings, the build settings, the training
    settings and the stage store's folder under the storage root."""
    return {
        "execution": {"config": execution_config(cfg)},
        "resources": {
            "settings": {"config": {"build": cfg.model_dump(mode="json")}},
            "training": {"config": {"train": train, "params": dict(train_params or {})}},
            "io_manager": {"config": {"base_dir": str(cfg.data_path / "stages")}},
        },
        **loggers,
    }


def execute(
    name: str,
    cfg: BuildConfig,
    *,
    instance: dg.DagsterInstance,
    tags: dict[str, str],
    loggers: dict[str, Any],
    partition: str | None = None,
    train: bool = False,
    train_params: dict[str, Any] | None = None,
    asset_selection: list[dg.AssetKey] | None = None,
) -> dg.JobExecutionResult:
    """One run of ``name`` (for ``partition``) through ``execute_job`` with the build's executor; waits for it."""
    if instance.is_ephemeral:
        raise ValueError(
            f"executor {cfg.deployment.executor!r} needs a Dagster instance on disk (DAGSTER_HOME), "
            "not an ephemeral one"
        )
    job = dg.build_reconstructable_job(
        MODULE,
        job_for.__name__,
        reconstructable_args=(name, cfg.deployment.executor),
        reconstructor_working_directory=CODE_ROOT,
    )
    tags = {**tags, **({"dagster/partition": partition} if partition else {})}
    config = run_config(cfg, train, train_params, loggers)
    key = build_key(name, cfg, train, train_params, partition)
    tags[BUILD_KEY] = key
    with instance_lost(instance):
        earlier = resumable(instance, cfg, name, key, partition)
        if isinstance(earlier, Reused):  # this server's run of the same build succeeded, its outputs intact
            return earlier
        if earlier is not None:  # the same build's run failed (the broker lost, say): its finished steps are kept
            result = dg.execute_job(
                job, instance=instance, run_config=config, tags={**tags, "prove/resumed_from": earlier},
                reexecution_options=dg.ReexecutionOptions.from_failure(earlier, instance), raise_on_error=False,
            )  # fmt: skip
            broker_lost(cfg, result)
        else:
            result = dg.execute_job(
                job, instance=instance, run_config=config, tags=tags, asset_selection=asset_selection,
                raise_on_error=False,
            )  # fmt: skip
            broker_lost(cfg, result)
        # a run whose step was lost with its worker (not a step that failed itself, nor an interrupt) is re-executed
        # from its failure (Dagster's re-execution: the lost step and those after it; the finished ones are kept),
        # deployment.run_retries times at most
        for _ in range(cfg.deployment.run_retries if cfg.deployment.executor == "celery" else 0):
            if result.success or "WorkerLostError" not in lost_steps(result):
                break
            result = dg.execute_job(
                job,
                instance=instance,
                tags={**tags, "prove/retry_of": result.run_id},
                reexecution_options=dg.ReexecutionOptions.from_failure(result.run_id, instance),
                raise_on_error=False,
            )
            broker_lost(cfg, result)
    return result


BUILD_KEY = "prove/build_key"  # the tag naming what a run builds: the same key, the same outputs


def build_key(
    name: str, cfg: BuildConfig, train: bool, train_params: dict[str, Any] | None, partition: str | None
) -> str:
    """What a run of ``name`` (for ``partition``) depends on, hashed: the build settings but where its steps run
    (``deployment``), the training settings and the assets' code versions. Two runs with the same key write the
    same outputs."""
    versions = sorted(
        (k.to_user_string(), v or "")
        for a in ALL_ASSETS
        if isinstance(a, dg.AssetsDefinition)
        for k, v in a.code_versions_by_key.items()
    )
    what = {
        "job": name,
        "partition": partition,
        "build": cfg.model_dump(mode="json", exclude={"deployment"}),
        "train": [train, train_params or {}],
        "code": versions,
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class Reused:
    """A server's run of an earlier build with the same key, whose outputs are still stored as it wrote them: what
    the build keeps instead of running it again (the fields ``prove build`` reads of a run's result)."""

    run_id: str
    success: bool = True
    all_events: list[Any] = field(default_factory=list)


def resumable(
    instance: dg.DagsterInstance, cfg: BuildConfig, name: str, key: str, partition: str | None
) -> Reused | str | None:
    """What an earlier build with the same key (:func:`build_key`) that did not reach its corpus version left of a
    server's run (``server_job`` only: the corpus run always runs again; a build that wrote its version is not
    resumed, :func:`published_since`): :class:`Reused` when its last run succeeded, the run's id when it failed (to
    re-execute from its failure: Dagster's re-execution keeps the steps that finished), None when there is none, or
    when an output it wrote is no longer the file it wrote (another build wrote there since: its write token,
    :class:`assets.resources.StageStore`, is not the one in the materialization)."""
    if name != "server_job" or partition is None:
        return None
    records = instance.get_run_records(dg.RunsFilter(job_name=name, tags={BUILD_KEY: key}), limit=1)
    if not records or records[0].dagster_run.status not in (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE):
        return None
    if published_since(cfg, records[0].create_timestamp.timestamp()):
        return None  # that build wrote its corpus version: a new one starts afresh (its servers may have changed)
    last = records[0].dagster_run
    store = StageStore(base_dir=str(cfg.data_path / "stages"))
    group = instance.get_runs(dg.RunsFilter(tags={BUILD_KEY: key}))
    written: dict[dg.AssetKey, tuple[int, Any]] = {}  # each asset's last materialization by a run of the key
    for run in group:
        for rec in instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records:
            mat = rec.asset_materialization
            if mat is not None and mat.partition == partition and rec.storage_id > written.get(mat.asset_key, (-1,))[0]:
                written[mat.asset_key] = (rec.storage_id, mat)
    for asset, (_, mat) in written.items():
        token = mat.metadata.get(WRITE_TOKEN)
        if token is None or write_token(store.path(asset, partition)) != token.value:
            return None
    if last.status == dg.DagsterRunStatus.SUCCESS:
        return Reused(last.run_id)
    return last.run_id


def published_since(cfg: BuildConfig, started: float) -> bool:
    """Whether a corpus version (any status) was written under ``cfg``'s data folder after ``started`` (POSIX time):
    the build that ran then went to its end, so what it left is not resumed."""
    return any(m.stat().st_mtime > started for m in (cfg.data_path / "corpus").glob("v*/manifest.json"))


def lost_steps(result: Any) -> str:
    """The steps whose Celery tasks failed without a step failure (the executor's own failure: a worker lost
    (Celery's ``WorkerLostError``), or a step that failed before it started), in one line; empty when none did."""
    for ev in result.all_events:
        if ev.event_type_value == "PIPELINE_FAILURE" and ev.event_specific_data is not None:
            err = getattr(ev.event_specific_data, "error", None)
            found = LOST_STEP.findall(err.message if err is not None else "")
            if found:
                return "; ".join(f"{step}: {why.strip()[:300]} (its Celery task failed)" for step, why in found)
    return ""
