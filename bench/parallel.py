"""Speed-up of Dagster's multiprocess executor over server partitions vs the in-process executor. Prints JSON.

What runs: a Dagster job with one op per server, each running that server's per-server stages
(probe -> graph -> chains -> queries -> conversations -> replay: the same ``pipeline.stages``
functions the partitioned per-server assets call, in the same order). The partitioned assets
themselves cannot run several partitions inside one run (one run materializes one partition; a
multi-partition backfill needs the daemon), and their per-partition steps form a chain with
nothing to overlap, so the job fans out over servers instead. It is executed against a temporary
``DagsterInstance`` twice: with ``in_process_executor`` (the baseline, same run) and with
``multiprocess_executor`` (``max_concurrent=2``, steps forked from a process with dagster and the pipeline
already imported, as the project's jobs run them). Each execution gets a fresh data directory, so
both discover the dependency graphs (no cache) and do identical work.

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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dagster as dg  # noqa: E402

DEFAULT_SERVERS = "banking,crm,calendar,email"
TARGET_SPEEDUP = 1.6


def _servers() -> list[str]:
    return [s for s in os.environ.get("PROVE_BENCH_SERVERS", DEFAULT_SERVERS).split(",") if s]


def _per_server_op(server: str) -> dg.OpDefinition:
    @dg.op(name=f"per_server_{server}", config_schema={"examples": int, "data_dir": str, "servers": [str]})
    def run_server(context) -> dict:
        from pipeline.config import BuildConfig
        from pipeline.stages import (open_env, stage_chains, stage_conversations, stage_graph, stage_queries, stage_snapshot,
                                     stage_validate)

        c = context.op_config
        cfg = BuildConfig(examples=c["examples"], servers=c["servers"], data_dir=c["data_dir"])
        t0 = time.perf_counter()
        env = open_env(cfg, server)
        try:
            snap = stage_snapshot(cfg, server, env)
            graph, _ = stage_graph(cfg, snap, env)
            ch = stage_chains(cfg, snap, graph)
            q = stage_queries(cfg, snap, ch.items, env)
            cv = stage_conversations(cfg, snap, ch.items, q.items, env)
            va = stage_validate(cfg, cv.items, server, env)
        finally:
            env.close()
        return {"server": server, "validated": len(va.items), "seconds": time.perf_counter() - t0, "pid": os.getpid()}

    return run_server


def make_job() -> dg.JobDefinition:
    servers = _servers()
    ops = [_per_server_op(s) for s in servers]

    @dg.graph(name="per_server_partitions")
    def per_server_partitions():
        for o in ops:
            o()

    return per_server_partitions.to_job(name="per_server_partitions", executor_def=dg.multiprocess_executor)


def _execute(instance: dg.DagsterInstance, mode: str, examples: int, data_dir: str) -> tuple[float, dict[str, Any]]:
    servers = _servers()
    run_config: dict[str, Any] = {"ops": {f"per_server_{s}": {"config": {"examples": examples, "data_dir": data_dir, "servers": servers}}
                                          for s in servers},
                                  "loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    if mode == "multiprocess":
        # the start method the project's jobs use (assets.definitions.FORKED_STEPS): steps are forked from a process
        # that has already imported what they need (here dagster and the pipeline, as this job's steps are defined in bench)
        run_config["execution"] = {"config": {"max_concurrent": 2, "start_method": {"forkserver": {"preload_modules": ["dagster", "pipeline.stages"]}}}}
    job = dg.reconstructable(make_job)
    t0 = time.perf_counter()
    if mode == "in_process":
        # the same job definition, executed in this process step after step
        res = make_job().execute_in_process(run_config=run_config, instance=instance)
        ok = res.success
        outs = {s: res.output_for_node(f"per_server_{s}") for s in servers}
    else:
        with dg.execute_job(job, instance=instance, run_config=run_config) as res:
            ok = res.success
            outs = {s: res.output_for_node(f"per_server_{s}") for s in servers}
    wall = time.perf_counter() - t0
    if not ok:
        raise RuntimeError(f"{mode} execution failed")
    return wall, outs


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--servers", default=DEFAULT_SERVERS, help="2-4 servers")
    p.add_argument("--examples", type=int, default=6000, help="corpus size the per-server targets are computed for (per-server work must dominate the ~4 s start of each step process)")
    a = p.parse_args(argv)
    os.environ["PROVE_BENCH_SERVERS"] = a.servers
    os.environ["PYTHONPATH"] = os.pathsep.join(x for x in (str(ROOT), os.environ.get("PYTHONPATH", "")) if x)
    with tempfile.TemporaryDirectory(prefix="prove-bench-parallel-") as d:
        (Path(d) / "dagster_home").mkdir()
        with dg.instance_for_test(temp_dir=str(Path(d) / "dagster_home")) as instance:
            t_in, out_in = _execute(instance, "in_process", a.examples, str(Path(d) / "data-inprocess"))
            t_mp, out_mp = _execute(instance, "multiprocess", a.examples, str(Path(d) / "data-multiprocess"))
    same = {s: out_in[s]["validated"] == out_mp[s]["validated"] for s in out_in}
    result = {
        "figure": "parallel",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "loadavg_1m": round(os.getloadavg()[0], 2)},
        "what": "Dagster job, one op per server running the per-server stages (probe..replay); "
                "in_process_executor vs multiprocess_executor(max_concurrent=2) on a temporary DagsterInstance",
        "servers": _servers(), "examples": a.examples,
        "baseline": "in_process_executor (same run)",
        "in_process_seconds": round(t_in, 2),
        "multiprocess_seconds": round(t_mp, 2),
        "speedup": round(t_in / t_mp, 2),
        "per_server_seconds_in_process": {s: round(o["seconds"], 2) for s, o in out_in.items()},
        "per_server_seconds_multiprocess": {s: round(o["seconds"], 2) for s, o in out_mp.items()},
        "worker_pids_multiprocess": sorted({o["pid"] for o in out_mp.values()}),
        "validated_in_process": {s: o["validated"] for s, o in out_in.items()},
        "validated_multiprocess": {s: o["validated"] for s, o in out_mp.items()},
        "same_validated_counts": all(same.values()),
        "target_speedup": TARGET_SPEEDUP,
        "within_target": t_in / t_mp >= TARGET_SPEEDUP,
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
