"""`prove servers check` per server, against the target of a minute each: the seconds each server's check took
(from its JSON report, ``duration_s``; ``probe_s`` for the probe alone), the server processes it started, its
tools, entities and confirmed edges, whether it stopped early (and why), and the machine's load average (compare
only runs taken at similar load). Prints JSON.

    PYTHONPATH=. .venv/bin/python bench/servers_check.py SERVERS_FILE [--jobs 1] [--servers a,b] [--target-s 60]

For the published servers of issue 43, write a servers file with their recipes (docs/third-party-servers.md);
without one, the fixtures of tests/thirdparty/servers.yaml are checked (``PROVE_FIXTURES`` and ``BANK_PASSWORD``
set as its header says).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.core.servers_file import load_servers_file  # noqa: E402
from pipeline.discovery.check import check_servers  # noqa: E402
from pipeline.env import Environment  # noqa: E402

STARTED: dict[str, int] = {}


def count_starts() -> None:
    """Count the server processes each server's environment starts (warm spares included)."""
    start = Environment.start_process

    def counted(self: Environment, purpose: str = "") -> Any:
        STARTED[self.config.name] = STARTED.get(self.config.name, 0) + 1
        return start(self, purpose)

    Environment.start_process = counted  # type: ignore[method-assign]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("servers_file", nargs="?", default=str(ROOT / "tests" / "thirdparty" / "servers.yaml"))
    ap.add_argument("--jobs", type=int, default=1, help="servers checked at once (1: each timed alone)")
    ap.add_argument("--servers", default="", help="comma-separated names (default: every server of the file)")
    ap.add_argument("--target-s", type=float, default=60.0)
    a = ap.parse_args()
    if "tests/thirdparty" in a.servers_file:
        os.environ.setdefault("PROVE_FIXTURES", str(ROOT / "tests" / "thirdparty"))
        os.environ.setdefault("BANK_PASSWORD", "s3cret")
        os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    configs = load_servers_file(a.servers_file)
    if a.servers:
        keep = a.servers.split(",")
        configs = [c for c in configs if c.name in keep]
    count_starts()
    with tempfile.TemporaryDirectory(prefix="prove-bench-check-") as tmp:
        reports = check_servers(configs, out_dir=tmp, jobs=a.jobs, log_dir=Path(tmp) / "logs")
    rows = [
        {
            "server": r["name"],
            "check_s": r["duration_s"],
            "probe_s": r.get("probe_s"),
            "processes": STARTED.get(r["name"], 0),
            "tools": len(r.get("tools", [])),
            "entities": r.get("entities", 0),
            "edges": len(r.get("edges", [])),
            "chainable": sum(1 for t in (r.get("tool_report") or {}).values() if t["chainable"]),
            "stopped": r.get("stopped"),
            # a server that could not be used is no figure: never "within target" at 0.0 s
            "failed": next((x for x in r.get("problems", []) if x.startswith("could not use the server")), None),
            "within_target": bool(r.get("tools")) and r["duration_s"] <= a.target_s,
        }
        for r in reports
    ]
    print(
        json.dumps(
            {
                "figure": "servers_check",
                "servers_file": a.servers_file,
                "jobs": a.jobs,
                "target_s": a.target_s,
                "load_avg": os.getloadavg(),
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "servers": rows,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
