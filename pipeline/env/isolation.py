"""How sessions are kept apart: one strategy object per environment, chosen from ``ServerConfig.isolation``.

* :class:`MetaIsolation` (built-in servers): every session is a separate world on the shared
  connection, named in the request ``_meta`` with its seed; the kit's admin tools reset, hash and
  drop it. With the fast paths on, reset and close ride on the next request (:class:`Piggyback`).
* :class:`ProcessIsolation`: every session (and every reset) gets its own server process, started
  in a fresh copy of the server's template directory (:mod:`pipeline.env.workdir`).
* :class:`SharedIsolation`: one world for everyone, brought back by the server's ``reset_tool``
  at the start and end of every session (or a stateless server, where nothing needs resetting).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from pipeline.env.fastpath import Piggyback, WarmSpares
from pipeline.env.transport import EnvironmentError_
from pipeline.records import CallResult, stable_hash

# the session contract as the kit defines it: session and seed in ``_meta``; on kit servers a reset and
# the ids of closed sessions ride on the next call's ``_meta`` (no extra round trip)
from servers.kit.keys import ADMIN_PREFIX, CLOSE_META_KEY, RESET_META_KEY, SEED_META_KEY, SESSION_META_KEY

if TYPE_CHECKING:
    from pipeline.env.connection import Connection
    from pipeline.env.core import Environment, Session


class Isolation(ABC):
    """The strategy interface; every method gets the session it acts for."""

    def __init__(self, env: Environment):
        self.env = env
        self.config = env.config

    def open(self, s: Session) -> None:
        """Called once as the session is created."""

    def connection(self, s: Session) -> Connection:
        return self.env.conn

    def send(self, s: Session, name: str, arguments: dict[str, Any]) -> CallResult:
        return self.connection(s).call(name, arguments, None)

    @abstractmethod
    def reset(self, s: Session) -> bool:
        """Bring the session back to its seeded state; ``False`` when it already was (nothing done)."""

    def state_hash(self, s: Session) -> str | None:
        if self.config.state_tool:
            r = self.connection(s).call(self.config.state_tool, {}, None)
            if r.ok:
                return stable_hash(r.data, 64)
        return None

    def state(self, s: Session) -> dict[str, Any] | None:
        return None

    def close(self, s: Session) -> None:
        """Called once as the session is closed."""

    def shutdown(self) -> None:
        """Called once as the environment is closed."""


class MetaIsolation(Isolation):
    def __init__(self, env: Environment, piggyback: Piggyback | None):
        super().__init__(env)
        self.piggyback = piggyback

    def send(self, s: Session, name: str, arguments: dict[str, Any]) -> CallResult:
        meta: dict[str, Any] = {SESSION_META_KEY: s.id, SEED_META_KEY: s.seed}
        s.touched = True
        if self.piggyback is not None:
            self.piggyback.stamp(s.id, meta, RESET_META_KEY, CLOSE_META_KEY)
        return self.env.conn.call(name, arguments, meta)

    def reset(self, s: Session) -> bool:
        if not s.dirty:
            return False  # nothing ran since the session was opened or last reset: it is at its seed
        s.dirty = False
        if self.piggyback is not None:
            self.piggyback.pending_reset.add(s.id)  # applied by the server before this session's next request
            return True
        r = self.send(s, ADMIN_PREFIX + "reset", {})
        if not r.ok:
            raise EnvironmentError_(f"reset failed on {self.config.name}: {r.error}")
        return True

    def state_hash(self, s: Session) -> str | None:
        r = self.send(s, ADMIN_PREFIX + "state_hash", {})
        return r.data.get("state_hash") if r.ok and isinstance(r.data, dict) else None

    def state(self, s: Session) -> dict[str, Any] | None:
        r = self.send(s, ADMIN_PREFIX + "state", {})
        return r.data.get("state") if r.ok and isinstance(r.data, dict) else None

    def close(self, s: Session) -> None:
        if not s.touched:
            return  # the server never made a world for it
        s.touched = False
        if self.piggyback is not None:
            self.piggyback.pending_reset.discard(s.id)
            self.piggyback.pending_close.append(s.id)  # dropped with the environment's next request
            return
        try:
            self.send(s, ADMIN_PREFIX + "close", {})
        except Exception:
            pass


class ProcessIsolation(Isolation):
    """A server process of its own per session, restarted (in a fresh copy of its files) on reset.
    With the fast paths on, processes come from a pool of warm spares (:class:`WarmSpares`)."""

    def __init__(self, env: Environment, spares: int = 0):
        super().__init__(env)
        self.spares = WarmSpares(env.start_process, env.stop_process, spares) if spares else None

    def _process(self) -> Connection:
        return self.spares.take() if self.spares is not None else self.env.start_process()

    def open(self, s: Session) -> None:
        s.own = self._process()

    def shutdown(self) -> None:
        if self.spares is not None:
            self.spares.close()

    def connection(self, s: Session) -> Connection:
        if s.own is None:
            raise EnvironmentError_(f"session {s.id} of {self.config.name!r} is closed")
        return s.own

    def reset(self, s: Session) -> bool:
        if not s.dirty and s.own is not None:
            return False  # its own fresh process has run nothing since it started: it is at its seed
        s.dirty = False
        old, s.own = s.own, None
        if old is not None:
            self.env.stop_process(old)
        s.own = self._process()
        return True

    def close(self, s: Session) -> None:
        if s.own is not None:
            own, s.own = s.own, None
            self.env.stop_process(own)


class SharedIsolation(Isolation):
    """One world for all sessions, reset by ``reset_tool`` (if any) as each session opens and closes."""

    def open(self, s: Session) -> None:
        if self.config.reset_tool:
            s.dirty = True
            self.reset(s)

    def reset(self, s: Session) -> bool:
        if not self.config.reset_tool:
            return False
        s.dirty = False
        r = self.env.conn.call(self.config.reset_tool, {}, None)
        if not r.ok:
            raise EnvironmentError_(f"reset tool {self.config.reset_tool} of {self.config.name!r} failed: {r.error}")
        return True

    def close(self, s: Session) -> None:
        if self.config.reset_tool:
            try:
                self.reset(s)  # leave nothing of this session behind
            except Exception:
                pass


def isolation_for(env: Environment, fast: bool) -> Isolation:
    c = env.config
    if c.isolation == "meta":
        return MetaIsolation(env, Piggyback() if fast and c.kind == "builtin" else None)
    if c.isolation == "process":
        return ProcessIsolation(env, spares=2 if fast else 0)
    return SharedIsolation(env)
