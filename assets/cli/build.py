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


def _run_partitions_parallel(cfg: Any, workers: int, bar: Any) -> tuple[list[str], list[tuple[str, str]]]:
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
            bar.set_postfix_str(f"{server} done")
            bar.update(1)
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
            return ev.step_failure_data.error.message.strip().splitlines()[-1][:300]
    return "unknown error"


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


def _run_per_server(a: argparse.Namespace, cfg: Any, instance: Any, res: Any, bar: Any, intr: Any) -> tuple[list[str], dict[str, str]]:
    """The per-server partitions (probe -> replay), in worker processes or one after another here."""
    import dagster as dg

    from assets import definitions as D

    unavailable: dict[str, str] = {}
    if a.parallel > 1 and len(cfg.servers) > 1:
        bar.set_postfix_str(f"{len(cfg.servers)} servers, {a.parallel} at a time: probe → replay")
        runs, failed = _run_partitions_parallel(cfg, a.parallel, bar)
        for server, run_id in failed:
            unavailable[server] = f"the per-server run failed (Dagster run {run_id})"
        return runs, unavailable
    runs = []
    for server in cfg.servers:
        bar.set_postfix_str(f"{server}: probe → replay")
        r = dg.materialize(D.ALL_ASSETS, selection=D.PER_SERVER, partition_key=server, instance=instance, resources=res, run_config=QUIET,
                           tags={"prove/build": "cli"}, raise_on_error=False)
        if intr.signum is not None:  # Dagster turned the interrupt into a failed step: stop here all the same
            raise KeyboardInterrupt
        runs.append(r.run_id)
        if not r.success:
            unavailable[server] = f"the per-server run failed (Dagster run {r.run_id}): {_run_error(r)}"
        bar.update(1)
    return runs, unavailable


def _report(a: argparse.Namespace, cfg: Any, r: Any, runs: list[str], t0: float) -> None:
    """What the build made: the latest version's summary, the gates, the policy's paths, the Dagster runs."""
    from pipeline.corpus import latest_good, list_versions
    from pipeline.report import show_text

    versions = list_versions(cfg.data_dir)
    latest = versions[-1] if versions else None
    checks = {ev.check_name: ev.passed for ev in r.get_asset_check_evaluations()}
    if latest:
        m = json.loads((Path(latest["path"]) / "manifest.json").read_text())
        print(show_text(m))
        print(f"\ncorpus:  {latest['path']}")
    if checks:
        print("quality gates: " + ", ".join(f"{k}={'pass' if v else 'FAIL'}" for k, v in checks.items()))
    if latest and latest["status"] == "failed":
        good = latest_good(cfg.data_dir)
        print(f"prove: version {latest['version']} failed its quality gates ({', '.join(latest['failed_gates'])}); it is kept, "
              f"marked failed, and is not the default: {'the default stays ' + good['version'] if good else 'no good version yet'}",
              file=sys.stderr)
    if not a.no_train:
        run_dir = Path(cfg.data_dir) / "runs" / (latest["version"] if latest else "")
        if (run_dir / "metrics.jsonl").exists():
            print(f"policy:  {run_dir}/checkpoint  metrics: {run_dir}/metrics.jsonl  curve: {run_dir}/reward_curve.png")
    print(f"dagster: {len(runs)} runs recorded in {os.environ['DAGSTER_HOME']} — open the UI with: "
          f"DAGSTER_HOME={os.environ['DAGSTER_HOME']} .venv/bin/dagster dev -m assets.definitions")
    print(f"took {time.time() - t0:.1f}s")


def cmd_build(a: argparse.Namespace) -> int:
    from assets.cli.interrupt import Interrupts, stop_descendants
    from pipeline.corpus import list_versions
    from servers.registry import available

    cfg = build_config(a)
    unknown = [s for s in cfg.servers if s not in available() and not any(c.name == s for c in cfg.server_configs)]
    if unknown:
        raise SystemExit(f"prove: unknown server(s) {unknown}; built-in servers: {', '.join(available())}")
    before = {v["version"] for v in list_versions(cfg.data_dir)}
    with Interrupts() as intr:
        try:
            return _build(a, cfg, intr)
        except KeyboardInterrupt:
            stopped = stop_descendants()
            _mark_interrupted(cfg, before)
            print(f"\nprove: interrupted ({signal.Signals(intr.signum or signal.SIGINT).name}); stopped {stopped} worker and server "
                  "process(es); no new version is the default", file=sys.stderr)
            return intr.exit_code


def _mark_interrupted(cfg: Any, before: set[str]) -> None:
    """A version this build wrote but did not finish checking is marked failed (never the default)."""
    from pipeline.corpus import CHECKED_GATES, gate_results, list_versions, record_gate, refresh_latest

    for v in list_versions(cfg.data_dir):
        if v["version"] not in before and not set(CHECKED_GATES) <= set(gate_results(v["path"])):
            record_gate(v["path"], "build_interrupted", False, {"why": "the build was interrupted before its quality gates finished"})
    refresh_latest(cfg.data_dir)


def _build(a: argparse.Namespace, cfg: Any, intr: Any) -> int:
    import dagster as dg
    from tqdm import tqdm

    from assets import definitions as D

    instance = _prepare_instance(cfg)
    D.ensure_partitions(instance, cfg.servers)
    train_json = json.dumps({"grpo_steps": a.grpo_steps} if a.grpo_steps else {})
    res = D.resources(build_config=cfg, train=not a.no_train, train_config_json=train_json)
    t0 = time.time()
    bar = tqdm(total=len(cfg.servers) + 1, desc="prove build", unit="stage-run")
    runs, unavailable = _run_per_server(a, cfg, instance, res, bar, intr)
    if unavailable:
        for server, why in unavailable.items():
            tqdm.write(f"prove: {server} is left out: {why}", file=sys.stderr)
        kept = [s for s in cfg.servers if s not in unavailable]
        if not kept:
            bar.close()
            print("prove: every server failed; no corpus written", file=sys.stderr)
            return 1
        cfg = cfg.model_copy(update={"servers": kept, "unavailable_servers": unavailable})
        res = D.resources(build_config=cfg, train=not a.no_train, train_config_json=train_json)
    bar.set_postfix_str("dedup → corpus" + ("" if a.no_train else " → grpo"))
    cross = D.CROSS if not a.no_train else [x for x in D.CROSS if x is not D.grpo_policy]
    r = dg.materialize(D.ALL_ASSETS + D.CHECKS, selection=dg.AssetSelection.assets(*cross) | dg.AssetSelection.checks(*D.CHECKS),
                       instance=instance, resources=res, tags={"prove/build": "cli"}, raise_on_error=False, run_config=QUIET)
    if intr.signum is not None:  # Dagster turned the interrupt into a failed step: stop here all the same
        raise KeyboardInterrupt
    runs.append(r.run_id)
    bar.update(1)
    bar.close()
    _report(a, cfg, r, runs, t0)
    if not r.success:
        print("prove: the corpus run did not finish (a quality gate or a stage failed); see the Dagster UI", file=sys.stderr)
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
    x.add_argument("--parallel", type=positive_int, default=min(2, os.cpu_count() or 1), metavar="N",
                   help="run N servers' partitions at once, each its own Dagster run in its own worker process "
                        "(default: 2 where there are 2 or more cores; 1 runs them one after another in this process)")
    x.set_defaults(fn=cmd_build)
