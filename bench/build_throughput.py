"""Corpus build throughput end to end and per stage, and where the time goes. Prints JSON.

Runs ``pipeline.build.build_corpus`` (the stages without Dagster) on a fresh temporary data
directory (so the dependency graphs are discovered, not read from a cache) over every built-in
server, with the optional timing hooks turned on:

* ``servers.kit.HandlerClock``: time inside the tool handlers (the world's work, admin tools included);
* ``pipeline.env.CallClock``: the client-side wall time of every ``tools/call`` round trip
  (handler + MCP framing and validation + the event-loop hop).

``pipeline_overhead_share`` is the share of build time *not* spent inside tool handlers (target
< 0.5). The baseline measured in the same run is the handler time itself (the build's lower bound
if the pipeline cost nothing): ``ratio_total_vs_handlers`` = build time / handler time.

    PYTHONPATH=. .venv/bin/python bench/build_throughput.py [--examples 1000] [--servers a,b] [--profile FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.build import build_corpus  # noqa: E402
from pipeline.config import BuildConfig  # noqa: E402
from pipeline.env import CallClock  # noqa: E402
from servers.kit import HandlerClock  # noqa: E402

TARGET_OVERHEAD_SHARE = 0.5


def machine() -> dict[str, Any]:
    mem = None
    try:
        mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError):
        pass
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "memory_gib": mem,
            "platform": platform.platform(), "loadavg_1m": round(os.getloadavg()[0], 2)}


def run(examples: int, servers: list[str] | None = None, seed: int = 7, profile: str | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="prove-bench-build-") as d:
        kw: dict[str, Any] = {"examples": examples, "data_dir": d, "seed": seed}
        if servers:
            kw["servers"] = servers
        cfg = BuildConfig(**kw)
        HandlerClock.reset()
        CallClock.reset()
        HandlerClock.enabled = CallClock.enabled = True
        prof = None
        if profile:
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
        t0 = time.perf_counter()
        try:
            path, stats = build_corpus(cfg)
        finally:
            total = time.perf_counter() - t0
            if prof is not None:
                prof.disable()
                prof.dump_stats(profile)
            HandlerClock.enabled = CallClock.enabled = False
        manifest = json.loads((path / "manifest.json").read_text())
    stages = {k: round(v, 3) for k, v in stats["stage_seconds"].items()}
    n = manifest["counts"]["examples"]
    handler_s, call_s = HandlerClock.seconds, CallClock.seconds
    overhead_share = 1 - handler_s / total
    return {
        "examples_requested": examples,
        "examples_written": n,
        "content_hash": manifest["content_hash"],
        "servers": len(cfg.servers),
        "total_seconds": round(total, 2),
        "examples_per_s": round(n / total, 2),
        "stage_seconds": stages,
        "stage_share": {k: round(v / total, 3) for k, v in stats["stage_seconds"].items()},
        "tool_calls": CallClock.calls,
        "handler_calls": HandlerClock.calls,
        "handler_seconds": round(handler_s, 2),
        "tool_call_roundtrip_seconds": round(call_s, 2),
        "handler_share": round(handler_s / total, 3),
        "tool_call_roundtrip_share": round(call_s / total, 3),
        "mcp_framing_share": round((call_s - handler_s) / total, 3),
        "pipeline_overhead_share": round(overhead_share, 3),
        "baseline": "time inside tool handlers (measured in this run)",
        "ratio_total_vs_handlers": round(total / max(handler_s, 1e-9), 2),
        "target_pipeline_overhead_share": TARGET_OVERHEAD_SHARE,
        "within_target": overhead_share < TARGET_OVERHEAD_SHARE,
        "short_supply": any(r == "short_supply" for r in manifest.get("rejections", {}).get("by_reason", {})),
        "composition": {k: [manifest["composition"]["shares"][k], manifest["composition"]["targets"][k]]
                        for k in manifest["composition"].get("targets", {})},
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
