"""Public hooks for watching a kit server work from outside; the benchmarks attach their clocks here.

Nothing is installed by default and the kit times nothing itself: with no hook installed a tool call
costs one attribute read more than it would without this module.

* :attr:`Hooks.handler_timer`: any object with ``start() -> token`` and ``stop(token, count=True)``
  (:class:`WorkTimer`), wrapped around each tool handler's work on the world: kit tools, the hidden
  admin tools, and the closes and resets that :class:`~servers.kit.sessions.SessionBookkeeping`
  applies from a request's ``_meta`` (those with ``count=False``: they are the admin tools' work,
  not a call of their own).
* :attr:`Hooks.outer_middleware`: mcp server middleware placed outermost on every
  :class:`~servers.kit.server.EnvServer` built while it is listed. A server already built exposes
  the same chain as ``server.middleware`` (mcp's public list, outermost first).

``bench/clocks.py`` installs its ``HandlerClock`` and ``ServerTiming`` here (``install_server_clocks``).
"""

from typing import Any, Protocol


class WorkTimer(Protocol):
    def start(self) -> Any:
        """Called as a handler's work begins; the token is handed back to :meth:`stop`."""

    def stop(self, token: Any, count: bool = True) -> None:
        """Called as that work ends, however it ends (``count=False``: not a call of its own)."""


class Hooks:
    """The process-wide hook slots (one instance: :data:`HOOKS`)."""

    def __init__(self) -> None:
        self.handler_timer: WorkTimer | None = None
        self.outer_middleware: list[Any] = []


HOOKS = Hooks()


class HandlerWork:
    """``with HandlerWork(): ...`` reports the block to the installed handler timer, if any."""

    __slots__ = ("count", "timer", "token")

    def __init__(self, count: bool = True) -> None:
        self.count = count
        self.timer = HOOKS.handler_timer
        self.token: Any = None

    def __enter__(self) -> None:
        if self.timer is not None:
            self.token = self.timer.start()

    def __exit__(self, *exc: Any) -> None:
        if self.timer is not None:
            self.timer.stop(self.token, self.count)
