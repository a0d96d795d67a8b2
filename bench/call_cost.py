"""Where one in-process tool call's time goes, layer by layer. Prints JSON.

The build's overhead share (time outside tool handlers) has a floor set by the cost of one MCP round
trip. This figure measures that floor: a small read (``get_customer``) and a listing
(``list_customers``) on the banking server, each called a few thousand times through
``pipeline.env.Session`` over the in-process transport, with every layer timed:

* ``pipeline``: ``Session.call`` outside the round trip (session bookkeeping, turning the result into a record);
* ``event_loop_and_env``: driving the event loop for the request (``InlineLoop``) and the connection wrapper;
* ``mcp_client``: the client's request and result work, minus what its dispatcher hands to the server: on the
  fast path ``DirectClient.send_call`` (the request's JSON form, the result typed; row 63 of
  ``bench/OPTIMISATIONS.md``), with ``PROVE_FAST_PATHS=0`` ``ClientSession.send_request`` (request building, the
  result's per-version check and typing; there the output-schema re-check and ``Client.call_tool``'s own work land
  in ``event_loop_and_env``);
* ``mcp_server_before_middleware``: what happens between the client's dispatcher and the server's middleware:
  on the fast path (``pipeline.env.fast_client.RunnerDispatcher``, row 62 of ``bench/OPTIMISATIONS.md``) mcp's
  ``ServerRunner`` making the request context; with ``PROVE_FAST_PATHS=0`` mcp's in-process pair, which also
  makes a server-side connection per request and tears it down, under timeout scopes. The build benchmark
  counts this in its "mcp client side", since ``ServerClock`` starts at the outermost middleware;
* ``mcp_server``: the middleware chain and the tool path around the handler: for kit tools the kit's
  own (``servers.kit.fast_server.DirectCalls``: request and argument validation, the result's wire form), with
  ``PROVE_DIRECT_CALLS=0`` mcp's (the same plus a Context, a second validation and dump of the result);
* ``handler``: the tool handler itself (``HandlerClock``).

The clocks (``bench/clocks.py``) are attached through the kit's public hooks before the server is built.

The baseline measured in the same run is the handler time: ``ratio_total_vs_handler`` is the call's
cost over it, and ``handler_share`` the share of the call that is the tool's own work. The timing
wrappers are installed on two mcp methods for this figure only (they add about a microsecond each).

    PYTHONPATH=. .venv/bin/python bench/call_cost.py [--calls 3000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp.client.session import ClientSession  # noqa: E402
from mcp.shared.direct_dispatcher import DirectDispatcher  # noqa: E402

from bench.clocks import CallClock, HandlerClock, ServerClock, install_server_clocks  # noqa: E402
from pipeline.env import Environment  # noqa: E402
from pipeline.env.fast_client import DirectClient, RunnerDispatcher  # noqa: E402

CLOCKS = (HandlerClock, ServerClock, CallClock)


class _Boundaries:
    """Wall time spent inside ``ClientSession.send_request`` and inside the dispatcher's hand-off to the server."""

    def __init__(self) -> None:
        self.client = self.dispatch = 0.0

    def install(self) -> None:
        ClientSession.send_request = _timed(ClientSession.send_request, self, "client")  # type: ignore[method-assign]
        DirectClient.send_call = _timed(DirectClient.send_call, self, "client")  # type: ignore[method-assign]
        for dispatcher in (DirectDispatcher, RunnerDispatcher):  # mcp's in-process pair (plain path), the fast path's
            dispatcher.send_raw_request = _timed(dispatcher.send_raw_request, self, "dispatch")  # type: ignore[method-assign]

    def reset(self) -> None:
        self.client = self.dispatch = 0.0


def _timed(method: Any, into: _Boundaries, field: str) -> Any:
    """``method`` (an async method) adding its wall time to ``into.<field>``."""

    async def timed(self: Any, *a: Any, **k: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await method(self, *a, **k)
        finally:
            setattr(into, field, getattr(into, field) + time.perf_counter() - t0)

    return timed


def measure(session: Any, name: str, args: dict[str, Any], calls: int, bounds: _Boundaries) -> dict[str, Any]:
    first = session.call(name, args)
    if not first.ok:
        raise RuntimeError(f"{name} failed: {first.error}")
    for _ in range(min(300, calls)):  # warm up
        session.call(name, args)
    for c in CLOCKS:
        c.reset()
        c.enabled = True
    bounds.reset()
    t0 = time.perf_counter()
    for _ in range(calls):
        session.call(name, args)
    total = time.perf_counter() - t0
    for c in CLOCKS:
        c.enabled = False
    us = lambda s: round(s / calls * 1e6, 1)  # noqa: E731
    parts = {
        "pipeline": us(total - CallClock.seconds),
        "event_loop_and_env": us(CallClock.seconds - bounds.client),
        "mcp_client": us(bounds.client - bounds.dispatch),
        "mcp_server_before_middleware": us(bounds.dispatch - ServerClock.seconds),
        "mcp_server": us(ServerClock.seconds - HandlerClock.seconds),
        "handler": us(HandlerClock.seconds),
    }
    total_us = us(total)
    return {
        "tool": name,
        "result_bytes": len(first.text),
        "calls": calls,
        "us_per_call": total_us,
        "parts_us": parts,
        "handler_share": round(parts["handler"] / total_us, 3),
        "baseline": "time inside the tool handler (same run)",
        "ratio_total_vs_handler": round(total_us / max(parts["handler"], 1e-9), 1),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=3000)
    a = p.parse_args(argv)
    bounds = _Boundaries()
    bounds.install()
    install_server_clocks()
    with Environment("banking") as env:
        s = env.session(seed=1)
        customer = s.call("list_customers", {}).data["customers"][0]["customer_id"]
        runs = [
            measure(s, "get_customer", {"customer_id": customer}, a.calls, bounds),
            measure(s, "list_customers", {}, a.calls, bounds),
        ]
    out = {"figure": "call_cost", "server": "banking", "transport": "in-process", "runs": runs}
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
