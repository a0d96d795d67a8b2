"""Timing clocks for the benchmarks. Nothing outside ``bench/`` imports this module.

Every clock is off unless a benchmark turns it on, and each one is fed from outside the code it times:

* :class:`HandlerClock`: time inside tool handlers (the world's work, admin tools and the bookkeeping's
  closes and resets included), installed as the kit's handler timer (``servers.kit.hooks``);
* :class:`ServerClock`: a server's whole handling of ``tools/call`` requests (its middleware, the tool
  lookup, argument validation, the handler, the result's serialization), fed by :class:`ServerTiming`,
  the outermost middleware of every kit server built after :func:`install_server_clocks`;
* :class:`CallClock`: the client side of every ``tools/call`` round trip through ``pipeline.env``, fed
  through the environment's public call hook (``pipeline.env.CALL_OBSERVERS``), which it joins on import.

:func:`install_server_clocks` must run before the servers to time are built (their middleware chain is
fixed then); building an ``Environment`` builds its in-process servers.
"""

import time
from collections.abc import Callable
from typing import Any

from pipeline.env import CALL_OBSERVERS
from servers.kit.hooks import HOOKS


class Clock:
    """Accumulated seconds and calls of one kind of work, off unless ``enabled`` (benchmarks turn it on).
    Each subclass keeps its own totals."""

    enabled: bool = False
    seconds: float = 0.0
    calls: int = 0
    running: int = 0  # timed blocks entered and not yet left (a benchmark asks "is one running now?")

    @classmethod
    def reset(cls) -> None:
        cls.seconds, cls.calls, cls.running = 0.0, 0, 0

    @classmethod
    def start(cls) -> float:
        """A start time to hand to :meth:`stop` (0 while the clock is off: nothing is timed)."""
        if not cls.enabled:
            return 0.0
        cls.running += 1
        return time.perf_counter()

    @classmethod
    def stop(cls, t0: float, count: bool = True) -> None:
        """Add the time since ``t0`` (and, with ``count``, one call)."""
        if t0:
            cls.seconds += time.perf_counter() - t0
            cls.calls += count
            cls.running -= 1

    @classmethod
    def timed(cls, count: bool = True) -> "Timed":
        """``with Clock.timed(): ...``: :meth:`start` on entry, :meth:`stop` on the way out, however it is left."""
        return Timed(cls, count)


class Timed:
    def __init__(self, clock: type[Clock], count: bool):
        self.clock, self.count, self.t0 = clock, count, 0.0

    def __enter__(self) -> None:
        self.t0 = self.clock.start()

    def __exit__(self, *exc: Any) -> None:
        self.clock.stop(self.t0, self.count)


class HandlerClock(Clock):
    """Time spent inside tool handlers; ``bench/build_throughput.py`` splits build time with it into tool
    execution and pipeline overhead."""


class ServerClock(Clock):
    """A server's whole handling of ``tools/call`` requests. The difference from :class:`HandlerClock`
    is mcp's (and the kit's) server-side work around each handler."""


class CallClock(Clock):
    """The client-side wall time of every ``tools/call`` round trip (the server's part, plus the mcp
    client's request building and result validation)."""

    @classmethod
    def observe(cls, server: str, tool: str, seconds: float) -> None:
        """A ``pipeline.env.CALL_OBSERVERS`` entry: one round trip of ``seconds``."""
        if cls.enabled:
            cls.seconds += seconds
            cls.calls += 1


if CallClock.observe not in CALL_OBSERVERS:
    CALL_OBSERVERS.append(CallClock.observe)


class ServerTiming:
    """Server middleware feeding :class:`ServerClock` (installed outermost by :func:`install_server_clocks`)."""

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        if not ServerClock.enabled or ctx.method != "tools/call":
            return await call_next(ctx)
        t0 = ServerClock.start()
        try:
            return await call_next(ctx)
        finally:
            ServerClock.stop(t0)


def install_server_clocks() -> None:
    """Attach :class:`HandlerClock` and :class:`ServerTiming` to every kit server built from now on, in this
    process (idempotent). The clocks stay off until a benchmark sets ``enabled``."""
    HOOKS.handler_timer = HandlerClock
    if not any(isinstance(m, ServerTiming) for m in HOOKS.outer_middleware):
        HOOKS.outer_middleware.insert(0, ServerTiming())


def uninstall_server_clocks() -> None:
    """Undo :func:`install_server_clocks` (servers already built keep their middleware)."""
    if HOOKS.handler_timer is HandlerClock:
        HOOKS.handler_timer = None
    HOOKS.outer_middleware[:] = [m for m in HOOKS.outer_middleware if not isinstance(m, ServerTiming)]
