"""Corpus build throughput end to end and per stage, and where the time goes. Prints JSON.

Runs the build ``prove build`` runs (``assets.orchestrate.build``: the Dagster assets, each server's
partition as its own run, then the cross-server run with its quality gates; in this process, one run
after another, on a Dagster instance in a temporary ``DAGSTER_HOME``) on a fresh temporary data
directory (so the dependency graphs are discovered, not read from a cache) over every built-in
server, with the optional timing hooks turned on:

* ``bench.clocks.HandlerClock``: time inside the tool handlers (the world's work, admin tools included);
* ``bench.clocks.ServerClock``: the servers' whole handling of each ``tools/call`` (mcp's middleware,
  lookup, argument validation, the handler, result serialization);
* ``bench.clocks.CallClock``: the client-side wall time of every ``tools/call`` round trip
  (the server's part + the mcp client's request building and result validation).

So build time splits into handlers, ``mcp_server_side_share``, ``mcp_client_side_share`` and
``pipeline_code_share`` (the pipeline's own code, between calls). ``ServerClock`` starts at the
server's outermost middleware, so mcp's per-request set-up in the server runner before it (about a
third of an in-process call: ``bench/call_cost.py``) falls in the client-side share. ``stage_split``
gives the same split for every stage, with the stage's tool calls and its own overhead share.

Each stage is timed around its ``pipeline.stages`` function as the asset calls it (the bench wraps the
functions the asset modules call; nothing in the project times itself), so ``dagster_seconds`` is the
rest of the build: run and step set-up, the event log, the stage store's pickles, the rejections asset
and the quality gates.

``pipeline_overhead_share`` is the share of build time *not* spent inside tool handlers (target
< 0.5). The baseline measured in the same run is the handler time itself (the build's lower bound
if the pipeline cost nothing): ``ratio_total_vs_handlers`` = build time / handler time.

Garbage-collection pauses are timed too (``gc.callbacks``), with the part that fell inside a
handler: a handler's allocations can set off a full collection that walks the pipeline's records,
so ``pipeline_overhead_share_gc_as_pipeline`` counts those pauses as overhead as well (the stricter
figure).

    PYTHONPATH=. .venv/bin/python bench/build_throughput.py [--examples 1000] [--servers a,b] [--profile FILE]
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assets import corpus as corpus_assets  # noqa: E402
from assets import orchestrate  # noqa: E402
from assets import synthesis as synthesis_assets  # noqa: E402
from bench.clocks import CallClock, HandlerClock, ServerClock, install_server_clocks  # noqa: E402
from pipeline.core.config import BuildConfig  # noqa: E402
from pipeline.stages.base import Timer  # noqa: E402
from pipeline.stages.registry import STAGES as REGISTRY  # noqa: E402

TARGET_OVERHEAD_SHARE = 0.5


def machine() -> dict[str, Any]:
    mem = None
    try:
        mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError):
        pass
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "memory_gib": mem,
        "platform": platform.platform(),
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }


class GCPauses:
    """Wall time of the cyclic collector's pauses, and the part of it that fell inside a tool handler
    (``HandlerClock.running``: a handler's timed block was entered and not yet left; an O(1) check, so
    the bookkeeping adds next to nothing to the handler time it runs in)."""

    def __init__(self) -> None:
        self.seconds = self.in_handlers = 0.0
        self.collections = [0, 0, 0]
        self._t0 = 0.0
        self._inside = False

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._inside = HandlerClock.running > 0
            self._t0 = time.perf_counter()
            return
        dt = time.perf_counter() - self._t0
        self.seconds += dt
        self.collections[info["generation"]] += 1
        if self._inside:
            self.in_handlers += dt


# The stages come from the registry (pipeline.stages.registry): a per-server stage is timed around its asset's
# run_stage call, a cross-server one around the pipeline.stages function its asset in assets/corpus.py calls.
CROSS_SERVER_CALLS = {"dedup": "stage_dedup", "augment": "stage_augment", "corpus": "stage_corpus"}


def stage_names() -> list[str]:
    """Every registered stage's name, in build order (what the per-stage table lists)."""
    missing = [s.name for s in REGISTRY.cross_server() if s.name not in CROSS_SERVER_CALLS]
    if missing:
        raise RuntimeError(
            f"bench/build_throughput.py does not know which function the asset of stage(s) {missing} calls"
        )
    return REGISTRY.names()


@contextmanager
def timed_stages(timer: Timer) -> Iterator[None]:
    """Every registered stage, as its asset runs it, wrapped in ``timer`` (keyed by stage name) for the block."""
    stage_names()
    run_stage = synthesis_assets.run_stage

    def timed_run(stage: Any, *args: Any, **kwargs: Any) -> Any:
        with timer(str(stage.name)):
            return run_stage(stage, *args, **kwargs)

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            with timer(name):
                return fn(*args, **kwargs)

        return timed

    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(synthesis_assets, "run_stage", timed_run))
        for stage in REGISTRY.cross_server():
            fn_name = CROSS_SERVER_CALLS[stage.name]
            stack.enter_context(
                mock.patch.object(corpus_assets, fn_name, wrap(str(stage.name), getattr(corpus_assets, fn_name)))
            )
        yield


def build_through_dagster(cfg: BuildConfig, home: Path) -> tuple[Path, dict[str, bool]]:
    """The corpus version ``prove build --parallel 1 --no-train`` would write, on a Dagster instance under ``home``,
    and its quality gates' results (a failed gate is reported, not fatal: the version is written all the same)."""
    with mock.patch.dict(os.environ, {"DAGSTER_HOME": str(home)}):
        b = orchestrate.build(
            cfg, parallel=1, instance=orchestrate.prepare_instance(cfg), tags={"prove/build": "bench"}
        )
    if b.corpus_path is None:
        raise RuntimeError(f"the build wrote no corpus: {b.error()}")
    return b.corpus_path, {e.check_name: e.passed for e in b.result.get_asset_check_evaluations()}


