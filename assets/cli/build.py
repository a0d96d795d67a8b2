"""``prove build``: materialize the per-server assets, then dedup -> corpus (-> policy), through Dagster."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from assets.cli.common import positive_int
from pipeline.errors import validation_problems, yaml_problem

QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def build_config(a: argparse.Namespace):
    from pipeline.config import BuildConfig

    base: dict[str, Any] = {}
    if a.config:
        import yaml

        p = Path(a.config)
        try:
            base = yaml.safe_load(p.read_text()) or {}
        except OSError as exc:
            raise SystemExit(f"prove: cannot read config {p}: {exc.strerror}")
        except yaml.YAMLError as exc:
            raise SystemExit(f"prove: config {p} is not valid YAML: {yaml_problem(exc)}")
        if not isinstance(base, dict):
            raise SystemExit(f"prove: config {p} must be a mapping at the top level")
    if a.examples is not None:
        base["examples"] = a.examples
    if a.servers_file:
        from pipeline.serverfile import ConfigFileError, load_servers_file

        try:
            extra = load_servers_file(a.servers_file)
        except ConfigFileError as exc:
            raise SystemExit(f"prove: {exc}")
        base["server_configs"] = [c.model_dump(mode="json") for c in extra] + list(base.get("server_configs", []))
        if not a.servers:
            base["servers"] = [c.name for c in extra]
    if a.servers:
        base["servers"] = [s.strip() for s in a.servers.split(",") if s.strip()]
    if a.data_dir is not None:  # the flag wins over the file; without either, the default "data"
        base["data_dir"] = a.data_dir
    from pydantic import ValidationError

    try:
        return BuildConfig.model_validate(base)
    except ValidationError as exc:
        where = f" in {a.config}" if a.config else ""
        raise SystemExit(f"prove: invalid build configuration{where}:\n" + "\n".join(f"  {line}" for line in validation_problems(exc)))


def _materialize_partition(server: str, build_config_json: str, dagster_home: str) -> tuple[str, bool, str]:
    """One server's partition of the per-server assets, in a worker process of ``prove build --parallel``."""
    os.environ["DAGSTER_HOME"] = dagster_home
    import dagster as dg

    from assets import definitions as D
    from pipeline.config import BuildConfig

    cfg = BuildConfig.model_validate_json(build_config_json)
    instance = dg.DagsterInstance.get()
    r = dg.materialize(D.ALL_ASSETS, selection=D.PER_SERVER, partition_key=server, instance=instance,
                       resources=D.resources(build_config=cfg, train=False), run_config=QUIET,
                       tags={"prove/build": "cli", "prove/parallel": "true"}, raise_on_error=False)
    return server, r.success, r.run_id


