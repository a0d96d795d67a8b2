"""Cost of the server kit: per-call overhead, session open and reset, and the three transports.

``PYTHONPATH=. python bench/server_calls.py [--calls N] [--rounds R]`` prints one JSON object:

* ``kit_overhead``: one in-process ``get_account`` through ``mcp.Client`` on the kit's banking
  server (with and without a ``_meta`` session) against a bare ``MCPServer`` serving an equivalent
  handler over the same Client path; ``ratio`` (against the bare ``async def`` handler, the
  stricter baseline) target <= 1.2. The bare sync handler is reported too: MCPServer runs sync
  tools in a worker thread, which the kit's async wrapper avoids.
* ``sessions``: the first call of a new session id (the world is copied from the seed cache), a
  ``prove_admin_reset``, and a fresh stdio server (spawn + initialize + first call); the
  ``*_vs_spawn`` ratios say how many times cheaper a session or reset is (target reset >= 100x).
* ``transports``: per-call cost through ``pipeline.env`` in-process, over stdio and over HTTP.

Timings are medians over rounds (the machine may be shared); times are in milliseconds.
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
from typing import Annotated, Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.core.config import ServerConfig  # noqa: E402
from pipeline.env import Environment  # noqa: E402
from servers import banking  # noqa: E402
from servers.banking.world import Account  # noqa: E402
from servers.kit import SEED_META_KEY, SESSION_META_KEY  # noqa: E402
from servers.registry import build  # noqa: E402

ACCOUNT = "ACC-0001"
AccountId = Annotated[str, Field(description="Account id, e.g. 'ACC-0003' (from list_accounts)")]


def bare_server(is_async: bool) -> MCPServer:
    """A plain MCPServer with the same get_account handler over the same seeded data, no kit.

    ``is_async=False`` is the handler as a plain sync function (MCPServer runs it in a worker
    thread); ``is_async=True`` is an ``async def`` (run on the event loop, as the kit's wrapper is).
    """
    import random

    world = banking.seed_world(random.Random("banking:0"), 0)
    srv = MCPServer("bare", log_level="WARNING")
    desc = "Get one account's details: owner, type, currency, balance and status."

    def lookup(account_id: str) -> Account:
        acc = world.accounts.get(account_id)
        if acc is None or acc.status == "closed":
            raise ToolError(f"not_found: account {account_id!r} not found")
        return acc

    if is_async:

        @srv.tool(description=desc)
        async def get_account(account_id: AccountId) -> Account:
            return lookup(account_id)
    else:

        @srv.tool(description=desc)
        def get_account(account_id: AccountId) -> Account:  # type: ignore[no-redef]
            return lookup(account_id)

    return srv


async def _per_call(client: Client, n: int, meta: dict[str, Any] | None) -> float:
    for _ in range(20):  # warm up
        await client.call_tool("get_account", {"account_id": ACCOUNT}, meta=meta)
    t = time.perf_counter()
    for _ in range(n):
        r = await client.call_tool("get_account", {"account_id": ACCOUNT}, meta=meta)
    dt = time.perf_counter() - t
    assert not r.is_error, r.content
    return dt / n * 1e3


async def kit_overhead(calls: int, rounds: int) -> dict[str, Any]:
    kit, bare_async, bare_sync = build("banking"), bare_server(True), bare_server(False)
    meta = {SESSION_META_KEY: "bench", SEED_META_KEY: 0}
    k_meta, k_plain, ba, bs = [], [], [], []
    async with Client(kit) as kc, Client(bare_async) as bac, Client(bare_sync) as bsc:
        for _ in range(rounds):  # interleaved, so load from other processes hits all alike
            ba.append(await _per_call(bac, calls, None))
            bs.append(await _per_call(bsc, calls, None))
            k_meta.append(await _per_call(kc, calls, meta))
            k_plain.append(await _per_call(kc, calls, None))
    ba_ms, bs_ms = statistics.median(ba), statistics.median(bs)
    meta_ms, plain_ms = statistics.median(k_meta), statistics.median(k_plain)
    return {
        "bare_async_handler_ms": round(ba_ms, 4),
        "bare_sync_handler_ms": round(bs_ms, 4),
        "kit_with_session_meta_ms": round(meta_ms, 4),
        "kit_default_session_ms": round(plain_ms, 4),
        "ratio": round(meta_ms / ba_ms, 3),
        "ratio_default_session": round(plain_ms / ba_ms, 3),
        "ratio_vs_bare_sync_handler": round(meta_ms / bs_ms, 3),
        "target_ratio": 1.2,
        "within_target": meta_ms / ba_ms <= 1.2,
        "note": "ratio is against the async bare handler (same event-loop execution as the kit); a sync bare "
        "handler is slower because MCPServer runs it in a worker thread",
    }


async def sessions(n: int, spawns: int) -> dict[str, Any]:
    kit = build("banking")
    opens, resets, calls = [], [], []
    async with Client(kit) as c:
        await c.call_tool("get_account", {"account_id": ACCOUNT}, meta={SESSION_META_KEY: "warm", SEED_META_KEY: 0})
        for i in range(n):
            meta = {SESSION_META_KEY: f"new-{i}", SEED_META_KEY: 0}
            t = time.perf_counter()
            await c.call_tool("get_account", {"account_id": ACCOUNT}, meta=meta)
            opens.append(time.perf_counter() - t)
            t = time.perf_counter()
            await c.call_tool("get_account", {"account_id": ACCOUNT}, meta=meta)
            calls.append(time.perf_counter() - t)
            t = time.perf_counter()
            await c.call_tool("prove_admin_reset", {}, meta=meta)
            resets.append(time.perf_counter() - t)
            await c.call_tool("prove_admin_close", {}, meta=meta)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    params = StdioServerParameters(command=sys.executable, args=["-m", "servers", "banking"], env=env, cwd=str(ROOT))
    spawn = []
    for _ in range(spawns):
        t = time.perf_counter()
        async with Client(params, read_timeout_seconds=60) as sc:
            r = await sc.call_tool("get_account", {"account_id": ACCOUNT})
            spawn.append(time.perf_counter() - t)
        assert not r.is_error
    open_ms, reset_ms, call_ms = (statistics.median(x) * 1e3 for x in (opens, resets, calls))
    spawn_ms = statistics.median(spawn) * 1e3
    return {
        "session_open_first_call_ms": round(open_ms, 3),
        "call_in_open_session_ms": round(call_ms, 3),
        "reset_ms": round(reset_ms, 3),
        "stdio_spawn_and_first_call_ms": round(spawn_ms, 1),
        "session_open_vs_spawn": round(spawn_ms / open_ms, 1),
        "reset_vs_spawn": round(spawn_ms / reset_ms, 1),
        "target_reset_vs_spawn": 100,
        "within_target": spawn_ms / reset_ms >= 100,
    }


def transports(calls: int, rounds: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for transport in ("inprocess", "stdio", "http"):
        with Environment(ServerConfig.for_builtin("banking", transport)) as env:
            s = env.session(0)
            for _ in range(20):
                s.call("get_account", {"account_id": ACCOUNT})
            per = []
            for _ in range(rounds):
                t = time.perf_counter()
                for _ in range(calls):
                    r = s.call("get_account", {"account_id": ACCOUNT})
                per.append((time.perf_counter() - t) / calls * 1e3)
                assert r.ok, r.error
            out[f"{transport}_ms_per_call"] = round(statistics.median(per), 3)
    out["stdio_vs_inprocess"] = round(out["stdio_ms_per_call"] / out["inprocess_ms_per_call"], 2)
    out["http_vs_inprocess"] = round(out["http_ms_per_call"] / out["inprocess_ms_per_call"], 2)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=300, help="calls per timing round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--sessions", type=int, default=100)
    p.add_argument("--spawns", type=int, default=3)
    a = p.parse_args(argv)
    result = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_1m": round(os.getloadavg()[0], 2),
        },
        "kit_overhead": anyio.run(kit_overhead, a.calls, a.rounds),
        "sessions": anyio.run(sessions, a.sessions, a.spawns),
        "transports": transports(max(a.calls // 3, 50), a.rounds),
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
