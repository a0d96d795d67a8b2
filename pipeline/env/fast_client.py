"""The measured fast paths of the environment client, in one place behind one switch.

The plain path (``PROVE_FAST_PATHS=0``) is the SDK as documented: ``Client.call_tool`` (which
re-validates a result against the tool's output schema), an anyio blocking portal for every
transport, and reset/close sent as admin calls of their own. With the switch on (the default) three
measured shortcuts apply, each through public SDK API only (``bench/OPTIMISATIONS.md`` has the
figures):

* :class:`InlineLoop` (row 17): an in-process connection's event loop is driven by the calling thread,
  one run of the loop per request, instead of a loop in a thread of its own (two thread hand-offs
  per call). Its tasks declare asyncio to sniffio (:func:`declare_asyncio`, row 60), so anyio's many
  "which library runs?" questions per request are answered without a task lookup.
* :func:`send_trusted` (rows 6 and 7): calls of a kit server's tools, and of the hidden admin tools
  of any kit server, are sent with ``ClientSession.send_request`` and typed as ``CallToolResult``,
  skipping the client's jsonschema re-check of the result. The kit builds each structured result
  from the tool's pydantic return type (the conformance suite checks results against the schemas);
  hidden admin tools are never listed, so the client would otherwise re-list every tool before
  each admin call. On an in-process :class:`DirectClient` (row 63) the request goes to its dispatcher as the
  session would send it, and the result is typed without the session's per-version check as well.
  Third-party servers always go through ``Client.call_tool``.
* :class:`Piggyback` (row 2): on kit servers a reset and the ids of closed sessions ride on the next
  request's ``_meta`` (``prove/reset``, ``prove/close``) instead of costing round trips of their own.
* :class:`DirectClient` (row 62): an in-process kit server is reached through mcp's ``ClientSession`` on a
  :class:`RunnerDispatcher` (an implementation of mcp's public ``Dispatcher`` protocol) that hands each request
  to one ``ServerRunner`` kept for the connection, instead of ``mcp.Client``'s in-process pair, which builds a
  new server-side connection for every request and tears it down again, under a timeout scope that a
  synchronous handler cannot honour anyway.
* :class:`WarmSpares` (row 39): under process isolation, the next sessions' server processes are
  started in the background (each in its own fresh copy of the template) while the current one
  works, so opening or resetting a session takes a process that has already started.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, AbstractContextManager, AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
from mcp import Client
from mcp.client.session import ClientSession
from mcp.server import Server
from mcp.server.connection import Connection as ServerConnection
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import ServerRunner
from mcp.shared.dispatcher import CallOptions, OnNotify, OnNotifyIntercept, OnRequest, run_notify_intercept
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.transport_context import TransportContext
from mcp.types import CallToolRequest, CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    PROTOCOL_VERSION_META_KEY,
)
from mcp_types.version import LATEST_MODERN_VERSION
from pydantic import ValidationError
from pydantic_core import to_jsonable_python

try:  # anyio asks sniffio which async library runs, where sniffio is installed (it comes with openai)
    import sniffio
except ImportError:  # pragma: no cover - anyio then asks asyncio directly
    sniffio = None  # type: ignore[assignment]

FAST_PATHS_ENV = "PROVE_FAST_PATHS"

logger = logging.getLogger(__name__)

T = TypeVar("T")


def fast_paths_wanted() -> bool:
    """The switch: ``PROVE_FAST_PATHS=0`` (or ``false``/``no``/``off``) gives the plain SDK path."""
    return os.environ.get(FAST_PATHS_ENV, "1").strip().lower() not in {"0", "false", "no", "off"}


async def send_trusted(
    client: Client | DirectClient,
    name: str,
    arguments: dict[str, Any],
    meta: dict[str, Any] | None,
    timeout_s: float | None = None,
) -> CallToolResult:
    """A ``tools/call`` whose result is typed and checked against the protocol, not re-validated
    against the tool's output schema (results of kit servers only; see the module docstring).
    ``timeout_s``: how long to wait for the result (unset: the client's read timeout; an in-process
    :class:`DirectClient` applies none, see :meth:`DirectClient.send_call`)."""
    if isinstance(client, DirectClient):
        return await client.send_call(name, arguments, meta)
    request = CallToolRequest(params=CallToolRequestParams(name=name, arguments=arguments, _meta=meta))
    return await client.session.send_request(request, CallToolResult, request_read_timeout_seconds=timeout_s)


def declare_asyncio() -> None:
    """Declare to sniffio, for the running task and the tasks it starts, that the async library is asyncio
    (``current_async_library_cvar``, sniffio's public declaration, as ``anyio.run`` makes it; set in the task's
    own context, so nothing outside the task sees it)."""
    if sniffio is not None:
        sniffio.current_async_library_cvar.set("asyncio")


def _loop_running_here() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class InlineLoop:
    """An event loop driven by whichever thread makes the request: no thread hand-off per call.

    The interface is the part of anyio's ``BlockingPortal`` the client uses (``call`` and
    ``wrap_async_context_manager``). Each ``call`` runs the loop until that coroutine is done; between
    calls the loop is parked, which suits in-process connections (nothing of theirs runs between
    requests). Calls from several threads are serialised. A thread that is already running an event
    loop of its own (a notebook, an async application) cannot run a second one, so its calls are driven
    from a helper thread instead, at the cost of the hand-off this class otherwise saves.

    The tasks it runs declare their async library (:func:`declare_asyncio`, row 60): anyio asks which
    library is running for every cancel scope and checkpoint (a dozen per request), and without the
    declaration sniffio finds out by looking up the current task each time.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._lock = threading.RLock()
        self._helper: ThreadPoolExecutor | None = None

    def run(self, awaitable: Awaitable[T]) -> T:
        with self._lock:
            if self.loop.is_closed():
                if asyncio.iscoroutine(awaitable):
                    awaitable.close()  # never to be awaited
                raise RuntimeError("the environment's event loop is closed")
            if not _loop_running_here():  # the usual case: no loop running in this thread
                return self._until_done(awaitable)
            if self._helper is None:
                self._helper = ThreadPoolExecutor(1, thread_name_prefix="prove-env-loop")
            return self._helper.submit(self._until_done, awaitable).result()

    def _until_done(self, awaitable: Awaitable[T]) -> T:
        """``loop.run_until_complete(awaitable)``, less one turn of the loop per call: the task stops
        the loop itself as it finishes, where ``run_until_complete`` stops it from a done-callback
        that needs a turn of its own (about 3 of a call's 200 µs; ``bench/OPTIMISATIONS.md``)."""
        loop = self.loop

        async def until_done() -> T:
            declare_asyncio()
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
            if self.loop.is_closed():
                return
            try:
                pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
                for t in pending:
                    t.cancel()
                if pending:
                    self.run(asyncio.gather(*pending, return_exceptions=True))
                self.run(self.loop.shutdown_asyncgens())
            finally:
                self.loop.close()
                if self._helper is not None:
                    self._helper.shutdown(wait=False)
                    self._helper = None


