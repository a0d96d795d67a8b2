"""``Environment`` (a connected server) and ``Session`` (one isolated world on it)."""

from __future__ import annotations

import itertools
import json
import time
import uuid
from contextlib import AbstractContextManager
from functools import cached_property
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal

from pipeline.core.config import ServerConfig, SetupCall
from pipeline.core.domain import Domain
from pipeline.core.records import CallResult, ToolSpec
from pipeline.env.connection import Connection
from pipeline.env.fast_client import InlineLoop, fast_paths_wanted
from pipeline.env.isolation import Isolation, isolation_for
from pipeline.env.reuse import setup_key
from pipeline.env.transport import EnvironmentError_, ServerLog, Transport
from pipeline.env.workdir import SESSION_DIR, needs_workdir, new_workdir, remove_workdir, session_args
from servers.kit.keys import ADMIN_PREFIX
from servers.registry import entry


class ServerBudgetExceeded(EnvironmentError_):
    """The server's ``time_budget_s`` is spent: the stages working on it stop (not one rejected conversation)."""


class _Closing(Exception):
    """Raised into the portal on close so that leftover tasks are cancelled."""


class Session:
    """One isolated world: call tools, reset to the seed, read the state hash, close.

    How the world is kept apart and reset is the environment's isolation strategy
    (:mod:`pipeline.env.isolation`). The server's ``setup`` calls run as the session opens and
    after every reset that brought it back to its seed."""

    def __init__(self, env: Environment, seed: int, setup: list[SetupCall] | None = None):
        self.env = env
        self.seed = seed
        self.setup = env.config.setup if setup is None else setup
        self.id = env.new_session_id()
        self.own: Connection | None = None  # the session's own connection (process isolation)
        self.touched = False  # the server has a world for this session
        self.dirty = False  # a tool was called since the session was opened or last reset
        self._hash_after: str | None = None  # the state hash that came back with the last call (``hash_after``)
        self.wrote = False  # a call since it was settled may have changed its world (process isolation)
        self.print: str | None = None  # its working directory's digest when it was settled (process isolation)
        self.calls = 0
        self._iso: Isolation = env.isolation
        try:
            if not self._iso.open(self):
                self._run_setup()
            self._iso.settled(self)
        except BaseException:
            self.close()
            raise

    @property
    def isolated(self) -> bool:
        """Its writes are its own and a reset undoes them. ``False`` on a shared server without a reset
        tool: there only tools known to read are called (any other call is refused as ``not_isolated``)."""
        return self._iso.isolated

    def _run_setup(self) -> None:
        cfg = self.env.config
        for call in self.setup:
            r = self._iso.send(self, call.tool, cfg.resolved_setup_arguments(call), setup=True)
            if not r.ok:
                said = f"{r.error_code}: {r.error}"
                for name, value in cfg.resolved_secrets().items() if cfg.secrets else ():
                    if value:
                        said = said.replace(value, "${secret:" + name + "}")  # a server echoing a password
                raise EnvironmentError_(f"setup call {call.tool} of server {cfg.name!r} failed: {said}")

    @property
    def workdir(self) -> str | None:
        """The working directory of the session's own server process (process isolation), if any."""
        return self.own.workdir if self.own is not None else None

    def call(self, name: str, arguments: dict[str, Any] | None = None, hash_after: bool = False) -> CallResult:
        """Call a tool. ``hash_after``: the next :meth:`state_hash` will be asked for (the last call of a
        conversation or a replay); on kit servers it rides back with this call's result, no round trip of its own."""
        self.env.check_budget()
        self.calls += 1
        self._hash_after = None
        if not isinstance(arguments, dict):
            return CallResult(
                ok=False,
                data=None,
                text="",
                error_code="invalid_arguments",
                error=f"arguments for {name} must be a JSON object, got {type(arguments).__name__}",
            )
        self.dirty = True
        if hash_after:
            r, self._hash_after = self._iso.send_and_hash(self, name, arguments)
            return r
        return self._iso.send(self, name, arguments)

    def call_and_hash(self, name: str, arguments: dict[str, Any]) -> tuple[CallResult, str | None]:
        """:meth:`call`, then :meth:`state_hash`."""
        return self.call(name, arguments, hash_after=True), self.state_hash()

    def call_at_seed(self, name: str, arguments: dict[str, Any]) -> CallResult:
        """The result of a call on the session's seed state (reset, then call). Where a reset starts a
        process, the result of the same call seen on the seed state before is answered from memory and
        nothing is run; the session is then wherever it was, so reset it before relying on its state."""
        memo = self._iso.seed_results
        key = (name, json.dumps(arguments, sort_keys=True, default=str), setup_key(self.setup))
        if memo is not None and key in memo:
            return memo[key]
        self.reset()
        r = self.call(name, arguments)
        if memo is not None and r.error_code != "server_error":
            memo[key] = r
        return r

    def reset(self) -> None:
        self._hash_after = None
        if self._iso.reset(self):
            if self.setup:
                self._run_setup()
            self._iso.settled(self)

    def state_hash(self) -> str | None:
        """The hash of this session's state, where the server exposes one."""
        if self._hash_after is not None:
            return self._hash_after
        return self._iso.state_hash(self)

    def state(self) -> dict[str, Any] | None:
        return self._iso.state(self)

    def close(self) -> None:
        self._iso.close(self)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Environment:
    """A connected server. Use as a context manager; sessions are cheap with meta isolation.

    ``log_dir``: where the server's stderr goes (``<log_dir>/<server>.log``; a build passes
    ``<data dir>/logs/servers``). ``PROVE_FAST_PATHS=0`` gives the plain SDK path
    (:mod:`pipeline.env.fast_client`)."""

    def __init__(self, config: ServerConfig | str, log_dir: str | Path | None = None):
        if isinstance(config, str):
            config = ServerConfig.for_builtin(config)
        self.config = config
        self.fast = fast_paths_wanted()
        self.log = ServerLog(log_dir, config.name)
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self.portal: BlockingPortal | InlineLoop
        if self.fast and config.kind == "builtin" and config.transport == "inprocess":
            self.portal = InlineLoop()  # nothing runs between calls: the caller's thread drives the loop
        else:
            self._portal_cm = start_blocking_portal()  # stdio/HTTP readers run between calls
            self.portal = self._portal_cm.__enter__()
        self._conn: Connection | None = None
        self._tools: list[ToolSpec] | None = None
        self._reads: frozenset[str] | None = None
        self.isolation = isolation_for(self, self.fast)
        # session ids: a random prefix per environment (a shared HTTP server tells the clients' sessions
        # apart) and a counter (a uuid4 per session costs a system call for randomness every time)
        self._id_prefix = uuid.uuid4().hex[:10]
        self._id_counter = itertools.count(1)
        self.deadline = time.monotonic() + config.time_budget_s

    def check_budget(self) -> None:
        """Raise :class:`ServerBudgetExceeded` once the server's ``time_budget_s`` is spent."""
        if time.monotonic() > self.deadline:
            raise ServerBudgetExceeded(
                f"server {self.config.name!r} used up its time budget of {self.config.time_budget_s:g}s "
                "(time_budget_s in its server config); its remaining work is dropped"
            )

    def new_session_id(self) -> str:
        return f"{self._id_prefix}{next(self._id_counter):06x}"

    def _trusted(self) -> Any:
        """Which calls skip the client's output-schema re-check (fast paths only): every call of a
        kit server, and the hidden admin tools (never listed, so never checkable anyway)."""
        if not self.fast:
            return None
        if self.config.kind == "builtin":
            return lambda name: True
        return lambda name: name.startswith(ADMIN_PREFIX)

    def start_process(self, purpose: str = "") -> Connection:
        """A new connection; for a stdio server, a new process in a fresh copy of its files."""
        c = self.config
        workdir = new_workdir(c, purpose) if needs_workdir(c) else None
        try:
            env = c.resolved_env(session_dir=workdir) if c.kind == "stdio" else None
            args = session_args(c, workdir) if c.kind == "stdio" else None
            transport = Transport(c, self.log, workdir=workdir, env=env, args=args)
            return Connection(self.portal, c, transport, trusted=self._trusted(), direct=self.fast)
        except BaseException:
            remove_workdir(workdir)
            raise

    def stop_process(self, conn: Connection) -> None:
        try:
            conn.close()
        finally:
            remove_workdir(conn.workdir)

    @property
    def conn(self) -> Connection:
        """The environment's shared connection (tool listing; every call unless sessions own processes)."""
        if self._conn is None:
            self._conn = self.start_process("list-" if self.config.isolation == "process" else "")
        return self._conn

    @property
    def name(self) -> str:
        return self.config.name

    @cached_property
    def domain(self) -> Domain | None:
        """The service's words (:mod:`pipeline.core.domain`): its server config's ``domain`` section, else a built-in
        server's own (its package's ``domain.yaml``), else None (the general pool serves)."""
        c = self.config
        if c.domain is not None:
            return c.domain
        return builtin_domain(c.builtin) if c.kind == "builtin" and c.builtin else None

    def tools(self, via: Connection | None = None) -> list[ToolSpec]:
        """The user-visible tools (admin tools excluded), as records; listed once, on ``via`` if given."""
        if self._tools is None:
            raw = via.list_tools() if via is not None else self.isolation.list_tools()
            self._tools = [ToolSpec.from_mcp(t, self.config.name) for t in raw if not t.name.startswith(ADMIN_PREFIX)]
        return self._tools

    def read_only_names(self, via: Connection | None = None) -> frozenset[str]:
        """The tools known to only read: annotated ``readOnlyHint`` and not ``destructiveHint``, or named in
        the server's ``probe_allowlist`` (what the probe calls)."""
        if self._reads is None:
            tools = self.tools(via)
            self._reads = frozenset(t.name for t in tools if t.read_only and not t.destructive) | frozenset(
                self.config.probe_allowlist
            )
        return self._reads

    def session(self, seed: int = 0, setup: list[SetupCall] | list[dict[str, Any]] | None = None) -> Session:
        """A new session on world ``seed``. ``setup``: the set-up calls to run as it opens (by default
        the server config's; a recorded example passes its own)."""
        self.check_budget()
        calls = (
            None if setup is None else [c if isinstance(c, SetupCall) else SetupCall.model_validate(c) for c in setup]
        )
        return Session(self, seed, calls)

    def close(self) -> None:
        self.isolation.shutdown()
        if self._conn is not None:
            conn, self._conn = self._conn, None
            self.stop_process(conn)
        if isinstance(self.portal, InlineLoop):
            self.portal.close()
        if self._portal_cm is not None:
            try:
                # passing an exception makes the portal cancel tasks that a crashed or hung
                # server's connection left behind, instead of waiting for them forever
                self._portal_cm.__exit__(_Closing, _Closing("environment closed"), None)
            except _Closing:
                pass
            finally:
                self._portal_cm = None

    def __enter__(self) -> Environment:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["SESSION_DIR", "Environment", "ServerBudgetExceeded", "Session"]


def builtin_domain(name: str) -> Domain | None:
    """Built-in server ``name``'s own domain texts (its package's ``domain.yaml``), checked, or None without them."""
    texts = entry(name).domain()
    return Domain.model_validate(texts) if texts else None
