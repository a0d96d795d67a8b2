"""What Dagster's event log costs a build, with and without ``assets.sqlite_commits.relaxed_sync``. Prints JSON.

Materializes a job of small assets (each logs a few lines, as the stage assets do) on a Dagster instance
with SQLite storage in a temporary ``DAGSTER_HOME`` (the storage ``prove build`` uses), ``--runs`` times,
alternating plain and relaxed runs so that load on the machine hits both sides; reports seconds per
stored event for each and the ratio. The baseline is the plain instance, measured in the same process.

    PYTHONPATH=. .venv/bin/python bench/dagster_events.py [--runs 6] [--assets 12]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dagster as dg  # noqa: E402

from assets.sqlite_commits import relaxed_sync  # noqa: E402


def make_assets(n: int) -> list[Any]:
    out = []
    for i in range(n):
        deps = [f"a{i - 1}"] if i else []

        @dg.asset(name=f"a{i}", deps=deps)
        def _a(context) -> dg.MaterializeResult:  # noqa: ANN001 (Dagster reads the annotation; a string one is refused)
            for k in range(5):
                context.log.info(f"step {k}")
            return dg.MaterializeResult(metadata={"k": 1})

        out.append(_a)
    return out


def one_run(instance: dg.DagsterInstance, assets: list[Any]) -> tuple[float, int]:
    t0 = time.perf_counter()
    r = dg.materialize(assets, instance=instance, raise_on_error=True)
    dt = time.perf_counter() - t0
    return dt, len(instance.all_logs(r.run_id))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=6)
    p.add_argument("--assets", type=int, default=12)
    a = p.parse_args(argv)
    assets = make_assets(a.assets)
    times: dict[str, list[float]] = {"plain": [], "relaxed_sync": []}
    events = 0
    with tempfile.TemporaryDirectory(prefix="prove-bench-dagster-") as home, mock.patch.dict(os.environ, {"DAGSTER_HOME": home}):
        (Path(home) / "dagster.yaml").write_text((Path(__file__).resolve().parents[1] / "dagster.yaml").read_text())
        instance = dg.DagsterInstance.get()
        one_run(instance, assets)  # warm-up: schema creation, imports
        for i in range(a.runs):
            for mode in (("plain", "relaxed_sync") if i % 2 == 0 else ("relaxed_sync", "plain")):
                if mode == "plain":
                    dt, events = one_run(instance, assets)
                else:
                    with relaxed_sync():
                        dt, events = one_run(instance, assets)
                times[mode].append(dt)
    per = {k: sum(v) / len(v) for k, v in times.items()}
    out = {"figure": "dagster_events", "loadavg_1m": round(os.getloadavg()[0], 2), "assets_per_run": a.assets, "events_per_run": events,
           "runs_each": a.runs, "seconds_per_run": {k: round(v, 3) for k, v in per.items()},
           "ms_per_event": {k: round(v / max(events, 1) * 1000, 3) for k, v in per.items()},
           "baseline": "plain SQLite instance (synchronous=FULL), same process", "speedup": round(per["plain"] / per["relaxed_sync"], 2)}
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
