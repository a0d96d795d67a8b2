"""Before/after of the build optimisations in one process run: the same build from two source trees. Prints JSON.

``--before`` names a copy of the repository with the optimisations reverted (built by hand for
bench/OPTIMISATIONS.md); this tree is the after. Both builds run back to back in subprocesses with
the same ``PYTHONHASHSEED``, and their corpus content hashes are compared (identical = same corpus).

    PYTHONPATH=. .venv/bin/python bench/ab_build.py --before /tmp/orig_tree [--examples 300] [--servers banking,crm,...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build(tree: Path, examples: int, servers: str | None) -> dict:
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=str(tree))
    args = [sys.executable, str(tree / "bench" / "build_throughput.py"), "--examples", str(examples)]
    if servers:
        args += ["--servers", servers]
    p = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True, check=True)
    return json.loads(p.stdout)["build"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True)
    ap.add_argument("--examples", type=int, default=300)
    ap.add_argument("--servers", default=None)
    a = ap.parse_args()
    before = build(Path(a.before), a.examples, a.servers)
    after = build(ROOT, a.examples, a.servers)
    keys = [
        "total_seconds",
        "examples_per_s",
        "tool_calls",
        "handler_seconds",
        "tool_call_roundtrip_seconds",
        "pipeline_overhead_share",
    ]
    out = {
        "examples": a.examples,
        "servers": a.servers or "all",
        "same_corpus": before["content_hash"] == after["content_hash"],
        "content_hash": [before["content_hash"], after["content_hash"]],
        "before": {k: before[k] for k in keys} | {"stage_seconds": before["stage_seconds"]},
        "after": {k: after[k] for k in keys} | {"stage_seconds": after["stage_seconds"]},
        "speedup": round(before["total_seconds"] / after["total_seconds"], 2),
        "stage_speedup": {
            k: round(before["stage_seconds"][k] / max(after["stage_seconds"][k], 1e-3), 2)
            for k in after["stage_seconds"]
        },
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
