"""Client-side timing of tool calls, for the benchmarks (``pipeline.env`` itself times nothing).

:class:`CallClock` adds the wall time of every MCP ``tools/call`` round trip made through a
``pipeline.env`` session (user tools and admin reset/state/close calls alike) while ``enabled``. It
watches through the environment's public hook, ``pipeline.env.CALL_OBSERVERS``, which it joins on
import; while it is off, the only cost is its one attribute check per call.
"""

from __future__ import annotations

from pipeline.env import CALL_OBSERVERS


class CallClock:
    """Accumulated seconds and calls of ``tools/call`` round trips, off unless ``enabled``."""

    enabled: bool = False
    seconds: float = 0.0
    calls: int = 0

    @classmethod
    def reset(cls) -> None:
        cls.seconds, cls.calls = 0.0, 0

    @classmethod
    def observe(cls, server: str, tool: str, seconds: float) -> None:
        if cls.enabled:
            cls.seconds += seconds
            cls.calls += 1


if CallClock.observe not in CALL_OBSERVERS:
    CALL_OBSERVERS.append(CallClock.observe)