def _run_partitions_parallel(cfg: Any, workers: int, done: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """Every server's partition as its own Dagster run, ``workers`` at a time, each in its own process."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from assets.cli.interrupt import stop_descendants, worker_init

    runs, failed = [], []
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"), initializer=worker_init)
    try:
        futures = [pool.submit(_materialize_partition, s, cfg.model_dump_json(), os.environ["DAGSTER_HOME"]) for s in cfg.servers]
        for f in as_completed(futures):
            server, ok, run_id = f.result()
            runs.append(run_id)
            if not ok:
                failed.append((server, run_id))
            done(server)
    except BaseException:
        # interrupted (or a worker broke): stop the workers and their servers now rather than wait for them
        stop_descendants()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return runs, failed


def _run_error(result) -> str:
    """The first step failure of a Dagster run result, in one line."""
    for ev in result.all_events:
        if ev.is_step_failure and ev.step_failure_data and ev.step_failure_data.error:
            err = ev.step_failure_data.error
            while err.cause is not None:  # the user code's own exception, not Dagster's wrapper
                err = err.cause
            return f"{ev.step_key}: " + err.message.strip().splitlines()[-1][:300]
    return "unknown error"


def _interrupted(intr: Any, result: Any) -> bool:
    """Whether a signal arrived: ours saw it, or Dagster (whose handlers take SIGINT and SIGTERM over while a
    run executes in this process) turned it into an interrupted step."""
    if intr.signum is not None:
        return True
    for ev in result.all_events:
        err = ev.step_failure_data.error if ev.is_step_failure and ev.step_failure_data else None
        while err is not None:
            if err.cls_name in ("DagsterExecutionInterruptedError", "KeyboardInterrupt"):
                return True
            err = err.cause
    return False


def _prepare_instance(cfg: Any):
    """The Dagster instance under ``$DAGSTER_HOME`` (default: the data dir's ``dagster_home``), with our dagster.yaml."""
    import dagster as dg

    os.environ.setdefault("DAGSTER_HOME", str(Path(cfg.data_dir).resolve() / "dagster_home"))
    home = Path(os.environ["DAGSTER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    yaml_src = Path(__file__).resolve().parents[2] / "dagster.yaml"
    if yaml_src.exists() and not (home / "dagster.yaml").exists():
        (home / "dagster.yaml").write_text(yaml_src.read_text())
    return dg.DagsterInstance.get()


def _run_per_server(a: argparse.Namespace, cfg: Any, instance: Any, res: Any, con: Any, intr: Any) -> tuple[list[str], dict[str, str]]:
    """The per-server partitions (probe -> replay), in worker processes or one after another here."""
    import dagster as dg

    from assets import definitions as D

    finished: list[str] = []

    def done(server: str) -> None:
        finished.append(server)
        con.progress("synthesis", len(finished), len(cfg.servers), done=server)

    con.progress("synthesis", 0, len(cfg.servers))
    unavailable: dict[str, str] = {}
    if a.parallel > 1 and len(cfg.servers) > 1:
        runs, failed = _run_partitions_parallel(cfg, a.parallel, done)
        for server, run_id in failed:
            unavailable[server] = f"the per-server run failed (Dagster run {run_id})"
        return runs, unavailable
    runs = []
    for server in cfg.servers:
        r = dg.materialize(D.ALL_ASSETS, selection=D.PER_SERVER, partition_key=server, instance=instance, resources=res, run_config=QUIET,
                           tags={"prove/build": "cli"}, raise_on_error=False)
        if _interrupted(intr, r):  # Dagster turned the interrupt into a failed step: stop here all the same
            raise KeyboardInterrupt
        runs.append(r.run_id)
        if not r.success:
            unavailable[server] = f"the per-server run failed (Dagster run {r.run_id}): {_run_error(r)}"
        done(server)
    return runs, unavailable


def cmd_build(a: argparse.Namespace) -> int:
    import datetime as dt

    from assets import progress
    from assets.cli.console import Console
    from assets.cli.interrupt import Interrupts, stop_descendants
    from pipeline.corpus import list_versions
    from servers.registry import available

    cfg = build_config(a)
    unknown = [s for s in cfg.servers if s not in available() and not any(c.name == s for c in cfg.server_configs)]
    if unknown:
        raise SystemExit(f"prove: unknown server(s) {unknown}; built-in servers: {', '.join(available())}")
    before = {v["version"] for v in list_versions(cfg.data_dir)}
    log_path = cfg.data_path / "logs" / f"build-{dt.datetime.now(dt.timezone.utc):%Y%m%d-%H%M%S}.log"
    with Console(log_path, verbose=a.verbose) as con, Interrupts() as intr, progress.listening(con.progress):
        try:
            return _build(a, cfg, intr, con)
        except KeyboardInterrupt:
            con.close_bars()
            stopped = stop_descendants()
            _mark_interrupted(cfg, before)
            how = f" ({signal.Signals(intr.signum).name})" if intr.signum else ""
            con.note(f"prove: interrupted{how}; stopped {stopped} worker and server "
                     "process(es); no new version is the default")
            return intr.exit_code


def _mark_interrupted(cfg: Any, before: set[str]) -> None:
    """A version this build wrote but did not finish checking is marked failed (never the default)."""
    from pipeline.corpus import CHECKED_GATES, gate_results, list_versions, record_gate, refresh_latest

    for v in list_versions(cfg.data_dir):
        if v["version"] not in before and not set(CHECKED_GATES) <= set(gate_results(v["path"])):
            record_gate(v["path"], "build_interrupted", False, {"why": "the build was interrupted before its quality gates finished"})
    refresh_latest(cfg.data_dir)


def _build(a: argparse.Namespace, cfg: Any, intr: Any, con: Any) -> int:
    import dagster as dg

    from assets import definitions as D
    from assets.cli.build_report import summary

    instance = _prepare_instance(cfg)
    D.ensure_partitions(instance, cfg.servers)
    train_json = json.dumps({"grpo_steps": a.grpo_steps} if a.grpo_steps else {})
    if a.train_config:  # the asset reads the file itself (per-model defaults, as prove train --config)
        train_json = json.dumps({"config_file": str(Path(a.train_config).resolve()), **json.loads(train_json)})
    res = D.resources(build_config=cfg, train=not a.no_train, train_config_json=train_json)
    t0 = time.time()
    runs, unavailable = _run_per_server(a, cfg, instance, res, con, intr)
    if unavailable:
        for server, why in unavailable.items():
            con.note(f"prove: {server} is left out: {why}")
        kept = [s for s in cfg.servers if s not in unavailable]
        if not kept:
            con.note("prove: every server failed; no corpus written")
            return 1
        cfg = cfg.model_copy(update={"servers": kept, "unavailable_servers": unavailable})
        res = D.resources(build_config=cfg, train=not a.no_train, train_config_json=train_json)
    cross = D.CROSS if not a.no_train else [x for x in D.CROSS if x is not D.grpo_policy]
    r = dg.materialize(D.ALL_ASSETS + D.CHECKS, selection=dg.AssetSelection.assets(*cross) | dg.AssetSelection.checks(*D.CHECKS),
                       instance=instance, resources=res, tags={"prove/build": "cli"}, raise_on_error=False, run_config=QUIET)
    if _interrupted(intr, r):  # Dagster turned the interrupt into a failed step: stop here all the same
        raise KeyboardInterrupt
    runs.append(r.run_id)
    con.close_bars()
    for line in summary(cfg, r, runs, t0, train=not a.no_train, log_path=None if a.verbose else con.log_path):
        con.print(line)
    if not r.success:
        why = _run_error(r)
        con.note("prove: the corpus run did not finish (" + ("a quality gate failed" if why == "unknown error" else f"a stage failed: {why}")
                 + "); see the Dagster UI" + ("" if a.verbose else f" and {con.log_path}"))
        return 1
    return 0


def register(sub: Any) -> None:
    x = sub.add_parser("build", help="materialize the corpus (and the policy) through Dagster")
    x.add_argument("--examples", type=positive_int, help="how many examples to write (at least 1)")
    x.add_argument("--servers")
    x.add_argument("--config", help="YAML file with a BuildConfig")
    x.add_argument("--servers-file", help="YAML/TOML file registering servers (built-in, stdio, http)")
    x.add_argument("--data-dir", default=None, help="where corpus versions, caches and the Dagster instance go "
                   "(default: the config file's data_dir, else data)")
    x.add_argument("--no-train", action="store_true")
    x.add_argument("--grpo-steps", type=positive_int)
    x.add_argument("--train-config", help="train.yaml for the grpo_policy asset (as prove train --config)")
    x.add_argument("--verbose", action="store_true",
                   help="show every library's output (warnings, trainer logs, Dagster logs) instead of capturing it in "
                        "<data dir>/logs/build-<time>.log")
    x.add_argument("--parallel", type=positive_int, default=min(2, os.cpu_count() or 1), metavar="N",
                   help="run N servers' partitions at once, each its own Dagster run in its own worker process "
                        "(default: 2 where there are 2 or more cores; 1 runs them one after another in this process)")
    x.set_defaults(fn=cmd_build)