class _InlineContext(AbstractContextManager):
    """An async context manager held open by a task of its own on an :class:`InlineLoop`
    (entered and exited in the same task, as anyio's task groups and cancel scopes require)."""

    def __init__(self, runner: InlineLoop, cm: AbstractAsyncContextManager[Any]):
        self._runner, self._cm = runner, cm
        self._task: asyncio.Task[Any] | None = None
        self._leave: asyncio.Future[Any] | None = None

    def __enter__(self) -> Any:
        aloop = self._runner.loop
        entered: asyncio.Future[Any] = aloop.create_future()
        self._leave = aloop.create_future()
        leave = self._leave

        async def hold() -> Any:
            declare_asyncio()  # the connection's own tasks, started here, inherit the declaration
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


class WarmSpares:
    """Server processes started ahead of need, on helper threads, as the environment's demand shows itself.

    ``start`` makes one (a blocking call); :meth:`take` hands out the oldest spare (waiting for it if it
    is still starting) and starts a replacement. A spare that failed to start is started again on the
    caller's thread, so the caller sees the failure as it would without spares; ``stop`` ends one.

    Each spare is a process start, and those still waiting when the environment closes are stopped unused, so
    spares follow demand. ``lazy`` (where processes are reused): none until two processes were taken (most
    environments take one to list the tools and one session; the suite's environments that took two stopped two
    spares unused), then one ahead, and ``depth`` ahead once a take had to wait for its spare to finish starting.
    Otherwise ``depth`` ahead from the first take."""

    def __init__(self, start: Callable[[], T], stop: Callable[[T], None], depth: int = 2, lazy: bool = False):
        self._start, self._stop, self._max = start, stop, depth
        self._ahead = 1 if lazy else depth
        self._after = 2 if lazy else 0
        self._pool = ThreadPoolExecutor(depth, thread_name_prefix="prove-env-spare")
        self._spares: list[Any] = []
        self._lock = threading.Lock()
        self._closed = False
        self._takes = 0

    def _refill(self) -> None:
        while len(self._spares) < self._ahead:
            self._spares.append(self._pool.submit(self._start))

    def take(self) -> T:
        with self._lock:
            if self._closed:
                raise RuntimeError("the environment is closed")
            future = self._spares.pop(0) if self._spares else None
            if future is not None and not future.done():
                self._ahead = self._max  # waited on a start: keep more ahead
            self._takes += 1
            if self._takes > self._after:
                self._refill()
        if future is not None:
            try:
                return future.result()
            except Exception:
                pass  # started again below, where the failure is the caller's to see
        return self._start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            spares, self._spares = self._spares, []
        for f in spares:
            f.cancel()
        self._pool.shutdown(wait=True)
        for f in spares:
            if not f.cancelled() and f.exception() is None:
                self._stop(f.result())


