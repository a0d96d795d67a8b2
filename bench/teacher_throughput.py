"""What the teacher adds to a build's time, against the least it could add. Prints JSON.

What runs: the build ``prove build`` runs (``assets.orchestrate.build``, ``--no-train``, ``--parallel 2`` as its
default here), twice on the same servers and examples, each with a fresh data directory and Dagster instance:
once with the offline writer (the baseline, same invocation) and once with ``query.backend: llm`` against a
scripted OpenAI-compatible endpoint on loopback (``tests/teacher_endpoint.py``) that answers every completion
after a fixed latency L, however many are in flight (as a batching vLLM server does). The figure:

    added time / (completions x L / max_concurrency)

the teacher build's extra seconds over the offline build's, against the time ``completions`` answers take when
``max_concurrency`` are always in flight. 1.0 is the floor; the target is at most 2 (32 in flight, L = 0.3 s,
120 examples on four servers).

    PYTHONPATH=. .venv/bin/python bench/teacher_throughput.py [--examples 120] [--latency 0.3] [--concurrency 32]
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

from assets import orchestrate  # noqa: E402
from pipeline.core.config import BuildConfig, QueryConfig  # noqa: E402
from tests.teacher_endpoint import ScriptedTeacher  # noqa: E402

DEFAULT_SERVERS = "banking,crm,calendar,email"
TARGET = 2.0


def timed_build(cfg: BuildConfig, parallel: int, root: Path) -> dict[str, Any]:
    with mock.patch.dict(os.environ, {"DAGSTER_HOME": str(root / "dagster_home")}):
        t0 = time.perf_counter()
        b = orchestrate.build(
            cfg, parallel=parallel, instance=orchestrate.prepare_instance(cfg), tags={"prove/build": "bench"}
        )
        seconds = time.perf_counter() - t0
    if b.corpus_path is None:
        raise RuntimeError(f"the build wrote no corpus: {b.error()}")
    manifest = json.loads((b.corpus_path / "manifest.json").read_text())
    return {
        "seconds": round(seconds, 2),
        "examples": manifest["composition"]["examples"],
        "content_hash": manifest["content_hash"],
        "teacher": (manifest.get("teacher") or {}).get("total"),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--servers", default=DEFAULT_SERVERS)
    p.add_argument("--examples", type=int, default=120)
    p.add_argument("--latency", type=float, default=0.3, help="seconds the endpoint takes for every completion")
    p.add_argument("--concurrency", type=int, default=32, help="query.max_concurrency")
    p.add_argument("--parallel", type=int, default=2, help="partitions at once (prove build's default here)")
    a = p.parse_args(argv)
    servers = [s for s in a.servers.split(",") if s]
    os.environ["PYTHONPATH"] = os.pathsep.join(x for x in (str(ROOT), os.environ.get("PYTHONPATH", "")) if x)
    with tempfile.TemporaryDirectory(prefix="prove-bench-teacher-") as d, ScriptedTeacher(latency=a.latency) as t:
        base = dict(examples=a.examples, servers=servers)
        offline = timed_build(
            BuildConfig(**base, data_dir=str(Path(d) / "offline" / "data")), a.parallel, Path(d) / "offline"
        )
        query = QueryConfig(
            backend="llm", llm_base_url=t.url, llm_model="bench", llm_timeout_s=30, max_concurrency=a.concurrency
        )
        teacher = timed_build(
            BuildConfig(**base, data_dir=str(Path(d) / "teacher" / "data"), query=query),
            a.parallel,
            Path(d) / "teacher",
        )
        completions, peak = len(t.prompts), t.peak_in_flight
    added = teacher["seconds"] - offline["seconds"]
    floor = completions * a.latency / a.concurrency
    ratio = added / floor if floor else float("inf")
    out = {
        "servers": servers,
        "examples": a.examples,
        "latency_s": a.latency,
        "max_concurrency": a.concurrency,
        "parallel": a.parallel,
        "offline_seconds": offline["seconds"],
        "teacher_seconds": teacher["seconds"],
        "added_seconds": round(added, 2),
        "completions": completions,
        "peak_in_flight": peak,
        "floor_seconds": round(floor, 2),
        "added_over_floor": round(ratio, 2),
        "target": TARGET,
        "within_target": ratio <= TARGET,
        "one_at_a_time_seconds": round(completions * a.latency, 1),
        "teacher_accounting": teacher["teacher"],
        "python": platform.python_version(),
    }
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
