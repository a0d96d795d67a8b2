"""One MCP client connection, living on an event loop driven from synchronous code, and its results.

Connections that do I/O (stdio, HTTP) keep a background event loop (an anyio blocking portal), so
their readers run between calls; in-process connections are driven from the calling thread where
the fast paths are on (:class:`~pipeline.env.fast_client.InlineLoop`), and reach their server through
:class:`~pipeline.env.fast_client.DirectClient` (one ``ServerRunner`` per connection).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from anyio.from_thread import BlockingPortal
from mcp import Client

from pipeline.core.config import ServerConfig
from pipeline.core.records import CallResult
from pipeline.env.fast_client import DirectClient, InlineLoop, open_client, send_trusted
from pipeline.env.transport import EnvironmentError_, Transport, describe_error
from pipeline.env.workdir import alias_workdir, unalias_workdir

logging.getLogger("mcp").setLevel(logging.ERROR)
logging.getLogger("client").setLevel(logging.ERROR)  # mcp.client.session logs as "client"

_CODE_RE = re.compile(r"^(?:Error executing tool [^:]+: )?([a-z][a-z_]+): (.*)$", re.S)
_CODES = {"not_found", "invalid_argument", "state_conflict", "permission_denied", "internal_error", "tool_error"}

# Called after every ``tools/call`` round trip with (server, tool, seconds). Empty by default (nothing
# is timed); benchmarks add their clocks here (``bench/clocks.py``).
CALL_OBSERVERS: list[Callable[[str, str, float], None]] = []


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
    if m and m.group(1) in _CODES:
        return m.group(1), m.group(2)
    return "tool_error", t


# an error a server reports in a normal result's text: "Error: ...", "Database error: ...", "ValueError: ...",
# "Error executing tool ...", a Python traceback (the first line only is looked at)
_TEXT_ERROR_RE = re.compile(
    r"^(?:traceback \(most recent call last\)|error executing\b|(?:[a-z][\w.]*[ .]){0,2}?\w*(?:error|exception)\s*:)",
    re.I,
)
_ERROR_KEYS = ("error", "message", "detail", "details", "reason")


def _error_text(record: dict[str, Any]) -> str:
    for key in _ERROR_KEYS:
        value = record.get(key)
        if isinstance(value, dict):
            value = value.get("message") or json.dumps(value, sort_keys=True)
        if value:
            return str(value)
    return json.dumps(record, sort_keys=True, default=str)


def reported_error(data: Any, text: str) -> str | None:
    """The error a server reports inside a normal result (no ``isError``), or None when the result is no error.

    A JSON object saying it failed (``{"success": false, "error": ...}``, ``"ok": false``, ``"status": "error"``)
    or holding nothing but an error (``{"error": "..."}``); a text whose first line says it is an error
    (``Database error: near "SELEC": syntax error``, ``Error: ...``, a Python traceback). Every stage reads a
    call's outcome from :func:`result_to_call`, so such a result is a failure in the probe, the graph, the
    simulation, replay and the reward alike. A ``-> str`` tool's structured output (``{"result": "Error: ..."}``)
    is judged by its text."""
    if isinstance(data, dict) and len(data) == 1 and isinstance(data.get("result"), str):
        data = data["result"]
    if isinstance(data, dict):
        failed = (
            data.get("success") is False
            or data.get("ok") is False
            or str(data.get("status", "")).lower() in ("error", "failed", "failure")
        )
        only_error = bool(data.get("error")) and set(data) <= {"error", "code", *_ERROR_KEYS}
        return _error_text(data) if failed or only_error else None
    if isinstance(data, str):
        first = data.strip().split("\n", 1)[0]
        if _TEXT_ERROR_RE.match(first):
            return data.strip()
    return None


def result_to_call(raw: Any) -> CallResult:
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
    said = reported_error(data, text)
    if said is not None:  # an error reported as a normal result is an error
        code, msg = classify_error(said)
        return CallResult(ok=False, data=None, text=text, error_code=code, error=msg)
    return CallResult(ok=True, data=data, text=text)


class Connection:
    """One MCP client connection on ``portal`` (plus the process its transport may own).

    ``trusted``: the calls it names (or all of them, when ``True``) skip the client's output-schema
    re-check (:func:`~pipeline.env.fast_client.send_trusted`); ``None`` keeps the plain SDK path. ``direct``: an
    in-process server is reached on the fast path's :class:`~pipeline.env.fast_client.DirectClient` (other
    transports ignore it)."""

    def __init__(
        self,
        portal: BlockingPortal | InlineLoop,
        config: ServerConfig,
        transport: Transport,
        trusted: Callable[[str], bool] | None = None,
        direct: bool = False,
    ):
        self.portal, self.config, self.transport = portal, config, transport
        self._trusted = trusted
        # a stdio server that has not answered the handshake within its timeout is stopped then, so
        # the failure is reported at the timeout (not after mcp's shutdown grace periods)
        watchdog = threading.Timer(config.start_timeout, transport.kill_on_timeout)
        watchdog.daemon = True
        try:
            target = transport.target()
            self._cm: AbstractContextManager[Client | DirectClient] = portal.wrap_async_context_manager(
                open_client(target, config.start_timeout, direct)
            )
            watchdog.start()
            try:
                self.client: Client | DirectClient = self._cm.__enter__()
            finally:
                watchdog.cancel()
        except BaseException as exc:
            why = transport.why_failed(exc)
            transport.close()
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise EnvironmentError_(f"could not start or connect to server {config.name!r}: {why}") from exc

    @property
    def workdir(self) -> str | None:
        return self.transport.workdir

    def call(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallResult:
        return self.exchange(name, arguments, meta)[0]

    def exchange(
        self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None
    ) -> tuple[CallResult, dict[str, Any]]:
        """A ``tools/call``: its result, and the result's ``_meta`` (empty when it has none or the call failed)."""
        t0 = time.perf_counter() if CALL_OBSERVERS else 0.0
        workdir = self.workdir
        if workdir:  # the session's directory, named by its alias in what was recorded
            arguments = unalias_workdir(arguments, workdir)
        try:
            if self._trusted is not None and self._trusted(name):
                raw = self.portal.call(send_trusted, self.client, name, arguments, meta, self.config.timeout_s)
            else:
                raw = self.portal.call(
                    lambda: self.client.call_tool(
                        name, arguments, read_timeout_seconds=self.config.timeout_s, meta=meta
                    )
                )
        except Exception as exc:  # transport failure, timeout, crashed process
            why = self.transport.why_failed(exc)
            return CallResult(
                ok=False,
                data=None,
                text=why,
                error_code="server_error",
                error=f"the server failed during {name}: {why}",
            ), {}
        finally:
            if t0:
                dt = time.perf_counter() - t0
                for observe in CALL_OBSERVERS:
                    observe(self.config.name, name, dt)
        r = result_to_call(raw)
        if workdir:  # a result names the session's directory by its alias: the same in every session
            r = CallResult(
                ok=r.ok,
                data=alias_workdir(r.data, workdir),
                text=alias_workdir(r.text, workdir),
                error_code=r.error_code,
                error=alias_workdir(r.error, workdir),
            )
        return r, (raw.meta or {})

    def list_tools(self) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        while True:
            res = self.portal.call(lambda: self.client.list_tools(cursor=cursor))
            tools.extend(res.tools)
            cursor = getattr(res, "next_cursor", None)
            if not cursor:
                return tools

    def close(self) -> None:
        try:
            self._cm.__exit__(None, None, None)
        except BaseException:  # a crashed server must not break shutdown
            pass
        finally:
            self.transport.close()


__all__ = [
    "CALL_OBSERVERS",
    "Connection",
    "EnvironmentError_",
    "classify_error",
    "describe_error",
    "reported_error",
    "result_to_call",
]