class Piggyback:
    """Session bookkeeping that rides on the next request's ``_meta`` (kit servers only).

    A reset is sent as ``prove/reset`` with the session's next call; a closed session's id as
    ``prove/close`` with the next call of any session of the environment. Both are applied by the
    kit before the call itself runs."""

    def __init__(self) -> None:
        self.pending_close: list[str] = []
        self.pending_reset: set[str] = set()

    def stamp(self, session_id: str, meta: dict[str, Any], reset_key: str, close_key: str) -> None:
        if self.pending_reset and session_id in self.pending_reset:
            self.pending_reset.discard(session_id)
            meta[reset_key] = True
        if self.pending_close:
            meta[close_key], self.pending_close = self.pending_close, []


ENVELOPE_KEYS = (PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY)


def low_level_server(server: MCPServer | Server) -> Server:
    """The low-level mcp ``Server`` that answers ``server``'s requests. mcp exposes an ``MCPServer``'s one publicly
    only as the ``app`` of its streamable-HTTP session manager, which ``streamable_http_app()`` makes: an ASGI app
    object and an idle session manager, no socket and no task (0.1-0.2 ms per server)."""
    if isinstance(server, Server):
        return server
    server.streamable_http_app()
    return server.session_manager.app


@dataclass
class _RequestContext:
    """The ``DispatchContext`` of one request on a :class:`RunnerDispatcher`: as mcp's in-process pair gives a
    modern-era request (no server-initiated requests; notifications and progress go back to the client)."""

    transport: TransportContext
    request_id: int | None
    back: RunnerDispatcher
    on_progress: Any = None
    message_metadata: Any = None
    _cancel: anyio.Event | None = field(default=None, repr=False)

    @property
    def can_send_request(self) -> bool:
        return False

    @property
    def cancel_requested(self) -> anyio.Event:
        if self._cancel is None:  # made on first use: a synchronous handler never asks
            self._cancel = anyio.Event()
        return self._cancel

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None) -> None:
        await self.back.deliver_notification(method, params)

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        if self.on_progress is not None:
            try:
                await self.on_progress(progress, total, message)
            except Exception:
                logger.exception("progress callback raised")


class RunnerDispatcher:
    """mcp's ``Dispatcher`` protocol for a client and a server in one process (row 62).

    A request goes straight to one ``ServerRunner`` (mcp's per-connection handler kernel: its middleware,
    request checks and handlers), kept for as long as the client's envelope (protocol version, client info,
    capabilities) stays the same, and so does its server-side ``Connection``. mcp's in-process pair
    (``DirectDispatcher`` with ``modern_on_request``) makes a new ``Connection`` from the envelope for every
    request, closes its exit stack after it under a shielded timeout scope, wraps the request in a timeout
    scope and yields to the event loop once more on the way back; together that was about a third of a small
    call. The request timeout is not applied: a kit tool is synchronous, so nothing could interrupt it before
    it returns. Errors reach the client as they do from mcp's pair built with ``raise_exceptions=False``: an
    ``MCPError`` as it is, arguments that fail validation as ``INVALID_PARAMS``, any other exception as an
    opaque ``INTERNAL_ERROR`` (logged here). Server notifications go to the client session as the pair
    delivers them; the client's own notifications are dropped, as the modern in-process path drops them."""

    def __init__(self, server: Server, lifespan_state: Any) -> None:
        self.server, self.lifespan_state = server, lifespan_state
        self.transport = TransportContext(kind="direct", can_send_request=False)
        self._runner: ServerRunner | None = None
        self.envelope_meta: dict[str, Any] = {}  # the envelope keys of the requests the runner serves
        self._next_id = 0
        self._on_notify: OnNotify | None = None
        self._intercept: OnNotifyIntercept | None = None
        self._closed = anyio.Event()

    async def run(
        self,
        on_request: OnRequest,
        on_notify: OnNotify,
        on_notify_intercept: OnNotifyIntercept | None = None,
        *,
        task_status: Any = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        self._on_notify, self._intercept = on_notify, on_notify_intercept
        task_status.started()
        await self._closed.wait()

    def close(self) -> None:
        self._closed.set()

    def _runner_for(self, params: Mapping[str, Any] | None) -> ServerRunner:
        meta = (params or {}).get("_meta") or {}
        envelope = {k: meta[k] for k in ENVELOPE_KEYS if k in meta}
        if self._runner is None or envelope != self.envelope_meta:
            self.envelope_meta = envelope
            connection = ServerConnection.from_envelope(
                envelope.get(PROTOCOL_VERSION_META_KEY, LATEST_MODERN_VERSION),
                envelope.get(CLIENT_INFO_META_KEY),
                envelope.get(CLIENT_CAPABILITIES_META_KEY),
            )
            self._runner = ServerRunner(self.server, connection, self.lifespan_state)
        return self._runner

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        if self._closed.is_set():  # as mcp's dispatchers answer a request after their side closed
            raise MCPError(code=CONNECTION_CLOSED, message="Connection closed")
        runner = self._runner_for(params)
        self._next_id += 1
        ctx = _RequestContext(self.transport, self._next_id, self, on_progress=(opts or {}).get("on_progress"))
        try:
            return await runner.on_request(ctx, method, params)
        except MCPError:
            raise
        except ValidationError as exc:
            raise MCPError(code=INVALID_PARAMS, message="Invalid request parameters", data="") from exc
        except Exception:
            logger.exception("request handler raised")
            raise MCPError(code=INTERNAL_ERROR, message="Internal server error") from None

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None) -> None:
        return None  # the client's notifications: a modern in-process server receives none

    async def deliver_notification(self, method: str, params: Mapping[str, Any] | None) -> None:
        """A server notification, handed to the client session."""
        if self._on_notify is None or self._closed.is_set() or run_notify_intercept(self._intercept, method, params):
            return
        await self._on_notify(_RequestContext(self.transport, None, self), method, params)


