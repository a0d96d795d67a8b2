"""The environment client: one synchronous interface over built-in and third-party MCP servers.

``Environment(config)`` connects once (in-process, stdio subprocess or streamable HTTP) and hands
out :class:`Session` objects. With ``isolation="meta"`` (built-in servers) every session is a
separate world on the same connection, named in the request ``_meta``; with
``isolation="process"`` every session gets its own server process, temporary working directory
and environment, so servers we do not control cannot leak state between sessions.

The pipeline, the trainer and Dagster assets call tools from plain synchronous code. An in-process
server's connection lives on an event loop that the calling thread drives itself, one
``run_until_complete`` per request (:class:`InlineLoop`): a loop in a thread of its own costs two
thread hand-offs per tool call, a quarter to two fifths of a build's time in back-to-back runs
(``bench/OPTIMISATIONS.md``, row 17). Connections that do I/O (stdio, HTTP) keep a background event
loop (an anyio blocking portal), so their readers run between calls.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any, TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, StdioServerParameters

from pipeline.config import ServerConfig
from pipeline.records import CallResult, ToolSpec, stable_hash
# the session contract as the kit defines it: session and seed in ``_meta``; on kit servers a reset and
# the ids of closed sessions ride on the next call's ``_meta`` (no extra round trip)
from servers.kit import ADMIN_PREFIX, CLOSE_META_KEY, RESET_META_KEY, SEED_META_KEY, SESSION_META_KEY

logging.getLogger("mcp").setLevel(logging.ERROR)
logging.getLogger("client").setLevel(logging.ERROR)  # mcp.client.session logs as "client"

ADMIN_TOOLS = ("reset", "state_hash", "state", "close")

_CODE_RE = re.compile(r"^(?:Error executing tool [^:]+: )?([a-z][a-z_]+): (.*)$", re.S)


# TEMPORARY (branch kitperf): the clocks moved to bench/clocks.py; "envsess" replaces this import with a
# public call-observer hook on the environment, through which bench installs CallClock.
from bench.clocks import CallClock  # noqa: E402


class _Closing(Exception):
    """Raised into the portal on close so that leftover tasks are cancelled."""


T = TypeVar("T")


class InlineLoop:
    """An event loop driven by whichever thread makes the request: no thread hand-off per call.

    The interface is the part of anyio's ``BlockingPortal`` the client uses (``call`` and
    ``wrap_async_context_manager``). Each ``call`` runs the loop until that coroutine is done; between
    calls the loop is parked, which suits in-process connections (nothing of theirs runs between
    requests). Calls from several threads are serialised. A thread that is already running an event
    loop of its own (a notebook, an async application) cannot run a second one, so its calls are driven
    from a helper thread instead, at the cost of the hand-off this class otherwise saves.
    """

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._lock = threading.RLock()
        self._helper: ThreadPoolExecutor | None = None

    def run(self, awaitable: Awaitable[T]) -> T:
        with self._lock:
            if self._loop.is_closed():
                if asyncio.iscoroutine(awaitable):
                    awaitable.close()  # never to be awaited
                raise RuntimeError("the environment's event loop is closed")
            if asyncio._get_running_loop() is None:  # the usual case: no loop running in this thread
                return self._until_done(awaitable)
            if self._helper is None:
                self._helper = ThreadPoolExecutor(1, thread_name_prefix="prove-env-loop")
            return self._helper.submit(self._until_done, awaitable).result()

    def _until_done(self, awaitable: Awaitable[T]) -> T:
        """``loop.run_until_complete(awaitable)``, less one turn of the loop per call: the task stops
        the loop itself as it finishes, where ``run_until_complete`` stops it from a done-callback
        that needs a turn of its own (about 3 of a call's 200 µs; ``bench/OPTIMISATIONS.md``)."""
        loop = self._loop

        async def until_done() -> T:
            try:
                return await awaitable
            finally:
                loop.stop()

        task = loop.create_task(until_done())
        loop.run_forever()
        if not task.done():
            raise RuntimeError("the environment's event loop stopped before the call completed")
        return task.result()

    def call(self, func: Callable[..., Awaitable[T]], *args: Any) -> T:
        return self.run(func(*args))

    def wrap_async_context_manager(self, cm: AbstractAsyncContextManager[T]) -> AbstractContextManager[T]:
        return _InlineContext(self, cm)

    def close(self) -> None:
        """Cancel what is left on the loop (a hung server's tasks) and close it."""
        with self._lock:
            if self._loop.is_closed():
                return
            try:
                pending = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
                for t in pending:
                    t.cancel()
                if pending:
                    self.run(asyncio.gather(*pending, return_exceptions=True))
                self.run(self._loop.shutdown_asyncgens())
            finally:
                self._loop.close()
                if self._helper is not None:
                    self._helper.shutdown(wait=False)
                    self._helper = None


class _InlineContext(AbstractContextManager):
    """An async context manager held open by a task of its own on an :class:`InlineLoop`
    (entered and exited in the same task, as anyio's task groups and cancel scopes require)."""

    def __init__(self, loop: InlineLoop, cm: AbstractAsyncContextManager[Any]):
        self._runner, self._cm = loop, cm
        self._task: asyncio.Task[Any] | None = None
        self._leave: asyncio.Future[Any] | None = None

    def __enter__(self) -> Any:
        aloop = self._runner._loop
        entered: asyncio.Future[Any] = aloop.create_future()
        self._leave = aloop.create_future()
        leave = self._leave

        async def hold() -> Any:
            value = await self._cm.__aenter__()
            entered.set_result(value)
            exc_info = await leave
            return await self._cm.__aexit__(*exc_info)

        task = self._task = aloop.create_task(hold())

        async def until_entered() -> Any:
            await asyncio.wait({task, entered}, return_when=asyncio.FIRST_COMPLETED)
            return entered.result() if entered.done() else task.result()

        return self._runner.run(until_entered())

    def __exit__(self, *exc_info: Any) -> bool | None:
        if self._task is None or self._leave is None:
            return None
        task, self._task = self._task, None
        if not task.done():
            self._leave.set_result(exc_info)
        return self._runner.run(task)


class EnvironmentError_(RuntimeError):
    """The server could not be reached, crashed or hung (not a tool error)."""


def classify_error(text: str) -> tuple[str, str]:
    """(reason code, message) of a tool error result's text."""
    t = text.strip()
    if t.startswith("Unknown tool:"):
        return "unknown_tool", t
    if "validation error" in t:
        m = re.search(r"validation error for \S+\n(.*)", t, re.S)
        detail = m.group(1) if m else t
        detail = re.sub(r"\n\s+For further information.*", "", detail)
        return "invalid_arguments", " ".join(detail.split())
    m = _CODE_RE.match(t)
    if m and m.group(1) in {"not_found", "invalid_argument", "state_conflict", "permission_denied", "internal_error", "tool_error"}:
        return m.group(1), m.group(2)
    return "tool_error", t


def _result_to_call(raw: Any) -> CallResult:
    text = "\n".join(getattr(c, "text", "") for c in (raw.content or []) if getattr(c, "type", "") == "text")
    if raw.is_error:
        code, msg = classify_error(text)
        return CallResult(ok=False, data=None, text=text, error_code=code, error=msg)
    data = raw.structured_content
    if data is None:
        try:
            data = json.loads(text) if text else None
        except (ValueError, TypeError):
            data = text
    return CallResult(ok=True, data=data, text=text)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 20.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise EnvironmentError_(f"server process exited with code {proc.returncode} before listening on port {port}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise EnvironmentError_(f"server did not listen on 127.0.0.1:{port} within {timeout:.0f}s")


class _Connection:
    """One MCP client connection living on the portal's event loop (plus the process it may own)."""

    def __init__(self, portal: BlockingPortal | InlineLoop, config: ServerConfig, workdir: str | None = None):
        self.portal = portal
        self.config = config
        self.proc: subprocess.Popen | None = None
        self.workdir = workdir
        target = self._target()
        self._cm: AbstractContextManager[Client] = portal.wrap_async_context_manager(
            Client(target, read_timeout_seconds=config.timeout_s, raise_exceptions=False)
        )
        try:
            self.client: Client = self._cm.__enter__()
        except BaseException as exc:
            self._stop_proc()
            raise EnvironmentError_(f"could not connect to server {config.name!r}: {type(exc).__name__}: {exc}") from exc
        self._trusted = config.kind == "builtin"
        if self._trusted:
            self.list_tools()  # registers every tool as trusted (below) before the first call
        else:
            self._known_admin_tools([])

    def _known_admin_tools(self, listed: list[Any]) -> None:
        """Tell the client session which results need no client-side output-schema check.

        * The hidden admin tools: the mcp client re-lists every tool before validating the result
          of a tool it has not seen listed, and admin tools are never listed, so without this every
          state-hash call would cost a full ``tools/list`` round trip as well.
        * Every tool of a built-in server: the kit's ``MCPServer`` already builds the structured
          result from the tool's pydantic return type (the conformance suite checks results against
          the schemas), and re-validating it with jsonschema on the client is most of a call's cost.
          Third-party servers keep the client's validation."""
        schemas = getattr(getattr(self.client, "session", None), "_tool_output_schemas", None)
        if isinstance(schemas, dict):
            for n in ADMIN_TOOLS:
                schemas.setdefault(ADMIN_PREFIX + n, None)
            if self._trusted:
                for t in listed:
                    schemas[t.name] = None

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()}
        for k, v in self.config.resolved_env().items():
            env[k] = v
        return env

    def _target(self) -> Any:
        c = self.config
        if c.kind == "builtin" and c.transport == "inprocess":
            from servers.registry import build  # the in-process transport: still spoken through MCP

            return build(c.builtin_name)
        if c.kind == "builtin" and c.transport == "stdio":
            return StdioServerParameters(command=sys.executable, args=["-m", "servers", c.builtin_name], env=self._env(), cwd=self.workdir)
        if c.kind == "stdio":
            return StdioServerParameters(command=c.command, args=list(c.args), env=self._env(), cwd=self.workdir or c.cwd)
        if c.kind == "builtin" and c.transport == "http":
            port = free_port()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "servers", c.builtin_name, "--transport", "http", "--port", str(port)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self._env(),
            )
            wait_for_port(port, proc=self.proc)
            return f"http://127.0.0.1:{port}/mcp"
        if c.kind == "http":
            if c.headers:
                import httpx

                from mcp.client.streamable_http import streamable_http_client

                return streamable_http_client(c.url, http_client=httpx.AsyncClient(headers=c.resolved_headers(), timeout=c.timeout_s))
            return c.url
        raise ValueError(f"server {c.name!r}: unsupported kind/transport {c.kind}/{c.transport}")

    def call(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallResult:
        t0 = CallClock.start()
        try:
            raw = self.portal.call(lambda: self.client.call_tool(name, arguments, meta=meta))
        except Exception as exc:  # transport failure, timeout, crashed process
            return CallResult(ok=False, data=None, text=str(exc), error_code="server_error",
                              error=f"the server failed during {name}: {type(exc).__name__}: {exc}")
        finally:
            CallClock.stop(t0)
        return _result_to_call(raw)

    def list_tools(self) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        while True:
            res = self.portal.call(lambda: self.client.list_tools(cursor=cursor))
            tools.extend(res.tools)
            cursor = getattr(res, "next_cursor", None)
            if not cursor:
                self._known_admin_tools(tools)  # a listing drops the names it did not list
                return tools

    def _stop_proc(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def close(self) -> None:
        try:
            self._cm.__exit__(None, None, None)
        except BaseException:  # a crashed server must not break shutdown
            pass
        finally:
            self._stop_proc()


class Session:
    """One isolated world: call tools, reset to the seed, read the state hash, close.

    On built-in (kit) servers with ``meta`` isolation, session bookkeeping rides on the next
    request's ``_meta`` instead of costing round trips of its own: a reset is sent as
    ``prove/reset`` with the next call, a close as ``prove/close`` with the next call of any
    session of the environment, and a reset of a session that has not called anything since it
    was opened or last reset is skipped (its world is still the seeded one).
    """

    def __init__(self, env: Environment, seed: int):
        self.env = env
        self.seed = seed
        self.id = env._new_session_id()
        self._own: _Connection | None = None
        self._tmp: str | None = None
        self._touched = False  # the server has a world for this session
        self._dirty = False  # a tool was called since the session was opened or last reset
        self._reset_pending = False
        self._piggyback = env.config.isolation == "meta" and env.config.kind == "builtin"
        if env.config.isolation == "process":
            self._tmp = tempfile.mkdtemp(prefix=f"prove-{env.config.name}-")
            self._own = _Connection(env.portal, env.config, workdir=self._tmp)
        self.calls = 0
        if env.config.isolation == "none" and env.config.reset_tool:
            self.reset()  # a shared world: start every session from the server's reset state

    @property
    def _conn(self) -> _Connection:
        return self._own if self._own is not None else self.env.conn

    @property
    def _meta(self) -> dict[str, Any] | None:
        if self.env.config.isolation == "meta":
            return {SESSION_META_KEY: self.id, SEED_META_KEY: self.seed}
        return None

    def _send(self, name: str, arguments: dict[str, Any]) -> CallResult:
        """One request on this session's connection, carrying any pending reset and closes."""
        meta = self._meta
        if meta is not None:
            self._touched = True
            if self._piggyback:
                if self._reset_pending:
                    meta[RESET_META_KEY] = True
                    self._reset_pending = False
                closes = self.env._pending_close
                if closes:
                    self.env._pending_close = []
                    meta[CLOSE_META_KEY] = closes
        return self._conn.call(name, arguments, meta)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> CallResult:
        self.calls += 1
        if not isinstance(arguments, dict):
            return CallResult(ok=False, data=None, text="", error_code="invalid_arguments",
                              error=f"arguments for {name} must be a JSON object, got {type(arguments).__name__}")
        self._dirty = True
        return self._send(name, arguments)

    def reset(self) -> None:
        if self.env.config.isolation == "meta":
            if not self._dirty:
                return  # nothing ran since the session was opened or last reset: it is at its seed
            self._dirty = False
            if self._piggyback:
                self._reset_pending = True  # applied by the server before this session's next request
                return
            r = self._send(ADMIN_PREFIX + "reset", {})
            if not r.ok:
                raise EnvironmentError_(f"reset failed on {self.env.config.name}: {r.error}")
        elif self.env.config.isolation == "process":
            if not self._dirty and self._own is not None:
                return  # its own fresh process has run nothing since it started: it is at its seed
            self._dirty = False
            if self._own is not None:
                self._own.close()
            if self._tmp:
                shutil.rmtree(self._tmp, ignore_errors=True)
                os.makedirs(self._tmp, exist_ok=True)
            self._own = _Connection(self.env.portal, self.env.config, workdir=self._tmp)
        elif self.env.config.reset_tool:
            r = self._conn.call(self.env.config.reset_tool, {}, None)
            if not r.ok:
                raise EnvironmentError_(f"reset tool {self.env.config.reset_tool} failed: {r.error}")

    def state_hash(self) -> str | None:
        """The hash of this session's state, where the server exposes one."""
        if self.env.config.isolation == "meta":
            r = self._send(ADMIN_PREFIX + "state_hash", {})
            return r.data.get("state_hash") if r.ok and isinstance(r.data, dict) else None
        if self.env.config.state_tool:
            r = self._conn.call(self.env.config.state_tool, {}, None)
            if r.ok:
                return stable_hash(r.data, 64)
        return None

    def state(self) -> dict[str, Any] | None:
        if self.env.config.isolation == "meta":
            r = self._send(ADMIN_PREFIX + "state", {})
            return r.data.get("state") if r.ok and isinstance(r.data, dict) else None
        return None

    def close(self) -> None:
        if self.env.config.isolation == "none" and self.env.config.reset_tool:
            try:
                self.reset()  # leave nothing of this session behind
            except Exception:
                pass
        if self.env.config.isolation == "meta" and self._touched:
            self._touched = False
            if self._piggyback:
                self.env._pending_close.append(self.id)  # dropped with the environment's next request
            else:
                try:
                    self._send(ADMIN_PREFIX + "close", {})
                except Exception:
                    pass
        if self._own is not None:
            self._own.close()
            self._own = None
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Environment:
    """A connected server. Use as a context manager; sessions are cheap with meta isolation."""

    def __init__(self, config: ServerConfig | str):
        if isinstance(config, str):
            config = ServerConfig.for_builtin(config)
        self.config = config
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self.portal: BlockingPortal | InlineLoop
        if config.kind == "builtin" and config.transport == "inprocess":
            self.portal = InlineLoop()  # nothing runs between calls: the caller's thread drives the loop
        else:
            self._portal_cm = start_blocking_portal()  # stdio/HTTP readers run between calls
            self.portal = self._portal_cm.__enter__()
        self._conn: _Connection | None = None
        self._tools: list[ToolSpec] | None = None
        self._pending_close: list[str] = []  # closed kit sessions, dropped with the next request
        # session ids: a random prefix per environment (a shared HTTP server tells the clients' sessions
        # apart) and a counter (a uuid4 per session costs a system call for randomness every time)
        self._id_prefix = uuid.uuid4().hex[:10]
        self._id_counter = itertools.count(1)

    def _new_session_id(self) -> str:
        return f"{self._id_prefix}{next(self._id_counter):06x}"

    @property
    def conn(self) -> _Connection:
        if self._conn is None:
            workdir = None
            if self.config.isolation == "process":
                workdir = tempfile.mkdtemp(prefix=f"prove-{self.config.name}-list-")
            self._conn = _Connection(self.portal, self.config, workdir=workdir)
        return self._conn

    @property
    def name(self) -> str:
        return self.config.name

    def tools(self) -> list[ToolSpec]:
        """The user-visible tools (admin tools excluded), as records."""
        if self._tools is None:
            raw = self.conn.list_tools()
            self._tools = [ToolSpec.from_mcp(t, self.config.name) for t in raw if not t.name.startswith(ADMIN_PREFIX)]
        return self._tools

    def session(self, seed: int = 0) -> Session:
        return Session(self, seed)

    def close(self) -> None:
        if self._conn is not None:
            wd = self._conn.workdir
            self._conn.close()
            self._conn = None
            if wd and self.config.isolation == "process":
                shutil.rmtree(wd, ignore_errors=True)
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
                self._portal_cm = None  # type: ignore[assignment]

    def __enter__(self) -> Environment:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
