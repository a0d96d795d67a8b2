"""Issue 18's coverage criterion on the third-party fixture servers: across one build (300 examples by
default) over tests/thirdparty/servers.yaml (every fixture its own process over stdio), the accepted examples
of each fixture must use at least half of that fixture's tools. Prints JSON; exits 1 when a fixture falls short.

Too slow for the test suite (a fresh server process per session); tests/pipeline/test_thirdparty_acceptance.py
checks the 80-example part of the criterion.

    PYTHONPATH=. .venv/bin/python bench/thirdparty_coverage.py [--examples 300] [--servers memory,files]
        [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "thirdparty"


def fixture_env() -> None:
    """What tests/thirdparty/servers.yaml reads from the environment (and python first on PATH)."""
    os.environ.setdefault("PROVE_FIXTURES", str(FIXTURES))
    os.environ.setdefault("BANK_PASSWORD", "s3cret")
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    os.chdir(ROOT)


def coverage(path: Path, configs: list) -> dict[str, dict]:
    from pipeline.corpus.columns import trace_of
    from pipeline.corpus.store import read_examples
    from pipeline.env import Environment

    df = read_examples(path)
    out = {}
    for cfg in configs:
        with Environment(cfg) as env:
            tools = sorted(t.name for t in env.tools())
        rows = df.filter(pl.col("server") == cfg.name)
        used = sorted({t["name"] for tr in rows["trace"].to_list() for t in trace_of(tr) if t["ok"]} & set(tools))
        out[cfg.name] = {
            "examples": rows.height,
            "tools": len(tools),
            "used": used,
            "unused": sorted(set(tools) - set(used)),
            "share": round(len(used) / len(tools), 3) if tools else 0.0,
            "ok": len(used) * 2 >= len(tools) and rows.height >= 3,
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=300)
    ap.add_argument("--servers", help="comma-separated fixture names (default: all in servers.yaml)")
    ap.add_argument("--data-dir", help="where to build (default: a fresh temporary directory)")
    args = ap.parse_args()
    fixture_env()
    from assets.orchestrate import build
    from pipeline.core.config import BuildConfig
    from pipeline.core.servers_file import load_servers_file

    configs = load_servers_file(FIXTURES / "servers.yaml")
    if args.servers:
        wanted = args.servers.split(",")
        unknown = sorted(set(wanted) - {c.name for c in configs})
        if unknown:
            ap.error(f"no such fixture in servers.yaml: {unknown}")
        configs = [c for c in configs if c.name in wanted]
    data = args.data_dir or tempfile.mkdtemp(prefix="prove-coverage-")
    started = time.perf_counter()
    import dagster as dg

    run = build(
        BuildConfig(examples=args.examples, servers=[c.name for c in configs], server_configs=configs, data_dir=data),
        instance=dg.DagsterInstance.ephemeral(),
    )
    path = run.corpus_path
    if path is None:
        print(f"the build wrote no corpus: {run.error()}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - started
    report = {
        "examples": args.examples,
        "build_s": round(seconds, 1),
        "corpus": str(path),
        "fixtures": coverage(Path(path), configs),
    }
    print(json.dumps(report, indent=2))
    return 0 if all(f["ok"] for f in report["fixtures"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
