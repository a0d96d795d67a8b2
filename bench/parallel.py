"""Speed-up of ``prove build --parallel 2`` over ``--parallel 1`` on the per-server partitions. Prints JSON.

What runs: the build ``prove build`` runs (``assets.orchestrate.build``), twice on the same servers:
with ``parallel=1`` (every server's partition of the per-server assets as its own Dagster run, one after
another in this process: the baseline, same invocation) and with ``parallel=2`` (two worker processes,
each materializing one partition's run at a time). The figure is the time of the per-server phase
(until the last partition's run finished, from the build's own ``synthesis`` progress reports); the
cross-server run that follows is the same single run either way, and its time is reported beside.
Each build gets a fresh data directory and Dagster instance, so both discover the dependency graphs
(no cache) and do identical work; the two must write the same corpus (same content hash).

    PYTHONPATH=. .venv/bin/python bench/parallel.py [--servers banking,crm,calendar,email] [--examples 6000]
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
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assets import orchestrate, progress  # noqa: E402
from pipeline.core.config import BuildConfig  # noqa: E402

DEFAULT_SERVERS = "banking,crm,calendar,email"
TARGET_SPEEDUP = 1.6


def timed_build(servers: list[str], examples: int, parallel: int, root: Path) -> dict[str, Any]:
    """One ``--no-train`` build; the seconds to the end of its per-server phase and in all."""
    cfg = BuildConfig(examples=examples, servers=servers, data_dir=str(root / "data"))
    marks: dict[str, float] = {}

    def listen(phase: str, step: int, total: int, **_: Any) -> None:
        if phase == "synthesis" and step == total:
            marks.setdefault("synthesis", time.perf_counter())

    with mock.patch.dict(os.environ, {"DAGSTER_HOME": str(root / "dagster_home")}), progress.listening(listen):
        t0 = time.perf_counter()
        b = orchestrate.build(
            cfg, parallel=parallel, instance=orchestrate.prepare_instance(cfg), tags={"prove/build": "bench"}
        )
        total = time.perf_counter() - t0
    if not b.success or b.corpus_path is None:
        raise RuntimeError(f"the parallel={parallel} build failed: {b.error()}")
    manifest = json.loads((b.corpus_path / "manifest.json").read_text())
    return {
        "per_server_seconds": marks["synthesis"] - t0,
        "total_seconds": total,
        "content_hash": manifest["content_hash"],
        "by_server": manifest["composition"]["by_server"],
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--servers", default=DEFAULT_SERVERS, help="2-4 servers")
    p.add_argument(
        "--examples", type=int, default=6000, help="corpus size (per-server work must dominate a worker's start)"
    )
    a = p.parse_args(argv)
    servers = [s for s in a.servers.split(",") if s]
    os.environ["PYTHONPATH"] = os.pathsep.join(x for x in (str(ROOT), os.environ.get("PYTHONPATH", "")) if x)
    with tempfile.TemporaryDirectory(prefix="prove-bench-parallel-") as d:
        one = timed_build(servers, a.examples, 1, Path(d) / "parallel-1")
        two = timed_build(servers, a.examples, 2, Path(d) / "parallel-2")
    speedup = one["per_server_seconds"] / two["per_server_seconds"]
    result = {
        "figure": "parallel",
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_1m": round(os.getloadavg()[0], 2),
        },
        "what": "prove build's per-server phase (assets.orchestrate.build): --parallel 2 (two worker processes, one "
        "partition run each at a time) vs --parallel 1 (the partition runs one after another in this process)",
        "servers": servers,
        "examples": a.examples,
        "baseline": "parallel=1 (same invocation)",
        "in_process_seconds": round(one["per_server_seconds"], 2),
        "multiprocess_seconds": round(two["per_server_seconds"], 2),
        "speedup": round(speedup, 2),
        "build_seconds": {"parallel_1": round(one["total_seconds"], 2), "parallel_2": round(two["total_seconds"], 2)},
        "same_corpus": one["content_hash"] == two["content_hash"],
        "content_hash": one["content_hash"],
        "target_speedup": TARGET_SPEEDUP,
        "within_target": speedup >= TARGET_SPEEDUP,
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