def stage_split(timer: Timer) -> dict[str, dict[str, float]]:
    """Each stage's seconds split as the whole build's are (handlers, mcp server side, mcp client side,
    pipeline code), its tool calls, and its own overhead share (time outside handlers)."""
    out: dict[str, dict[str, float]] = {}
    for stage, secs in timer.times.items():
        m = timer.metered.get(stage, {})
        h, srv, rt = m.get("handler", 0.0), m.get("server", 0.0), m.get("roundtrip", 0.0)
        out[stage] = {
            "seconds": round(secs, 2),
            "tool_calls": int(m.get("calls", 0)),
            "handlers": round(h, 2),
            "mcp_server_side": round(srv - h, 2),
            "mcp_client_side": round(rt - srv, 2),
            "pipeline_code": round(secs - rt, 2),
            "gc_pauses": round(m.get("gc", 0.0), 2),
            "overhead_share": round(1 - h / secs, 3) if secs else 0.0,
        }
    return out


def run(examples: int, servers: list[str] | None = None, seed: int = 7, profile: str | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="prove-bench-build-") as d:
        kw: dict[str, Any] = {"examples": examples, "data_dir": d, "seed": seed}
        if servers:
            kw["servers"] = servers
        cfg = BuildConfig(**kw)
        install_server_clocks()
        HandlerClock.reset()
        CallClock.reset()
        ServerClock.reset()
        HandlerClock.enabled = CallClock.enabled = ServerClock.enabled = True
        pauses = GCPauses()
        gc.callbacks.append(pauses)
        prof = None
        if profile:
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
        timer = Timer(
            meters={
                "handler": lambda: HandlerClock.seconds,
                "server": lambda: ServerClock.seconds,
                "roundtrip": lambda: CallClock.seconds,
                "calls": lambda: CallClock.calls,
                "gc": lambda: pauses.seconds,
            }
        )
        t0 = time.perf_counter()
        try:
            with timed_stages(timer):
                path, gates = build_through_dagster(cfg, Path(d) / "dagster_home")
        finally:
            total = time.perf_counter() - t0
            if prof is not None:
                prof.disable()
                prof.dump_stats(profile)
            HandlerClock.enabled = CallClock.enabled = ServerClock.enabled = False
            gc.callbacks.remove(pauses)
        manifest = json.loads((path / "manifest.json").read_text())
    stages = {k: round(v, 3) for k, v in timer.times.items()}
    n = manifest["counts"]["examples"]
    handler_s, call_s = HandlerClock.seconds, CallClock.seconds
    overhead_share = 1 - handler_s / total
    return {
        "examples_requested": examples,
        "examples_written": n,
        "content_hash": manifest["content_hash"],
        "quality_gates": gates,
        "servers": len(cfg.servers),
        "total_seconds": round(total, 2),
        "examples_per_s": round(n / total, 2),
        "stage_seconds": stages,
        "stage_share": {k: round(v / total, 3) for k, v in timer.times.items()},
        "dagster_seconds": round(total - sum(timer.times.values()), 2),
        "dagster_share": round(1 - sum(timer.times.values()) / total, 3),
        "stage_split": stage_split(timer),
        "tool_calls": CallClock.calls,
        "handler_calls": HandlerClock.calls,
        "handler_seconds": round(handler_s, 2),
        "tool_call_roundtrip_seconds": round(call_s, 2),
        "handler_share": round(handler_s / total, 3),
        "tool_call_roundtrip_share": round(call_s / total, 3),
        "mcp_framing_share": round((call_s - handler_s) / total, 3),
        "server_side_seconds": round(ServerClock.seconds, 2),
        "mcp_server_side_share": round((ServerClock.seconds - handler_s) / total, 3),
        "mcp_client_side_share": round((call_s - ServerClock.seconds) / total, 3),
        "pipeline_code_share": round((total - call_s) / total, 3),
        "pipeline_overhead_share": round(overhead_share, 3),
        "gc_pause_seconds": round(pauses.seconds, 2),
        "gc_pause_in_handlers_seconds": round(pauses.in_handlers, 2),
        "gc_pause_outside_stages_seconds": round(
            pauses.seconds - sum(m.get("gc", 0.0) for m in timer.metered.values()), 2
        ),
        "gc_collections_by_generation": pauses.collections,
        "pipeline_overhead_share_gc_as_pipeline": round(1 - (handler_s - pauses.in_handlers) / total, 3),
        "baseline": "time inside tool handlers (measured in this run)",
        "ratio_total_vs_handlers": round(total / max(handler_s, 1e-9), 2),
        "target_pipeline_overhead_share": TARGET_OVERHEAD_SHARE,
        "within_target": overhead_share < TARGET_OVERHEAD_SHARE,
        "short_supply": any(r == "short_supply" for r in manifest.get("rejections", {}).get("by_reason", {})),
        "composition": {
            k: [manifest["composition"]["shares"][k], manifest["composition"]["targets"][k]]
            for k in manifest["composition"].get("targets", {})
        },
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--examples", type=int, default=1000, help="1000 (default) or 13500 (paper scale)")
    p.add_argument("--servers", default=None, help="comma-separated subset (default: all built-in servers)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--profile", default=None, help="write cProfile stats here")
    a = p.parse_args(argv)
    servers = [s for s in a.servers.split(",") if s] if a.servers else None
    result = {"figure": "build_throughput", "machine": machine(), "build": run(a.examples, servers, a.seed, a.profile)}
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
