"""What declaring asyncio to sniffio saves an in-process tool call (``pipeline.env.fast_client.declare_asyncio``).
Prints JSON.

anyio asks sniffio which async library is running at every cancel scope and checkpoint; undeclared, sniffio
looks up the current task each time. Two environments on the banking server, one opened and called with the
declaration turned into a no-op (the baseline, measured in the same process), call ``get_customer`` and
``list_customers`` in interleaved rounds (the order alternates, so load on the machine hits both); reported:
the median microseconds per call of each and the ratio.

    PYTHONPATH=. .venv/bin/python bench/async_declaration.py [--rounds 16] [--calls 400]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.env import (
    Environment,  # noqa: E402
    fastpath,  # noqa: E402
)


def undeclared() -> Any:
    return mock.patch.object(fastpath, "declare_asyncio", lambda: None)


def per_call_us(session: Any, name: str, args: dict[str, Any], calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        session.call(name, args)
    return (time.perf_counter() - t0) / calls * 1e6


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=16)
    p.add_argument("--calls", type=int, default=400)
    a = p.parse_args(argv)
    runs = []
    with ExitStack() as stack:
        with undeclared():  # the connection's own tasks start undeclared too
            plain_env = stack.enter_context(Environment("banking"))
            plain = plain_env.session(seed=1)
        declared = stack.enter_context(Environment("banking")).session(seed=1)
        customer = declared.call("list_customers", {}).data["customers"][0]["customer_id"]
        for name, args in (("get_customer", {"customer_id": customer}), ("list_customers", {})):
            times: dict[str, list[float]] = {"undeclared": [], "declared": []}
            for r in range(a.rounds + 1):
                for mode in ("undeclared", "declared") if r % 2 else ("declared", "undeclared"):
                    if mode == "undeclared":
                        with undeclared():
                            us = per_call_us(plain, name, args, a.calls)
                    else:
                        us = per_call_us(declared, name, args, a.calls)
                    if r:  # round 0 warms both up
                        times[mode].append(us)
            med = {k: round(statistics.median(v), 1) for k, v in times.items()}
            runs.append(
                {
                    "tool": name,
                    "us_per_call_median": med,
                    "speedup": round(med["undeclared"] / med["declared"], 3),
                    "saved_us_per_call": round(med["undeclared"] - med["declared"], 1),
                }
            )
    out = {
        "figure": "async_declaration",
        "server": "banking",
        "transport": "in-process",
        "rounds": a.rounds,
        "calls_per_round": a.calls,
        "baseline": "the same calls with the declaration a no-op (same process)",
        "runs": runs,
    }
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
