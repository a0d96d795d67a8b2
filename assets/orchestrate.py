"""The one way a corpus is built: the Dagster assets of ``assets.definitions``, materialized in order.

1. Each server's partition of the per-server assets (probe -> replay) as its own ``server_job`` run: one after
   another in this process, or ``parallel`` worker processes each materializing one partition's run.
   A server whose run fails is left out and recorded as ``server_unavailable``; the build goes on.
2. The cross-server assets (dedup -> augment -> rejections -> corpus, and the policy when training)
   with the corpus's blocking quality gates, as one ``corpus_job`` run.

Each run executes in process by default. When the build's ``deployment.executor`` is ``multiprocess`` or
``celery``, each run goes through Dagster's job execution instead and its steps run in other processes or on
Celery workers (:mod:`assets.distributed`; docs/scale-out.md).

``prove build`` calls :func:`build` (with a display listening to :mod:`assets.progress`), and so do the
tests and ``bench/build_throughput.py``: nothing else re-implements the build. An interrupt stops the
worker processes and marks a version written but not yet checked as failed (never the default).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from assets import distributed, progress
from assets.automation import CROSS, asset_jobs
from assets.cli.interrupt import stop_descendants, worker_init
from assets.cluster import prepared
from assets.corpus import CHECKS
from assets.definitions import ALL_ASSETS, resources
from assets.executors import steps_elsewhere
from assets.instance_home import prepare_home
from assets.instance_storage import sqlite_backed
from assets.resources import HANDOFF, StageStore, ensure_partitions
from assets.sqlite_commits import relaxed_sync
from assets.synthesis import PER_SERVER
from assets.training import grpo_policy, policy_eval
from pipeline.core.config import BuildConfig
from pipeline.core.speedups import settled_run
from pipeline.corpus.store import CHECKED_GATES, gate_results, list_versions, record_gate, refresh_latest
from pipeline.language.teacher_client import PARTITIONS_ENV

# the runs' own log lines go to the Dagster instance (the UI); the console shows warnings only
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
# the project's two jobs, as prove build runs them: the same names and assets as in the UI (so its runs are listed
# under server_job and corpus_job), without the launchpad's default config (the build's own resources apply)
BUILD_JOBS = asset_jobs(PER_SERVER, CROSS, launchpad=False)


def build_jobs(res: dict[str, Any]) -> dg.Definitions:
    """``server_job`` and ``corpus_job`` bound to one build's resources."""
    return dg.Definitions(assets=ALL_ASSETS, asset_checks=CHECKS, jobs=list(BUILD_JOBS), resources=res)


@dataclass
class BuildRun:
    """What a build did: its Dagster runs, the servers left out, and the corpus run's result."""

    cfg: BuildConfig  # as the corpus run saw it: servers that failed are in ``unavailable_servers``
    instance: dg.DagsterInstance
    runs: list[str] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)
    result: Any = None  # the corpus run's result; None when every server failed

    @property
    def success(self) -> bool:
        return self.result is not None and self.result.success

    @property
    def corpus_path(self) -> Path | None:
        """The corpus version the run wrote (None when it wrote none)."""
        if self.result is None:
            return None
        mats = self.result.asset_materializations_for_node("corpus")
        return Path(mats[-1].metadata["path"].value) if mats else None

    def error(self) -> str:
        return run_error(self.result) if self.result is not None else "every server failed"

    def output(self, asset: str, partition: str | None = None) -> Any:
        """A stage's stored output (its items, rejections and stats), as the next stage read it."""
        return StageStore(base_dir=str(self.cfg.data_path / "stages")).load(asset, partition)

    def metadata(self, asset: str, partition: str | None = None) -> dict[str, Any]:
        """The metadata of an asset's (partition's) latest materialization, as plain values."""
        recs = self.instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[partition] if partition else None),
            limit=1,
        ).records
        mat = recs[0].asset_materialization if recs else None
        return {k: v.value for k, v in mat.metadata.items()} if mat is not None else {}


