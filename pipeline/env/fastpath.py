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
  each admin call. Third-party servers always go through ``Client.call_tool``.
* :class:`Piggyback` (row 2): on kit servers a reset and the ids of closed sessions ride on the next
  request's ``_meta`` (``prove/reset``, ``prove/close``) instead of costing round trips of their own.
* :class:`WarmSpares` (row 39): under process isolation, the next sessions' server processes are
  started in the background (each in its own fresh copy of the template) while the current one
  works, so opening or resetting a session takes a process that has already started.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any, TypeVar

from mcp import Client
from mcp.types import CallToolRequest, CallToolRequestParams, CallToolResult

try:  # anyio asks sniffio which async library runs, where sniffio is installed (it comes with openai)
    import sniffio
except ImportError:  # pragma: no cover - anyio then asks asyncio directly
    sniffio = None  # type: ignore[assignment]

FAST_PATHS_ENV = "PROVE_FAST_PATHS"

T = TypeVar("T")


def fast_paths_wanted() -> bool:
    """The switch: ``PROVE_FAST_PATHS=0`` (or ``false``/``no``/``off``) gives the plain SDK path."""
    return os.environ.get(FAST_PATHS_ENV, "1").strip().lower() not in {"0", "false", "no", "off"}


async def send_trusted(client: Client, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None,
                       timeout_s: float | None = None) -> CallToolResult:
    """A ``tools/call`` whose result is typed and checked against the protocol, not re-validated
    against the tool's output schema (results of kit servers only; see the module docstring).
    ``timeout_s``: how long to wait for the result (unset: the client's read timeout)."""
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
    """Server processes started ahead of need, ``depth`` at a time, on helper threads.

    ``start`` makes one (a blocking call); :meth:`take` hands out the oldest spare (waiting for it if it
    is still starting) and starts a replacement. A spare that failed to start is started again on the
    caller's thread, so the caller sees the failure as it would without spares; ``stop`` ends one.
    ``lazy``: the first :meth:`take` starts no spares (an environment that needs one process does not
    pay for three)."""

    def __init__(self, start: Callable[[], T], stop: Callable[[T], None], depth: int = 2, lazy: bool = False):
        self._start, self._stop, self._depth = start, stop, depth
        self._pool = ThreadPoolExecutor(depth, thread_name_prefix="prove-env-spare")
        self._spares: list[Any] = []
        self._lock = threading.Lock()
        self._closed = False
        self._takes = 0
        self._lazy = lazy  # no spares until a second process is taken (most environments need one)

    def _refill(self) -> None:
        while len(self._spares) < self._depth:
            self._spares.append(self._pool.submit(self._start))

    def take(self) -> T:
        with self._lock:
            if self._closed:
                raise RuntimeError("the environment is closed")
            future = self._spares.pop(0) if self._spares else None
            self._takes += 1
            if self._takes > 1 or not self._lazy:
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
