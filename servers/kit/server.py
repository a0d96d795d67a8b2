""":class:`EnvServer`: an ``MCPServer`` whose tools run against the world of the caller's session."""

import functools
import inspect
import os
import random
from collections.abc import Callable
from typing import Any, Generic

from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import BaseModel

from servers.kit.clocks import HandlerClock, ServerTiming
from servers.kit.direct import DirectCalls, direct_calls_wanted
from servers.kit.errors import InternalError
from servers.kit.keys import HIDDEN_META_KEY, TELEMETRY_ENV
from servers.kit.redact import redacting_model, sensitive_parameters
from servers.kit.sessions import SessionBookkeeping, session_of
from servers.kit.toolset import ToolDef, ToolSet
from servers.kit.world import SessionStore, W


def tracing_installed() -> bool:
    """Whether an OpenTelemetry tracer provider is installed (the API's default provider records nothing)."""
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), (trace.ProxyTracerProvider, trace.NoOpTracerProvider))


def telemetry_wanted(telemetry: bool | None = None) -> bool:
    """Keep mcp's per-request OpenTelemetry span? An explicit choice wins, then ``PROVE_SERVER_TELEMETRY``
    (``1``/``0``), then whether a tracer provider is installed when the server is built."""
    if telemetry is not None:
        return telemetry
    env = os.environ.get(TELEMETRY_ENV, "").strip().lower()
    if env in {"1", "true", "yes", "on"}:
        return True
    if env in {"0", "false", "no", "off"}:
        return False
    return tracing_installed()


# --------------------------------------------------------------------------- admin results
class SessionInfo(BaseModel):
    session: str
    seed: int
    state_hash: str | None = None

class SessionState(BaseModel):
    session: str
    seed: int
    state_hash: str
    state: dict[str, Any]

class Closed(BaseModel):
    session: str
    closed: bool


def world_tool(tool: ToolDef, store: "SessionStore[Any]", default_seed: int) -> Callable[..., Any]:
    """What ``MCPServer`` registers for ``tool``: an async function of the tool's arguments that calls the
    tool function with the world of the request's session first."""
    fn, tool_name = tool.fn, tool.name
    sig = tool.public_signature()

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = HandlerClock.start()
        session, seed = session_of(default_seed)
        world = store.get(session, seed)
        try:
            return fn(world, *args, **kwargs)
        except ToolError:
            raise
        except Exception as exc:  # a bug in a handler must still read as a named error
            raise InternalError(f"{tool_name} failed: {type(exc).__name__}: {exc}") from exc
        finally:
            HandlerClock.stop(t0)

    del wrapper.__wrapped__
    wrapper.__signature__ = sig  # type: ignore[attr-defined]
    hints = {p.name: p.annotation for p in sig.parameters.values() if p.annotation is not inspect.Parameter.empty}
    if sig.return_annotation is not inspect.Signature.empty:
        hints["return"] = sig.return_annotation
    wrapper.__annotations__ = hints
    return wrapper