def instance_commits(instance: dg.DagsterInstance) -> contextlib.AbstractContextManager[None]:
    """The instance's SQLite commits waiting for no fsync (:func:`assets.sqlite_commits.relaxed_sync`) when it is on
    SQLite (:func:`assets.instance_storage.sqlite_backed`); nothing for an instance on PostgreSQL."""
    return relaxed_sync() if sqlite_backed(instance) else contextlib.nullcontext()


def prepare_instance(cfg: BuildConfig) -> dg.DagsterInstance:
    """The Dagster instance under ``$DAGSTER_HOME`` (default: the data dir's ``dagster_home``), with our
    dagster.yaml (:func:`prepare_home`)."""
    prepare_home(cfg.data_dir)
    return dg.DagsterInstance.get()


def run_error(result: Any) -> str:
    """The first step failure of a Dagster run result, in one line."""
    for ev in result.all_events:
        if ev.is_step_failure and ev.step_failure_data and ev.step_failure_data.error:
            err = ev.step_failure_data.error
            while err.cause is not None:  # the user code's own exception, not Dagster's wrapper
                err = err.cause
            return f"{ev.step_key}: " + err.message.strip().splitlines()[-1][:300]
    return distributed.lost_steps(result) or "unknown error"


def _interrupted(signalled: Callable[[], bool], result: Any) -> bool:
    """Whether a signal arrived: the caller's handler saw it, or Dagster (whose handlers take SIGINT and SIGTERM
    over while a run executes in this process) turned it into an interrupted step."""
    if signalled():
        return True
    for ev in result.all_events:
        err = ev.step_failure_data.error if ev.is_step_failure and ev.step_failure_data else None
        while err is not None:
            if err.cls_name in ("DagsterExecutionInterruptedError", "KeyboardInterrupt"):
                return True
            err = err.cause
    return False


@settled_run()
def _materialize_partition(
    server: str, build_config_json: str, environ: dict[str, str], at_once: int = 1
) -> tuple[str, bool, str, str]:
    """One server's partition of the per-server assets, in a worker process of a parallel build (``at_once``:
    how many partitions run at the same time, which share the teacher's ``max_concurrency`` equally). ``environ``:
    the build's environment (``DAGSTER_HOME`` among it), as the parent has it now: a worker is forked from the
    forkserver, whose environment is the parent's when the first parallel build started it."""
    os.environ.clear()
    os.environ.update(environ)
    os.environ[PARTITIONS_ENV] = str(at_once)
    cfg = BuildConfig.model_validate_json(build_config_json)
    tags = {"prove/build": "cli", "prove/parallel": "true"}
    instance = dg.DagsterInstance.get()
    try:
        if steps_elsewhere(cfg):  # this process only waits for the run; its steps run elsewhere
            r = distributed.execute("server_job", cfg, instance=instance, tags=tags, loggers=QUIET, partition=server)
        else:
            with instance_commits(instance):
                r = (
                    build_jobs(resources(build_config=cfg, train=False))
                    .resolve_job_def("server_job")
                    .execute_in_process(
                        partition_key=server,
                        instance=instance,
                        run_config=QUIET,
                        tags=tags,
                        raise_on_error=False,
                    )
                )
    finally:
        HANDOFF.clear()  # the server's last output is read by the cross-server run, in another process
    return server, r.success, r.run_id, "" if r.success else run_error(r)


def _forwarding_worker_init(build_pid: int, updates: Any, ready: Any = None) -> None:
    """A build worker that also sends its teacher progress (answers per second, requests in flight) to the parent.
    ``ready``: a barrier of all the pool's workers, passed once each has started, so the partitions start
    together: a worker still starting (a second under load) would otherwise find the first one had run its
    partition and taken the next too (a short run is under a second)."""
    worker_init(build_pid)
    if ready is not None:
        with contextlib.suppress(Exception):  # a worker that never came (broken, timed out): start without it
            ready.wait(timeout=300)
    if updates is not None:
        pid = os.getpid()

        def forward(phase: str, step: int, total: int, **metrics: Any) -> None:
            if phase == "synthesis" and "in_flight" in metrics:
                updates.put((pid, metrics))

        progress.listen(forward)


