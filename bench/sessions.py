"""Session open and reset cost vs restarting a server process. Prints JSON.

On the banking server in-process: the first call of a new session (its world is copied from the
seed cache), a call in an open session, a ``prove_admin_reset``, and a reset carried in the next
call's ``_meta`` (``prove/reset``, what ``pipeline.env`` sends), against the baseline measured in
the same run: spawning a fresh stdio server and making its first call. Reuses
``bench/server_calls.py`` (target: reset >= 100x cheaper than a restart).

    PYTHONPATH=. .venv/bin/python bench/sessions.py [--sessions 100] [--spawns 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import server_calls  # noqa: E402
from mcp import Client  # noqa: E402

from servers.kit import RESET_META_KEY, SEED_META_KEY, SESSION_META_KEY  # noqa: E402
from servers.registry import build  # noqa: E402


async def piggybacked_reset(n: int) -> dict[str, float]:
    """A call carrying ``prove/reset`` vs the same call without it: the reset's marginal cost."""
    acc = server_calls.ACCOUNT
    plain, with_reset = [], []
    async with Client(build("banking")) as c:
        meta = {SESSION_META_KEY: "pb", SEED_META_KEY: 0}
        await c.call_tool("get_account", {"account_id": acc}, meta=meta)
        for _ in range(n):
            t = time.perf_counter()
            await c.call_tool("get_account", {"account_id": acc}, meta=meta)
            plain.append(time.perf_counter() - t)
            t = time.perf_counter()
            await c.call_tool("get_account", {"account_id": acc}, meta={**meta, RESET_META_KEY: True})
            with_reset.append(time.perf_counter() - t)
    p, r = statistics.median(plain) * 1e3, statistics.median(with_reset) * 1e3
    return {
        "call_ms": round(p, 3),
        "call_with_piggybacked_reset_ms": round(r, 3),
        "piggybacked_reset_marginal_ms": round(max(r - p, 1e-3), 3),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--sessions", type=int, default=100)
    p.add_argument("--spawns", type=int, default=3)
    a = p.parse_args(argv)
    s = anyio.run(server_calls.sessions, a.sessions, a.spawns)
    pb = anyio.run(piggybacked_reset, a.sessions)
    s.update(pb)
    s["piggybacked_reset_vs_spawn"] = round(s["stdio_spawn_and_first_call_ms"] / pb["piggybacked_reset_marginal_ms"], 1)
    result = {
        "figure": "sessions",
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_1m": round(os.getloadavg()[0], 2),
        },
        "baseline": "spawn a fresh stdio server process + initialize + first call (same run)",
        "sessions": s,
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