class EnvServer(MCPServer, Generic[W]):
    """An ``MCPServer`` whose tools run against a per-session world.

    ``category`` is the catalogue category; ``tools`` the server's :class:`ToolSet`; ``default_seed`` the seed
    of a session whose request names none (a plain MCP client's world).

    mcp wraps every request in an OpenTelemetry server span. With no tracer provider installed those
    spans record nothing but still cost a few percent of an in-process call, so the middleware is
    dropped unless ``telemetry`` (or, left unset, :func:`telemetry_wanted`) asks for it.
    """

    def __init__(
        self,
        name: str,
        *,
        seeder: Callable[[random.Random, int], W],
        category: str,
        description: str,
        tools: "ToolSet[W] | None" = None,
        default_seed: int = 0,
        telemetry: bool | None = None,
        direct_calls: bool | None = None,
        **kw: Any,
    ):
        kw.setdefault("log_level", "WARNING")
        super().__init__(name, description=description, instructions=description, **kw)
        if not telemetry_wanted(telemetry):  # mcp's documented opt-out: drop it from the middleware list
            low = self._lowlevel_server
            low.middleware = [m for m in low.middleware if not isinstance(m, OpenTelemetryMiddleware)]
        self.category = category
        self.summary = description
        self.default_seed = default_seed
        self.store: SessionStore[W] = SessionStore(name, seeder)
        # closes and resets riding on a request apply before mcp validates it (see SessionBookkeeping)
        # plain calls of kit tools are answered by the kit's own path (DirectCalls), innermost
        self.direct_calls = DirectCalls(self) if direct_calls_wanted(direct_calls) else None
        self._lowlevel_server.middleware.append(SessionBookkeeping(self.store, default_seed, self.direct_calls))
        self._lowlevel_server.middleware.insert(0, ServerTiming())
        self.tool_specs: dict[str, dict[str, Any]] = {}
        self._install_admin_tools()
        for tool in tools or ():
            self.add_world_tool(tool)

    # -- listing hides admin tools
    async def list_tools(self):  # type: ignore[override]
        tools = await super().list_tools()
        return [t for t in tools if not (t.meta or {}).get(HIDDEN_META_KEY)]

    # -- registration
    def add_world_tool(self, tool: ToolDef) -> None:
        """Register one tool of a :class:`ToolSet`: called with the world of the request's session."""
        wrapper = world_tool(tool, self.store, self.default_seed)
        self.add_tool(wrapper, name=tool.name, title=tool.title, description=tool.description, annotations=tool.annotations)
        self._redact_sensitive(tool.name)
        self._direct(tool.name)
        self.tool_specs[tool.name] = {"read_only": tool.read_only, "destructive": tool.destructive}

    def _install_admin_tools(self) -> None:
        store, default_seed = self.store, self.default_seed
        hidden = {HIDDEN_META_KEY: True}

        async def prove_admin_reset(with_hash: bool = True) -> SessionInfo:
            """Reset this session's world to its seeded initial state (``with_hash=false``: skip hashing it)."""
            with HandlerClock.timed():
                session, seed = session_of(default_seed)
                world = store.reset(session, seed)
                return SessionInfo(session=session, seed=seed, state_hash=world.state_hash() if with_hash else None)

        async def prove_admin_state_hash() -> SessionInfo:
            """The sha256 of this session's world state."""
            with HandlerClock.timed():
                session, seed = session_of(default_seed)
                return SessionInfo(session=session, seed=seed, state_hash=store.get(session, seed).state_hash())

        async def prove_admin_state() -> SessionState:
            """The full state of this session's world, as JSON."""
            with HandlerClock.timed():
                session, seed = session_of(default_seed)
                world = store.get(session, seed)
                return SessionState(session=session, seed=seed, state_hash=world.state_hash(), state=world.state_dict())

        async def prove_admin_close() -> Closed:
            """Drop this session's world."""
            with HandlerClock.timed():
                session, _ = session_of(default_seed)
                return Closed(session=session, closed=store.close(session))

        for fn in (prove_admin_reset, prove_admin_state_hash, prove_admin_state, prove_admin_close):
            self.add_tool(fn, name=fn.__name__, meta=hidden, annotations=ToolAnnotations(read_only_hint=fn is not prove_admin_reset))
            self._direct(fn.__name__)

    def _redact_sensitive(self, tool_name: str) -> None:
        """Validation errors of a tool with sensitive parameters never show their values (see :mod:`servers.kit.redact`)."""
        registered = self._registered(tool_name)
        secret = sensitive_parameters(registered.parameters) if registered is not None else set()
        if secret:
            md = registered.fn_metadata
            md.arg_model = redacting_model(md.arg_model, secret)

    def _direct(self, tool_name: str) -> None:
        if self.direct_calls is not None:
            self.direct_calls.add(self._registered(tool_name))

    def _registered(self, tool_name: str) -> Tool | None:
        """mcp's ``Tool`` for ``tool_name`` (``MCPServer`` has no public accessor: the kit's one use of its tool manager)."""
        return self._tool_manager.get_tool(tool_name)

    # -- running
    def serve(self, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000) -> None:
        if transport == "stdio":
            self.run("stdio")
        elif transport == "http":
            self.run("streamable-http", host=host, port=port)
        else:
            raise ValueError(f"unknown transport {transport!r}: expected 'stdio' or 'http'")
