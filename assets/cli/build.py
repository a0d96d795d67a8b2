"""``prove build``: materialize the per-server assets, then dedup -> corpus (-> policy), through Dagster."""

from __future__ import annotations

import argparse
import os
import signal
import time
from pathlib import Path
from typing import Any

from assets.cli.common import positive_int
from pipeline.core.errors import validation_problems


def build_config(a: argparse.Namespace):
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.core.build_file import BuildFileError, load_build_config

    servers = [s.strip() for s in a.servers.split(",") if s.strip()] if a.servers else None
    try:
        return load_build_config(
            a.config, examples=a.examples, servers_file=a.servers_file, servers=servers, data_dir=a.data_dir
        )
    except BuildFileError as exc:
        raise SystemExit(f"prove: {exc}") from exc


def train_params(a: argparse.Namespace) -> dict[str, Any]:
    """The training settings the flags give (``assets.training.TrainParams`` fields): ``--train-config`` as the
    file the asset reads (per-model defaults, as ``prove train --config``), ``--grpo-steps`` over it."""
    params: dict[str, Any] = {"grpo_steps": a.grpo_steps} if a.grpo_steps else {}
    if a.train_config:
        params["config_file"] = str(Path(a.train_config).resolve())
    return params


def check_train_params(params: dict[str, Any]) -> None:
    """Refuse bad training settings before the build starts, naming the file and the field."""
    from pydantic import ValidationError

    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from assets.training import training_settings

    try:
        training_settings(True, params).train_config()
    except ValidationError as exc:
        raise SystemExit(
            "prove: invalid training configuration:\n" + "\n".join(f"  {line}" for line in validation_problems(exc))
        ) from exc
    except ValueError as exc:
        raise SystemExit(f"prove: invalid training configuration: {exc}") from exc


def check_root(root: Path) -> None:
    """The storage root of a build on a cluster checked (``pipeline.core.storage.check_storage_root``), as one line."""
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.core.storage import StorageRootError, check_storage_root

    try:
        check_storage_root(root)
    except StorageRootError as exc:
        raise SystemExit(f"prove: {exc}") from exc


def cluster_faults() -> tuple[type[Exception], ...]:
    """The errors of a build on a cluster whose broker, workers, instance database or storage root failed."""
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from assets.cluster import ClusterUnavailable, InstanceUnavailable
    from pipeline.core.storage import StorageRootError

    return (ClusterUnavailable, InstanceUnavailable, StorageRootError)


def cmd_build(a: argparse.Namespace) -> int:
    import datetime as dt

    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from assets import progress
    from assets.cli.console import Console
    from assets.cli.interrupt import Interrupts, stop_descendants
    from servers.registry import available

    cfg = build_config(a)
    if not a.no_train:
        check_train_params(train_params(a))
    unknown = [s for s in cfg.servers if s not in available() and not any(c.name == s for c in cfg.server_configs)]
    if unknown:
        raise SystemExit(f"prove: unknown server(s) {unknown}; built-in servers: {', '.join(available())}")
    if a.estimate:
        print("\n".join(estimate_lines(cfg)))
        return 0
    if cfg.deployment.executor == "celery":  # before the build's log is made under it: a cluster's root is never made
        check_root(cfg.data_path)
    log_path = cfg.data_path / "logs" / f"build-{dt.datetime.now(dt.UTC):%Y%m%d-%H%M%S}.log"
    with Console(log_path, verbose=a.verbose) as con, Interrupts() as intr, progress.listening(con.progress):
        try:
            return _build(a, cfg, intr, con)
        except cluster_faults() as exc:  # a part of the cluster gone: the message names it (docs/scale-out.md)
            con.close_bars()
            con.note(f"prove: {exc}")
            return 1
        except KeyboardInterrupt:
            con.close_bars()
            stopped = stop_descendants()  # the build marked what it wrote but did not check as failed
            how = f" ({signal.Signals(intr.signum).name})" if intr.signum else ""
            con.note(
                f"prove: interrupted{how}; stopped {stopped} worker and server "
                "process(es); no new version is the default"
            )
            return intr.exit_code