class DirectClient:
    """The part of ``mcp.Client`` a fast-path :class:`~pipeline.env.connection.Connection` uses (``session``,
    ``list_tools``; its calls, all trusted on a kit server, go through :meth:`send_call`), for an in-process
    server on a :class:`RunnerDispatcher`. Entering it enters
    the server's lifespan and negotiates the protocol version with ``ClientSession.discover()``, as
    ``mcp.Client`` does in its default mode."""

    def __init__(self, server: MCPServer | Server, read_timeout_seconds: float | None = None) -> None:
        self.server = low_level_server(server)
        self.read_timeout_seconds = read_timeout_seconds
        self._stack: AsyncExitStack | None = None
        self.session: ClientSession
        self.dispatcher: RunnerDispatcher

    async def __aenter__(self) -> DirectClient:
        async with AsyncExitStack() as stack:
            state = await stack.enter_async_context(self.server.lifespan(self.server))
            dispatcher = self.dispatcher = RunnerDispatcher(self.server, state)
            stack.callback(dispatcher.close)
            self.session = await stack.enter_async_context(
                ClientSession(dispatcher=dispatcher, read_timeout_seconds=self.read_timeout_seconds)
            )
            await self.session.discover()
            self._stack = stack.pop_all()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        stack, self._stack = self._stack, None
        return await stack.__aexit__(*exc_info) if stack is not None else None

    async def send_call(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        """A trusted ``tools/call`` (row 63): the request ``ClientSession.send_request`` would send (the arguments in
        their JSON form, ``_meta`` without ``None`` values and with the session's own envelope, as its discovery
        request carried it) handed to the dispatcher, and the result typed as ``CallToolResult``. The session's
        per-version check of the result (validated, dumped to JSON and dropped) and its request model are left out:
        the result comes from the kit's tools in this process (see :func:`send_trusted`). No timeout applies in
        process. The envelope is there from entering: ``discover()`` carried it."""
        envelope = self.dispatcher.envelope_meta
        params = {
            "_meta": {**to_jsonable_python({k: v for k, v in (meta or {}).items() if v is not None}), **envelope},
            "name": name,
            "arguments": to_jsonable_python(arguments),
        }
        return CallToolResult.model_validate(
            await self.dispatcher.send_raw_request("tools/call", params), by_name=False
        )

    async def list_tools(self, *, cursor: str | None = None) -> ListToolsResult:
        return await self.session.list_tools(params=PaginatedRequestParams(cursor=cursor))


def open_client(target: Any, read_timeout_seconds: float | None, direct: bool) -> AbstractAsyncContextManager[Any]:
    """The client of one connection: a :class:`DirectClient` for an in-process server when ``direct`` (the fast
    paths on), else ``mcp.Client`` (every transport; an in-process server on mcp's own in-process pair)."""
    if direct and isinstance(target, (MCPServer, Server)):
        return DirectClient(target, read_timeout_seconds)
    return Client(target, read_timeout_seconds=read_timeout_seconds, raise_exceptions=False)
