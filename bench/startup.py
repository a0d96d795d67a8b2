"""Start-up costs of a process that builds: importing ``pipeline.language.lexicon`` in a fresh interpreter, and
computing the assets' code versions. Prints JSON.

Every ``prove build``, ``check`` and ``train``, every Dagster run worker of a parallel build and every test
worker imports it. ``pipeline.language.lexicon`` imports inflect with typeguard's ``@typechecked`` as a no-op
(``bench/OPTIMISATIONS.md``, row 56); the baseline, measured in the same run, imports inflect plainly first,
so typeguard instruments its 23 checked methods as it did before.

Code versions (``assets.code_versions``, computed as the asset modules are imported) read each project module's
imports from its statements only (row 57); the baseline, in the same process, walks every node (``ast.walk``).

    PYTHONPATH=. .venv/bin/python bench/startup.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "lexicon": "import pipeline.language.lexicon",
    # the baseline: inflect as typeguard leaves it
    "lexicon_after_checked_inflect": "import inflect; import pipeline.language.lexicon",
    "interpreter": "pass",
}


def seconds(code: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return time.perf_counter() - t0


def code_version_seconds(rounds: int) -> dict[str, float]:
    """All assets' code versions computed from cold caches, reading imports from statements vs from every node."""
    import ast
    from unittest import mock

    from assets import code_versions as cv
    from assets.definitions import ALL_ASSETS

    fns = [a.op.compute_fn.decorated_fn for a in ALL_ASSETS]

    def once() -> float:
        cv._imports.cache_clear()
        t0 = time.perf_counter()
        for fn in fns:
            cv.code_version(fn)
        return time.perf_counter() - t0

    runs: dict[str, list[float]] = {"statements": [], "every_node": []}
    for _ in range(rounds):
        runs["statements"].append(once())
        with mock.patch.object(cv, "statements", ast.walk):
            runs["every_node"].append(once())
    return {k: statistics.median(v) for k, v in runs.items()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args(argv)
    runs: dict[str, list[float]] = {k: [] for k in CASES}
    for _ in range(a.rounds):  # interleaved, so a change in the machine's load falls on every case alike
        for name, code in CASES.items():
            runs[name].append(seconds(code))
    med = {k: statistics.median(v) for k, v in runs.items()}
    result = {
        "figure": "startup",
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_1m": round(os.getloadavg()[0], 2),
        },
        "baseline": "inflect imported with typeguard's instrumentation first (same run)",
        "median_seconds": {k: round(v, 3) for k, v in med.items()},
        "rounds": a.rounds,
        "saved_seconds_per_process": round(med["lexicon_after_checked_inflect"] - med["lexicon"], 2),
        "ratio_baseline_vs_lexicon": round(med["lexicon_after_checked_inflect"] / med["lexicon"], 1),
    }
    cv = code_version_seconds(a.rounds)
    result["code_versions_baseline"] = "imports read by walking every node (ast.walk), same process"
    result["code_versions_seconds"] = {k: round(v, 3) for k, v in cv.items()}
    result["ratio_every_node_vs_statements"] = round(cv["every_node"] / cv["statements"], 2)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