def _build(a: argparse.Namespace, cfg: Any, intr: Any, con: Any) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from assets import orchestrate
    from assets.cli.build_report import summary

    t0 = time.time()
    b = orchestrate.build(
        cfg,
        train=not a.no_train,
        train_params=train_params(a),
        parallel=a.parallel,
        signalled=lambda: intr.signum is not None,
    )
    for server, why in b.unavailable.items():
        con.note(f"prove: {server} is left out: {why}")
    if b.result is None:
        con.note("prove: every server failed; no corpus written")
        return 1
    con.close_bars()
    for line in summary(
        b.cfg, b.result, b.runs, t0, train=not a.no_train, log_path=None if a.verbose else con.log_path
    ):
        con.print(line)
    if not b.success:
        why = b.error()
        con.note(
            "prove: the corpus run did not finish ("
            + ("a quality gate failed" if why == "unknown error" else f"a stage failed: {why}")
            + "); see the Dagster UI"
            + ("" if a.verbose else f" and {con.log_path}")
        )
        return 1
    return 0


def estimate_lines(cfg: Any) -> list[str]:
    """``prove build --estimate``: the teacher completions and tokens the build would ask for, sending none."""
    # deferred: the pipeline and the servers' catalogue load only when a command that needs them runs
    from pipeline.stages.base import cache_dir
    from pipeline.stages.plan import TOKENS_PER_REQUEST, teacher_estimate
    from servers.registry import CATALOGUE

    tools = {e.name: e.tools for e in CATALOGUE}
    cache = cache_dir(cfg.query.cache_dir, cfg.data_path, "llm")
    cached = sum(1 for _ in cache.glob("*.json")) if cache.is_dir() else 0
    est = teacher_estimate(cfg, {s: tools.get(s) for s in cfg.servers}, cached)
    c = est["completions"]
    who = (
        f"the teacher {cfg.query.llm_model} at {cfg.query.llm_base_url}"
        if cfg.query.backend == "llm"
        else "no teacher: query.backend is template (the offline writer); with backend llm it would be"
    )
    lines = [
        f"estimate for {cfg.examples} examples over {len(cfg.servers)} servers ({who}):",
        f"  user turns  ~{c['user_turns']:,} completions (one per planned request, "
        f"~{TOKENS_PER_REQUEST['user_turns'][0]} prompt tokens each)",
        f"  replies     ~{c['reply']:,} completions (one per turn)",
        f"  tool pairs  ~{c['tool_pair']:,} completions" + (" (graph.llm)" if cfg.graph.llm else " (graph.llm is off)"),
        f"  total       ~{est['total_completions']:,} completions, ~{est['prompt_tokens']:,} prompt + "
        f"~{est['completion_tokens']:,} completion tokens (upper bounds: requests rejected at their dry run are "
        "never sent)",
        f"  cached      {est['cached_answers']:,} answers in {cache} (not sent again)",
    ]
    if est["servers_without_tool_count"]:
        lines.append(f"  tool pairs of {', '.join(est['servers_without_tool_count'])} not counted (tools unknown)")
    n, k = est["total_completions"], est["max_concurrency"]
    lo, hi = n / k, 3 * n / k
    span = f"{lo:.0f}-{hi:.0f} s" if hi < 120 else f"{lo / 60:.0f}-{hi / 60:.0f} min"
    lines.append(f"  at {k} in flight and 1-3 s a completion: about {span} of teacher time")
    return lines


def register(sub: Any) -> None:
    x = sub.add_parser("build", help="materialize the corpus (and the policy) through Dagster")
    x.add_argument("--examples", type=positive_int, help="how many examples to write (at least 1)")
    x.add_argument("--servers")
    x.add_argument("--config", help="YAML file with a BuildConfig")
    x.add_argument("--servers-file", help="YAML/TOML file registering servers (built-in, stdio, http)")
    x.add_argument(
        "--data-dir",
        default=None,
        help="where corpus versions, caches and the Dagster instance go "
        "(default: the config file's data_dir, else data)",
    )
    x.add_argument("--no-train", action="store_true")
    x.add_argument(
        "--estimate",
        action="store_true",
        help="print how many teacher completions and roughly how many tokens the build needs, then stop (sends none)",
    )
    x.add_argument("--grpo-steps", type=positive_int)
    x.add_argument("--train-config", help="train.yaml for the grpo_policy asset (as prove train --config)")
    x.add_argument(
        "--verbose",
        action="store_true",
        help="show every library's output (warnings, trainer logs, Dagster logs) instead of capturing it in "
        "<data dir>/logs/build-<time>.log",
    )
    x.add_argument(
        "--parallel",
        type=positive_int,
        default=min(2, os.cpu_count() or 1),
        metavar="N",
        help="run N servers' partitions at once, each its own Dagster run in its own worker process "
        "(default: 2 where there are 2 or more cores; 1 runs them one after another in this process)",
    )
    x.set_defaults(fn=cmd_build)
