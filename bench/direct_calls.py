"""The kit's direct ``tools/call`` path against mcp's own, in one process. Prints JSON.

Two banking servers, one with ``DirectCalls`` (``servers.kit.fast_server``) and one without, each behind an
in-process ``mcp.Client``; blocks of calls alternate between them so that the machine's load hits both
alike. Per tool: the median per-call time of each path over the blocks, and the server's part (from the
outermost server middleware, ``bench/clocks.ServerClock``) minus the handler (``HandlerClock``).

    PYTHONPATH=. .venv/bin/python bench/direct_calls.py [--calls 200] [--rounds 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.clocks import HandlerClock, ServerClock, install_server_clocks  # noqa: E402
from servers import banking  # noqa: E402
from servers.kit import SEED_META_KEY, SESSION_META_KEY, EnvServer  # noqa: E402

META = {SESSION_META_KEY: "bench", SEED_META_KEY: 0}


def server(direct: bool) -> EnvServer:
    return EnvServer(
        "banking",
        seeder=banking.seed_world,
        category="finance",
        description="banking",
        tools=banking.TOOLS,
        direct_calls=direct,
    )


async def _block(client: Client, name: str, args: dict[str, Any], n: int) -> tuple[float, float]:
    """Seconds per call, and the server's part outside the handler per call, over ``n`` calls."""
    for c in (HandlerClock, ServerClock):
        c.reset()
        c.enabled = True
    t0 = time.perf_counter()
    for _ in range(n):
        r = await client.call_tool(name, args, meta=META)
        if r.is_error:
            raise RuntimeError(f"{name} failed: {r.content}")
    total = time.perf_counter() - t0
    for c in (HandlerClock, ServerClock):
        c.enabled = False
    return total / n, (ServerClock.seconds - HandlerClock.seconds) / n


async def compare(calls: int, rounds: int) -> dict[str, Any]:
    install_server_clocks()
    direct_srv, mcp_srv = server(True), server(False)
    out: dict[str, Any] = {}
    async with Client(direct_srv) as direct, Client(mcp_srv) as plain:
        customer = (await direct.call_tool("list_customers", {}, meta=META)).structured_content["customers"][0][
            "customer_id"
        ]
        for name, args in (("get_customer", {"customer_id": customer}), ("list_customers", {})):
            samples: dict[str, list[tuple[float, float]]] = {"direct": [], "mcp": []}
            for client in (direct, plain):  # warm up
                await _block(client, name, args, calls)
            for _ in range(rounds):
                samples["direct"].append(await _block(direct, name, args, calls))
                samples["mcp"].append(await _block(plain, name, args, calls))
            med = {
                k: (statistics.median(s[0] for s in v) * 1e6, statistics.median(s[1] for s in v) * 1e6)
                for k, v in samples.items()
            }
            out[name] = {
                "direct_us_per_call": round(med["direct"][0], 1),
                "mcp_us_per_call": round(med["mcp"][0], 1),
                "direct_server_side_us": round(med["direct"][1], 1),
                "mcp_server_side_us": round(med["mcp"][1], 1),
                "call_ratio_mcp_vs_direct": round(med["mcp"][0] / med["direct"][0], 2),
                "server_side_ratio_mcp_vs_direct": round(med["mcp"][1] / med["direct"][1], 2),
            }
    assert direct_srv.direct_calls is not None and direct_srv.direct_calls.answered > 0 and mcp_srv.direct_calls is None
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=200, help="calls per block")
    p.add_argument("--rounds", type=int, default=10, help="blocks per path and tool")
    a = p.parse_args(argv)
    out = {
        "figure": "direct_calls",
        "server": "banking",
        "transport": "in-process (mcp.Client)",
        "calls_per_block": a.calls,
        "rounds": a.rounds,
        "tools": anyio.run(compare, a.calls, a.rounds),
    }
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
