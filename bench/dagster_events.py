"""What Dagster's event log costs a build: Dagster's plain SQLite storage, the same with the build's
``assets.sqlite_commits.relaxed_sync``, and the project's instance (``dagster.yaml``: the event log keeps one
engine per file, ``assets.instance_storage``) with it, as ``prove build`` runs. Prints JSON.

Materializes a job of small assets (each logs a few lines, as the stage assets do) on Dagster instances
with SQLite storage in temporary homes, ``--runs`` times each, rotating the order so that load on the
machine hits every side; reports seconds per stored event for each and the ratios. The baseline is the
plain instance (``storage: sqlite``, synchronous=FULL), measured in the same process.

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
    modes = ("plain", "relaxed_sync", "relaxed_sync_kept_engines")
    times: dict[str, list[float]] = {m: [] for m in modes}
    events = 0
    plain_yaml = "storage:\n  sqlite:\n    base_dir:\n      env: DAGSTER_HOME\ntelemetry:\n  enabled: false\n"
    project_yaml = (Path(__file__).resolve().parents[1] / "dagster.yaml").read_text()
    with tempfile.TemporaryDirectory(prefix="prove-bench-dagster-") as tmp:
        instances = {}
        for name, text in (("plain", plain_yaml), ("project", project_yaml)):
            home = Path(tmp) / name
            home.mkdir()
            (home / "dagster.yaml").write_text(text)
            with mock.patch.dict(os.environ, {"DAGSTER_HOME": str(home)}):
                instances[name] = dg.DagsterInstance.get()
                one_run(instances[name], assets)  # warm-up: schema creation, imports
        for i in range(a.runs):
            for mode in modes[i % 3 :] + modes[: i % 3]:
                instance = instances["project" if mode == "relaxed_sync_kept_engines" else "plain"]
                if mode == "plain":
                    dt, events = one_run(instance, assets)
                else:
                    with relaxed_sync():
                        dt, events = one_run(instance, assets)
                times[mode].append(dt)
    per = {k: sum(v) / len(v) for k, v in times.items()}
    out = {
        "figure": "dagster_events",
        "loadavg_1m": round(os.getloadavg()[0], 2),
        "assets_per_run": a.assets,
        "events_per_run": events,
        "runs_each": a.runs,
        "seconds_per_run": {k: round(v, 3) for k, v in per.items()},
        "ms_per_event": {k: round(v / max(events, 1) * 1000, 3) for k, v in per.items()},
        "baseline": "Dagster's plain SQLite instance (storage: sqlite, synchronous=FULL), same process",
        "speedup": round(per["plain"] / per["relaxed_sync"], 2),
        "speedup_kept_engines": round(per["plain"] / per["relaxed_sync_kept_engines"], 2),
        "kept_engines_vs_relaxed_sync": round(per["relaxed_sync"] / per["relaxed_sync_kept_engines"], 2),
    }
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
