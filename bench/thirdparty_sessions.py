"""Sessions of process-isolated third-party servers: `prove servers check` per fixture and sessions/s,
with a process kept while it is at its seed (the new path) and a new process for every session and
reset (the old path, ``PROVE_SESSION_REUSE=0``), in the same process. Also how soon a server that
hangs at start is reported. Prints JSON.

Per fixture of tests/thirdparty/servers.yaml and per path: the seconds ``check_server`` takes (what
``prove servers check`` runs for one server), the server processes it started, and the CPU seconds the
servers used; then sessions/s for sessions that read (open, one read, close) and that write (open,
one write, close). The machine's load average is printed with each figure: compare only runs taken
at similar load.

    PYTHONPATH=. .venv/bin/python bench/thirdparty_sessions.py [--servers memory,files] [--paths new,old]
        [--sessions 20] [--no-check] [--no-hang]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.thirdparty_coverage import fixture_env  # noqa: E402
from pipeline.env import Environment, EnvironmentError_  # noqa: E402
from pipeline.env.reuse import REUSE_ENV  # noqa: E402

STARTED = [0]


def count_starts() -> None:
    """Count every server process an environment starts (warm spares included)."""
    start = Environment.start_process

    def counted(self: Environment, purpose: str = "") -> Any:
        STARTED[0] += 1
        return start(self, purpose)

    Environment.start_process = counted  # type: ignore[method-assign]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def load() -> float:
    return round(os.getloadavg()[0], 2)


def measured(fn: Any) -> dict[str, Any]:
    """Seconds, server processes started, the servers' CPU seconds (the part of the cost a loaded machine
    does not change much) and the load average before and after."""
    started, cpu, la, t = STARTED[0], children_cpu(), load(), time.perf_counter()
    try:
        out = fn()
    except Exception as exc:  # one fixture's failure (a start starved past its timeout) is reported, not fatal
        out = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    return {
        "seconds": round(time.perf_counter() - t, 2),
        "processes_started": STARTED[0] - started,
        "server_cpu_s": round(children_cpu() - cpu, 2),
        "loadavg_1m": [la, load()],
        **(out or {}),
    }


def check(cfg: Any, log_dir: Path) -> dict[str, Any]:
    from pipeline.discovery.check import check_server

    r = check_server(cfg, log_dir=log_dir)
    return {
        "edges": len(r.get("edges", [])),
        "could_not_use": [p for p in r["problems"] if p.startswith("could not use")],
    }


def sessions(cfg: Any, n: int, log_dir: Path) -> dict[str, Any]:
    """Sessions/s for sessions of one read and for sessions of one write (the first tool of each kind
    that needs no argument, or None)."""
    out: dict[str, Any] = {}
    with Environment(cfg, log_dir=log_dir) as env:
        tools = env.tools()
        reads = env.read_only_names()
        read = next((t.name for t in tools if t.name in reads and not t.required), None)
        write = next((t.name for t in tools if t.name not in reads and not t.required), None)
        for kind, tool in (("read", read), ("write", write)):
            if tool is None:
                continue
            t = time.perf_counter()
            for _ in range(n):
                with env.session(0) as s:
                    s.call(tool, {})
            out[f"{kind}_sessions_per_s"] = round(n / (time.perf_counter() - t), 2)
            out[f"{kind}_tool"] = tool
    return out


def hang_report(timeout_s: float = 1.5) -> dict[str, Any]:
    """Seconds until a server that never answers at start is reported, and what the report says."""
    from pipeline.core.config import ServerConfig

    cfg = ServerConfig(
        name="hang",
        kind="stdio",
        command=sys.executable,
        timeout_s=timeout_s,
        args=[str(ROOT / "tests" / "thirdparty" / "envcheck_server.py"), "--hang-at-start"],
    )
    t = time.perf_counter()
    msg = ""
    with Environment(cfg) as env:
        try:
            env.tools()
        except EnvironmentError_ as exc:
            msg = str(exc)
        reported = time.perf_counter() - t
    return {
        "timeout_s": timeout_s,
        "reported_after_s": round(reported, 2),
        "closed_after_s": round(time.perf_counter() - t, 2),
        "message": msg[:300],
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servers", help="comma-separated fixture names (default: all in servers.yaml)")
    ap.add_argument("--paths", default="new,old", help="new (reuse), old (PROVE_SESSION_REUSE=0), or both")
    ap.add_argument("--sessions", type=int, default=20, help="sessions per sessions/s figure")
    ap.add_argument("--no-check", action="store_true", help="skip the servers check timing")
    ap.add_argument("--no-hang", action="store_true", help="skip the hanging-start report timing")
    ap.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="timeout_s for the fixtures (default 300: on a loaded machine a start can take longer than 30 s)",
    )
    a = ap.parse_args(argv)
    fixture_env()
    count_starts()
    from pipeline.core.servers_file import load_servers_file

    configs = load_servers_file(ROOT / "tests" / "thirdparty" / "servers.yaml")
    if a.servers:
        by_name = {c.name: c for c in configs}
        configs = [by_name[n] for n in a.servers.split(",") if n in by_name]
    configs = [c.model_copy(update={"timeout_s": a.timeout}) for c in configs]
    log_dir = Path(os.environ.get("TMPDIR", "/tmp")) / f"prove-bench-{os.getpid()}" / "logs"
    result: dict[str, Any] = {
        "figure": "thirdparty_sessions",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "loadavg_1m": load()},
        "servers": {},
    }
    for cfg in configs:
        row: dict[str, Any] = {}
        for path in a.paths.split(","):
            os.environ[REUSE_ENV] = "1" if path == "new" else "0"
            per: dict[str, Any] = {}
            if not a.no_check:
                per["servers_check"] = measured(lambda: check(cfg, log_dir))
            if a.sessions:
                per["sessions"] = measured(lambda: sessions(cfg, a.sessions, log_dir))
            row[path] = per
            print(json.dumps({cfg.name: {path: per}}), file=sys.stderr, flush=True)
        result["servers"][cfg.name] = row
    os.environ.pop(REUSE_ENV, None)
    if not a.no_hang:
        result["hanging_start"] = hang_report()
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
