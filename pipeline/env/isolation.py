"""How sessions are kept apart: one strategy object per environment, chosen from ``ServerConfig.isolation``.

* :class:`MetaIsolation` (built-in servers): every session is a separate world on the shared
  connection, named in the request ``_meta`` with its seed; the kit's admin tools reset, hash and
  drop it. With the fast paths on, reset and close ride on the next request (:class:`Piggyback`).
* :class:`ProcessIsolation`: every session gets its own server process, started in a fresh copy of
  the server's template directory (:mod:`pipeline.env.workdir`); a reset replaces it, unless it ran
  only reads and its directory is unchanged (:mod:`pipeline.env.reuse`).
* :class:`SharedIsolation`: one world for everyone, brought back by the server's ``reset_tool``
  at the start and end of every session. Without a reset tool its sessions are not isolated and are
  never sent a write.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from pipeline.core.records import CallResult, stable_hash
from pipeline.env.fast_client import Piggyback, WarmSpares
from pipeline.env.reuse import Clean, CleanProcesses, Stopper, reuse_wanted, setup_key, tree_print
from pipeline.env.transport import EnvironmentError_

# the session contract as the kit defines it: session and seed in ``_meta``; on kit servers a reset and
# the ids of closed sessions ride on the next call's ``_meta``, and a state hash on the call it follows
# (no extra round trip)
from servers.kit.keys import (
    ADMIN_PREFIX,
    CLOSE_META_KEY,
    RESET_META_KEY,
    SEED_META_KEY,
    SESSION_META_KEY,
    STATE_HASH_META_KEY,
)

if TYPE_CHECKING:
    from pipeline.env.connection import Connection
    from pipeline.env.environment import Environment, Session


class Isolation(ABC):
    """The strategy interface; every method gets the session it acts for.

    ``isolated``: a session's writes are its own and a reset undoes them. Where it is false (a shared
    server with no reset tool) a session is never sent a call of a tool not known to only read."""

    isolated = True

    def __init__(self, env: Environment):
        self.env = env
        self.config = env.config
        # results of calls on the seed state, kept where a reset costs a process (Session.call_at_seed)
        self.seed_results: dict[Any, CallResult] | None = None

    def open(self, s: Session) -> bool:
        """Called once as the session is created; ``True`` when its world is already set up (the
        server's ``setup`` calls are not run again)."""
        return False

    def settled(self, s: Session) -> None:  # noqa: B027  (an optional hook: nothing to do unless a strategy says so)
        """Called when the session is at its seed, set up: as it opens and after a reset that did something."""

    def list_tools(self) -> list[Any]:
        return self.env.conn.list_tools()

    def connection(self, s: Session) -> Connection:
        return self.env.conn

    def send(self, s: Session, name: str, arguments: dict[str, Any], setup: bool = False) -> CallResult:
        """Call a tool for the session (``setup``: one of the server's set-up calls)."""
        return self.connection(s).call(name, arguments, None)

    def send_and_hash(self, s: Session, name: str, arguments: dict[str, Any]) -> tuple[CallResult, str | None]:
        """A call, then the session's state hash after it."""
        return self.send(s, name, arguments), self.state_hash(s)

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

    def close(self, s: Session) -> None:  # noqa: B027  (an optional hook: nothing to do unless a strategy says so)
        """Called once as the session is closed."""

    def shutdown(self) -> None:  # noqa: B027  (an optional hook: nothing to do unless a strategy says so)
        """Called once as the environment is closed."""


class MetaIsolation(Isolation):
    def __init__(self, env: Environment, piggyback: Piggyback | None):
        super().__init__(env)
        self.piggyback = piggyback

    def _meta(self, s: Session) -> dict[str, Any]:
        meta: dict[str, Any] = {SESSION_META_KEY: s.id, SEED_META_KEY: s.seed}
        s.touched = True
        if self.piggyback is not None:
            self.piggyback.stamp(s.id, meta, RESET_META_KEY, CLOSE_META_KEY)
        return meta

    def send(self, s: Session, name: str, arguments: dict[str, Any], setup: bool = False) -> CallResult:
        return self.env.conn.call(name, arguments, self._meta(s))

    def send_and_hash(self, s: Session, name: str, arguments: dict[str, Any]) -> tuple[CallResult, str | None]:
        if self.piggyback is None:  # the plain path: the admin tool, a round trip of its own
            return super().send_and_hash(s, name, arguments)
        meta = self._meta(s)
        meta[STATE_HASH_META_KEY] = True
        r, answered = self.env.conn.exchange(name, arguments, meta)
        digest = answered.get(STATE_HASH_META_KEY)
        return r, (
            digest if isinstance(digest, str) else self.state_hash(s)
        )  # not answered (the call failed in mcp): asked for

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
    """A server process of its own per session, replaced (by one in a fresh copy of its files) on reset.

    With the fast paths on, processes come from a pool of warm spares (:class:`WarmSpares`). With reuse on
    (:mod:`pipeline.env.reuse`), a process whose session ran only calls of tools known to read, and whose
    directory is unchanged, is kept by a reset and handed to the next session on close."""

    def __init__(self, env: Environment, spares: int = 0, reuse: bool = True):
        super().__init__(env)
        self.reuse = reuse
        self.spares = WarmSpares(env.start_process, self._stop, spares, lazy=reuse) if spares else None
        self.clean = CleanProcesses()
        self.stopper = Stopper(env.stop_process) if reuse else None
        self.closed = False
        self.seed_results = {} if reuse else None

    def _stop(self, conn: Connection) -> None:
        if self.stopper is not None:
            self.stopper.stop(conn)  # on a helper thread: the session goes on with its next process
        else:
            self.env.stop_process(conn)

    def _process(self) -> Connection:
        return self.spares.take() if self.spares is not None else self.env.start_process()

    def list_tools(self) -> list[Any]:
        if not self.reuse:
            return super().list_tools()  # a process of its own, kept for the environment's lifetime
        conn = self._process()
        try:
            tools = conn.list_tools()
        except BaseException:
            self.env.stop_process(conn)
            raise
        self._keep(Clean((), conn))  # it ran nothing: the next session's process
        return tools

    def _at_seed_process(self, key: tuple[str, ...]) -> tuple[Connection, bool]:
        """A process at its seed: a kept one set up with ``key`` (then ``True``), else one that ran nothing."""
        clean = self.clean.take(key) if self.reuse else None
        if clean is None:
            return self._process(), False
        return clean.conn, bool(clean.key)

    def open(self, s: Session) -> bool:
        s.own, set_up = self._at_seed_process(setup_key(s.setup))
        return set_up  # set up the way this session is: its set-up is not run again

    def settled(self, s: Session) -> None:
        s.wrote = False
        if self.reuse:
            s.print = tree_print(s.workdir)

    def send(self, s: Session, name: str, arguments: dict[str, Any], setup: bool = False) -> CallResult:
        if self.reuse and not setup and not s.wrote and name in self.env.read_only_names(via=s.own):
            r = self.connection(s).call(name, arguments, None)
            s.wrote = r.error_code == "server_error"  # a crash or a timeout leaves the state unknown
            return r
        s.wrote = True
        return self.connection(s).call(name, arguments, None)

    def at_seed(self, s: Session) -> bool:
        """The session's process is still at its seed (see :mod:`pipeline.env.reuse`)."""
        return self.reuse and s.own is not None and not s.wrote and tree_print(s.workdir) == s.print

    def shutdown(self) -> None:
        self.closed = True
        if self.spares is not None:
            self.spares.close()
        for c in self.clean.drain():
            self._stop(c.conn)
        if self.stopper is not None:
            self.stopper.close()

    def connection(self, s: Session) -> Connection:
        if s.own is None:
            raise EnvironmentError_(f"session {s.id} of {self.config.name!r} is closed")
        return s.own

    def reset(self, s: Session) -> bool:
        if s.own is not None and (not s.dirty or self.at_seed(s)):
            s.dirty = False
            return False  # its process has run nothing that could change it since it was settled
        s.dirty = False
        old, s.own = s.own, None
        if old is not None:
            self._stop(old)
        s.own, _ = self._at_seed_process(())  # one that ran nothing: the session runs its set-up
        return True

    def _keep(self, clean: Clean) -> None:
        extra = self.clean.keep(clean)
        if extra is not None:
            self._stop(extra.conn)

    def close(self, s: Session) -> None:
        if s.own is None:
            return
        own, at_seed = s.own, self.at_seed(s)
        s.own = None
        if at_seed and not self.closed:
            self._keep(Clean(setup_key(s.setup), own))
        else:
            self._stop(own)


class SharedIsolation(Isolation):
    """One world for all sessions, reset by ``reset_tool`` (if any) as each session opens and closes.

    Without a reset tool nothing could undo a write, so sessions are not isolated (``isolated`` is
    false): a call of a tool not known to only read is refused without reaching the server."""

    def __init__(self, env: Environment):
        super().__init__(env)
        self.isolated = bool(self.config.reset_tool)

    def open(self, s: Session) -> bool:
        if self.config.reset_tool:
            s.dirty = True
            self.reset(s)
        return False

    def send(self, s: Session, name: str, arguments: dict[str, Any], setup: bool = False) -> CallResult:
        if not self.isolated and not setup and name not in self.env.read_only_names():
            why = (
                f"{name} is not known to only read (no readOnlyHint, not in probe_allowlist), and server "
                f"{self.config.name!r} is shared with no reset_tool: prove never sends it a write"
            )
            return CallResult(ok=False, data=None, text=why, error_code="not_isolated", error=why)
        return self.connection(s).call(name, arguments, None)

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
        return ProcessIsolation(env, spares=2 if fast else 0, reuse=reuse_wanted())
    return SharedIsolation(env)