def _show_teacher(updates: Any, latest: dict[int, dict[str, Any]]) -> None:
    """The workers' teacher progress since the last look, summed on the synthesis bar."""
    import queue

    got = False
    while True:
        try:
            pid, metrics = updates.get_nowait()
        except queue.Empty:
            break
        latest[pid], got = metrics, True
    if got:
        per_s = round(sum(m.get("answers_per_s") or 0.0 for m in latest.values()), 1)
        in_flight = sum(m.get("in_flight") or 0 for m in latest.values())
        progress.report("synthesis", 0, 1, answers_per_s=per_s, in_flight=in_flight)


def _partitions_parallel(
    cfg: BuildConfig, workers: int, done: Callable[[str], None]
) -> tuple[list[str], dict[str, str]]:
    """Every server's partition as its own Dagster run, ``workers`` at a time, each in its own process. With the
    teacher in use, the workers split its ``max_concurrency`` and report its progress to this process."""
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    runs, failed = [], {}
    # the workers are forked from one process that has imported the definitions (Python's forkserver): with
    # "spawn" each worker imported them again itself (about 2.5 CPU-s a worker); this process may have threads, so
    # it is not forked itself. The forkserver stays for the next parallel build of this process.
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    manager = ctx.Manager() if cfg.query.backend == "llm" and progress.active() else None
    updates = manager.Queue() if manager is not None else None
    latest: dict[int, dict[str, Any]] = {}
    at_once = min(workers, len(cfg.servers))
    pool = ProcessPoolExecutor(
        max_workers=at_once,
        mp_context=ctx,
        initializer=_forwarding_worker_init,
        initargs=(os.getpid(), updates, ctx.Barrier(at_once)),
    )
    try:
        pending = {
            pool.submit(_materialize_partition, s, cfg.model_dump_json(), dict(os.environ), at_once)
            for s in cfg.servers
        }
        while pending:
            timeout = 0.5 if updates is not None else None
            finished, pending = wait(pending, timeout=timeout, return_when=FIRST_COMPLETED)
            if updates is not None:
                _show_teacher(updates, latest)
            for f in finished:
                server, ok, run_id, why = f.result()
                runs.append(run_id)
                if not ok:
                    failed[server] = f"the per-server run failed (Dagster run {run_id}): {why}"
                done(server)
    except BaseException:
        # interrupted (or a worker broke): stop the workers and their servers now rather than wait for them. The
        # pool is told to end first, so a worker whose run the SIGTERM interrupted exits instead of waiting for work.
        pool.shutdown(wait=False, cancel_futures=True)
        stop_descendants()
        raise
    finally:
        if manager is not None:
            with contextlib.suppress(Exception):  # stopped with the workers on an interrupt
                manager.shutdown()
    pool.shutdown(wait=True)
    return runs, failed


def _partitions(
    b: BuildRun, res: dict[str, Any], parallel: int, signalled: Callable[[], bool], tags: dict[str, str]
) -> None:
    """The per-server partitions (probe -> replay), in worker processes or one after another here."""
    servers = b.cfg.servers
    finished: list[str] = []

    def done(server: str) -> None:
        finished.append(server)
        progress.report("synthesis", len(finished), len(servers), done=server)

    progress.report("synthesis", 0, len(servers))
    if parallel > 1 and len(servers) > 1:
        runs, b.unavailable = _partitions_parallel(b.cfg, parallel, done)
        b.runs.extend(runs)
        return
    job = build_jobs(res).resolve_job_def("server_job")
    for server in servers:
        if steps_elsewhere(b.cfg):
            r = distributed.execute(
                "server_job", b.cfg, instance=b.instance, tags=tags, loggers=QUIET, partition=server
            )
        else:
            r = job.execute_in_process(
                partition_key=server, instance=b.instance, run_config=QUIET, tags=tags, raise_on_error=False
            )
        if _interrupted(signalled, r):  # Dagster turned the interrupt into a failed step: stop here all the same
            raise KeyboardInterrupt
        b.runs.append(r.run_id)
        if not r.success:
            b.unavailable[server] = f"the per-server run failed (Dagster run {r.run_id}): {run_error(r)}"
        done(server)


