"""Timing of server work, for the benchmarks only (every clock is off unless a benchmark turns it on)."""

import time
from collections.abc import Callable
from typing import Any


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
    """Optional accounting of time spent inside tool handlers (off by default: one attribute check per call).

    ``bench/build_throughput.py`` turns it on to split build time into tool execution and pipeline overhead.
    """


class ServerClock(Clock):
    """Optional accounting of a server's whole handling of ``tools/call`` requests: its middleware, the
    tool lookup, argument validation, the handler and the result's serialization (off by default).

    The difference from :class:`HandlerClock` is mcp's server-side work around each handler."""


class ServerTiming:
    """Outermost server middleware feeding :class:`ServerClock`."""

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        if not ServerClock.enabled or ctx.method != "tools/call":
            return await call_next(ctx)
        t0 = ServerClock.start()
        try:
            return await call_next(ctx)
        finally:
            ServerClock.stop(t0)