@settled_run()  # the cyclic collector does not walk the libraries' objects between stages
def build(
    cfg: BuildConfig,
    *,
    train: bool = False,
    train_params: dict[str, Any] | None = None,
    parallel: int = 1,
    instance: dg.DagsterInstance | None = None,
    signalled: Callable[[], bool] = lambda: False,
    tags: dict[str, str] | None = None,
) -> BuildRun:
    """Build a corpus version (and the policy when ``train``) through Dagster; see the module's docstring.

    ``instance``: default the one under ``$DAGSTER_HOME`` (:func:`prepare_instance`); tests pass an ephemeral
    one (in-process runs only: ``parallel`` workers need an instance on disk). ``train_params``: the training
    settings (``assets.training.TrainParams`` fields). ``signalled`` says whether the caller's signal handler
    saw an interrupt."""
    if steps_elsewhere(cfg):  # its steps run in other processes: every path they read made absolute here
        # and the storage root, the broker and the workers checked before anything is written (assets.cluster)
        cfg = prepared(distributed.for_workers(cfg))
    if instance is None:
        with relaxed_sync():  # a new home's SQLite files are made with the relaxed commits too
            instance = prepare_instance(cfg)
    # the instance's SQLite commits wait for no fsync while the build runs (an instance on PostgreSQL: as it is)
    with instance_commits(instance):
        return _build(cfg, instance, train, train_params, parallel, signalled, tags)


def _build(
    cfg: BuildConfig,
    instance: dg.DagsterInstance,
    train: bool,
    train_params: dict[str, Any] | None,
    parallel: int,
    signalled: Callable[[], bool],
    tags: dict[str, str] | None,
) -> BuildRun:
    if parallel > 1 and instance.is_ephemeral:
        raise ValueError("a parallel build needs a Dagster instance on disk (DAGSTER_HOME), not an ephemeral one")
    ensure_partitions(instance, cfg.servers)
    tags = {"prove/build": "cli", **(tags or {})}
    before = {v["version"] for v in list_versions(cfg.data_dir)}
    b = BuildRun(cfg=cfg, instance=instance)
    try:
        _partitions(b, resources(build_config=cfg, train=train, train_params=train_params), parallel, signalled, tags)
        kept = [s for s in cfg.servers if s not in b.unavailable]
        if not kept:
            return b
        if b.unavailable:
            b.cfg = cfg.model_copy(update={"servers": kept, "unavailable_servers": b.unavailable})
        r = corpus_run(b, train, train_params, tags)
        if _interrupted(signalled, r):
            raise KeyboardInterrupt
        b.runs.append(r.run_id)
        b.result = r
        return b
    except KeyboardInterrupt:
        mark_interrupted(cfg, before)
        raise
    finally:
        HANDOFF.clear()  # outputs no reader of this build took


def corpus_run(
    b: BuildRun, train: bool = False, train_params: dict[str, Any] | None = None, tags: dict[str, str] | None = None
) -> Any:
    """The cross-server run (dedup -> corpus, and the policy when ``train``) over the stored outputs of the servers
    the build kept (``b.cfg.servers``): the build's last run. A listed server without a stored output fails it."""
    cross = CROSS if train else [a for a in CROSS if a not in (grpo_policy, policy_eval)]
    keys, tags = [a.key for a in cross], {"prove/build": "cli", **(tags or {})}
    if steps_elsewhere(b.cfg):
        return distributed.execute(
            "corpus_job", b.cfg, instance=b.instance, tags=tags, loggers=QUIET,
            train=train, train_params=train_params, asset_selection=keys,
        )  # fmt: skip
    job = build_jobs(resources(build_config=b.cfg, train=train, train_params=train_params))
    return job.resolve_job_def("corpus_job").execute_in_process(
        asset_selection=keys, instance=b.instance, tags=tags, raise_on_error=False, run_config=QUIET
    )


def mark_interrupted(cfg: BuildConfig, before: set[str]) -> None:
    """A version this build wrote but did not finish checking is marked failed (never the default)."""
    for v in list_versions(cfg.data_dir):
        if v["version"] not in before and not set(CHECKED_GATES) <= set(gate_results(v["path"])):
            record_gate(
                v["path"],
                "build_interrupted",
                False,
                {"why": "the build was interrupted before its quality gates finished"},
            )
    refresh_latest(cfg.data_dir)
