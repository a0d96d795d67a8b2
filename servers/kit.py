"""The server kit: stateful, session-scoped MCP servers on top of mcp 2.x ``MCPServer``.

A server built with the kit keeps one *world* (a pydantic model of its state) per session.

* A session is named by the caller in the request ``_meta`` (``prove/session``) together with the
  seed its world is generated from (``prove/seed``). A request without ``_meta`` uses the
  ``default`` session, so any plain MCP client works and sees one consistent world.
* A new session starts from the seeded initial state; its writes are invisible to every other
  session; ``prove_admin_reset`` brings it back to the seed. The same seed gives the same
  entities and the same ids on every transport, because worlds are generated from a
  ``random.Random`` keyed by server name and seed, and new ids come from per-world counters.
* Admin tools (reset, state, state hash, close) are callable but hidden from ``tools/list``:
  they are not part of the user-visible tool count.
* Plain calls of kit tools are answered by the kit's own ``tools/call`` path (:class:`DirectCalls`):
  the result ``MCPServer`` would give, without the parts of mcp's path a kit tool does not need.
* Tool failures are results a model can read: :class:`ToolFailure` subclasses carry a reason
  code and a message naming the argument or entity at fault. Unexpected exceptions are turned
  into a named ``internal_error`` instead of the SDK's generic "Error executing tool".
"""

import contextvars
import copy
import functools
import hashlib
import inspect
import json
import logging
import os
import pickle
import random
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

import pydantic_core
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import SERVER_INFO_META_KEY, CallToolResult, ToolAnnotations
from mcp.types.methods import validate_client_request
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

SESSION_META_KEY = "prove/session"
SEED_META_KEY = "prove/seed"
# optional request ``_meta`` a client may add so session bookkeeping costs no extra round trip:
# reset this session to its seed before the call, and drop the worlds of sessions it has closed
RESET_META_KEY = "prove/reset"
CLOSE_META_KEY = "prove/close"
HIDDEN_META_KEY = "prove/hidden"
SENSITIVE_KEY = "x-sensitive"
DEFAULT_SESSION = "default"
ADMIN_PREFIX = "prove_admin_"
TELEMETRY_ENV = "PROVE_SERVER_TELEMETRY"
DIRECT_CALLS_ENV = "PROVE_DIRECT_CALLS"

logger = logging.getLogger(__name__)


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


# --------------------------------------------------------------------------- timing (benchmarks only)
class Clock:
    """Accumulated seconds and calls of one kind of work, off unless ``enabled`` (benchmarks turn it on).
    Each subclass keeps its own totals."""

    enabled: bool = False
    seconds: float = 0.0
    calls: int = 0
    running: int = 0  # timed blocks entered and not yet left (a benchmark asks "is one running now?")

    @classmethod
    def reset(cls) -> None:
        cls.seconds, cls.calls, cls.running = 0.0, 0, 0

    @classmethod
    def start(cls) -> float:
        """A start time to hand to :meth:`stop` (0 while the clock is off: nothing is timed)."""
        if not cls.enabled:
            return 0.0
        cls.running += 1
        return time.perf_counter()

    @classmethod
    def stop(cls, t0: float, count: bool = True) -> None:
        """Add the time since ``t0`` (and, with ``count``, one call)."""
        if t0:
            cls.seconds += time.perf_counter() - t0
            cls.calls += count
            cls.running -= 1

    @classmethod
    def timed(cls, count: bool = True) -> "_Timed":
        """``with Clock.timed(): ...``: :meth:`start` on entry, :meth:`stop` on the way out, however it is left."""
        return _Timed(cls, count)


class _Timed:
    def __init__(self, clock: type[Clock], count: bool):
        self.clock, self.count, self.t0 = clock, count, 0.0

    def __enter__(self) -> None:
        self.t0 = self.clock.start()

    def __exit__(self, *exc: Any) -> None:
        self.clock.stop(self.t0, self.count)


class HandlerClock(Clock):
    """Optional accounting of time spent inside tool handlers (off by default: one attribute check per call).

    ``bench/build_throughput.py`` turns it on to split build time into tool execution and pipeline overhead.
    """


class ServerClock(Clock):
    """Optional accounting of a server's whole handling of ``tools/call`` requests: its middleware, the
    tool lookup, argument validation, the handler and the result's serialization (off by default).

    The difference from :class:`HandlerClock` is mcp's server-side work around each handler."""


class _ServerTiming:
    """Outermost server middleware feeding :class:`ServerClock`."""

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        if not ServerClock.enabled or ctx.method != "tools/call":
            return await call_next(ctx)
        t0 = ServerClock.start()
        try:
            return await call_next(ctx)
        finally:
            ServerClock.stop(t0)


# --------------------------------------------------------------------------- errors
class ToolFailure(ToolError):
    """A failure the caller can read and recover from. ``code`` is a stable reason code."""

    code: ClassVar[str] = "tool_error"

    def __init__(self, message: str):
        super().__init__(f"{self.code}: {message}")
        self.message = message


class NotFound(ToolFailure):
    code = "not_found"


class InvalidArgument(ToolFailure):
    code = "invalid_argument"


class StateConflict(ToolFailure):
    code = "state_conflict"


class PermissionDenied(ToolFailure):
    code = "permission_denied"


class InternalError(ToolFailure):
    code = "internal_error"


def not_found(kind: str, value: Any, hint: str | None = None) -> NotFound:
    msg = f"{kind} {value!r} not found"
    return NotFound(f"{msg}; {hint}" if hint else msg)


def sensitive(description: str, **kw: Any) -> Any:
    """A pydantic ``Field`` marked sensitive (PIN, password, token) in the JSON schema."""
    extra = dict(kw.pop("json_schema_extra", {}) or {})
    extra[SENSITIVE_KEY] = True
    return Field(description=description, json_schema_extra=extra, **kw)


# --------------------------------------------------------------------------- state
class World(BaseModel):
    """Base class of a server's state. Subclasses add their entity tables."""

    seed: int = 0
    counters: dict[str, int] = Field(default_factory=dict)

    def new_id(self, prefix: str, width: int = 4) -> str:
        n = self.counters.get(prefix, 0) + 1
        self.counters[prefix] = n
        return f"{prefix}-{n:0{width}d}"

    def state_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def state_hash(self) -> str:
        blob = json.dumps(self.state_dict(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode()).hexdigest()


W = TypeVar("W", bound=World)

_CURRENT: contextvars.ContextVar[World] = contextvars.ContextVar("prove_world")


class SessionStore(Generic[W]):
    """Worlds by session id, created lazily from the seed; seed worlds are cached and copied."""

    def __init__(self, name: str, seeder: Callable[[random.Random, int], W], max_sessions: int = 4096):
        self.name = name
        self.seeder = seeder
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, W] = OrderedDict()
        self._seed_cache: dict[int, W] = {}
        self._seed_blobs: dict[int, bytes | None] = {}

    def seeded(self, seed: int) -> W:
        base = self._seed_cache.get(seed)
        if base is None:
            rng = random.Random(f"{self.name}:{seed}")
            base = self.seeder(rng, seed)
            base.seed = seed
            self._seed_cache[seed] = base
            try:  # unpickling a cached blob copies a world about twice as fast as deepcopy
                self._seed_blobs[seed] = pickle.dumps(base, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # a world that does not pickle is deep-copied
                self._seed_blobs[seed] = None
        blob = self._seed_blobs.get(seed)
        return pickle.loads(blob) if blob is not None else copy.deepcopy(base)

    def get(self, session: str, seed: int) -> W:
        world = self._sessions.get(session)
        if world is None or world.seed != seed:
            world = self.seeded(seed)
            self._sessions[session] = world
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        else:
            self._sessions.move_to_end(session)
        return world

    def reset(self, session: str, seed: int) -> W:
        world = self.seeded(seed)
        self._sessions[session] = world
        return world

    def close(self, session: str) -> bool:
        return self._sessions.pop(session, None) is not None

    def __len__(self) -> int:
        return len(self._sessions)


def current_world() -> World:
    """The world of the session the running tool call belongs to."""
    try:
        return _CURRENT.get()
    except LookupError:  # pragma: no cover - only reachable when a handler is called directly
        raise InternalError("no session is active for this call") from None


def _session_and_seed(meta: Any, default_seed: int) -> tuple[str, int]:
    """(session, seed) named in a request's ``_meta`` mapping (the ``default`` session without one)."""
    if meta is None:
        meta = {}
    elif not isinstance(meta, dict):
        meta = dict(meta)
    session = str(meta.get(SESSION_META_KEY) or DEFAULT_SESSION)
    raw_seed = meta.get(SEED_META_KEY, default_seed)
    try:
        seed = int(raw_seed)
    except (TypeError, ValueError):
        raise InvalidArgument(f"_meta {SEED_META_KEY!r} must be an integer, got {raw_seed!r}") from None
    return session, seed


# the ``_meta`` of the tools/call request being handled, set by :class:`SessionBookkeeping` around the call
_REQUEST_META: contextvars.ContextVar[Any] = contextvars.ContextVar("prove_request_meta", default=None)


def _session_of(default_seed: int) -> tuple[str, int]:
    """(session, seed) of the running tool call (the ``default`` session when it is called outside a request)."""
    return _session_and_seed(_REQUEST_META.get(), default_seed)


def direct_calls_wanted(direct: bool | None = None) -> bool:
    """Answer plain calls of kit tools with :class:`DirectCalls`? An explicit choice wins, then
    ``PROVE_DIRECT_CALLS`` (``0`` turns it off, to compare with mcp's own path); on by default."""
    if direct is not None:
        return direct
    return os.environ.get(DIRECT_CALLS_ENV, "").strip().lower() not in {"0", "false", "no", "off"}


class DirectCalls:
    """The kit's own ``tools/call`` path for its tools: the same result as ``MCPServer``'s, with less in between.

    For a ``tools/call``, mcp's server runs its middleware and then its request handler: a check of the
    request against the protocol version's schema, the typed request parameters, ``MCPServer``'s
    ``Context``, the tool lookup, argument validation, the tool, the result's conversion into a
    ``CallToolResult``, then a second pass over the result (validated against the version's result schema
    and dumped again) and a deep copy of the server-info stamp. On an in-process connection that is
    about a third of a small call (``bench/call_cost.py``).

    As the innermost server middleware (mcp lets a middleware answer without calling on: it then owns
    the whole result), this answers a plain call of a kit tool on a 2026-07-28 connection with the pieces
    mcp would use, where they are public: the request check (``validate_client_request``), the tool's own
    argument model (``FuncMetadata.validate_arguments``), the handler, and the result as ``MCPServer``
    builds it (text: the JSON of the returned model, indented by 2; ``structuredContent``: its JSON dump;
    a failure: ``Error executing tool <name>: <message>``, ``isError``), with that version's envelope
    (``resultType``, the ``serverInfo`` stamp). Everything else goes on to mcp unchanged, before the tool
    runs: a request that fails the check or carries other fields, arguments that do not validate (mcp
    words the error), an unknown tool, a tool that takes a ``Context`` or resolvers, a handshake-era
    connection, a cache hint on ``tools/call``. The conformance suite (``test_direct_calls_answer_as_mcp_does``)
    checks the wire result against mcp's own path for every call it makes on every built-in server, failures
    included.
    """

    _PLAIN_PARAMS = frozenset({"name", "arguments", "_meta"})

    def __init__(self, server: MCPServer) -> None:
        self._server = server._lowlevel_server
        self._tools: dict[str, Tool] = {}
        self._stamp: dict[str, Any] | None = None
        self._stamp_flat = False  # the stamp holds only scalars (a shallow copy is a fresh one)
        self.answered = 0  # calls this path answered (the rest went on to mcp)

    def add(self, tool: Tool | None) -> None:
        """Answer calls of ``tool`` directly, if it is a plain one (async, no Context, no resolvers)."""
        if tool is None:
            return
        md = tool.fn_metadata
        if tool.is_async and tool.context_kwarg is None and not tool.resolved_params and md.output_model is not None \
                and md.output_schema is not None and not md.wrap_output:
            self._tools[tool.name] = tool
        else:
            self._tools.pop(tool.name, None)

    def tool_for(self, ctx: Any) -> Tool | None:
        """The tool this request calls, if it is one to answer directly (``None``: leave it to mcp)."""
        params = ctx.params
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS or not params.keys() <= self._PLAIN_PARAMS:
            return None
        tool = self._tools.get(params.get("name"))  # type: ignore[arg-type]
        if tool is None or "tools/call" in self._server.cache_hints:
            return None
        try:
            validate_client_request("tools/call", ctx.protocol_version, params)
        except Exception:  # mcp reports the malformed request in its own words
            return None
        return tool

    async def __call__(self, tool: Tool, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        arguments = ctx.params.get("arguments") or {}
        try:
            validated = tool.fn_metadata.validate_arguments(arguments)
        except Exception:  # mcp words the rejection (the same validation fails again there); the tool has not run
            return await call_next(ctx)
        self.answered += 1
        try:
            returned = await tool.fn(**validated)
            if type(returned) is tool.fn_metadata.output_model:  # what kit tools return
                result = {"content": [{"type": "text", "text": pydantic_core.to_json(returned, fallback=str, indent=2).decode()}],
                          "structuredContent": returned.model_dump(mode="json", by_alias=True), "isError": False}
            else:  # mcp's own conversion (a subclass, a dict)
                converted = tool.fn_metadata.convert_result(returned)
                if not isinstance(converted, CallToolResult):
                    raise TypeError(f"{tool.name} returned {type(returned).__name__}, not a tool result")
                result = converted.model_dump(by_alias=True, mode="json", exclude_none=True)
        except MCPError:
            raise
        except (ToolError, ResourceError) as exc:
            if isinstance(exc, UnexpectedToolError):  # a nested crash: its text is already the generic one
                logger.exception("Tool %r raised an unexpected exception", tool.name)
            else:
                logger.info("Tool %r failed: %r", tool.name, str(exc))
            result = _error_result(f"Error executing tool {tool.name}: {exc}")
        except Exception:  # a crash: its text stays on the server
            logger.exception("Tool %r raised an unexpected exception", tool.name)
            result = _error_result(f"Error executing tool {tool.name}")
        result["resultType"] = "complete"
        meta = result.get("_meta")  # only a converted result can carry one: mcp keeps it and adds the stamp if absent
        if meta is None:
            result["_meta"] = {SERVER_INFO_META_KEY: self._server_info()}
        elif isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None:
            result["_meta"] = {**meta, SERVER_INFO_META_KEY: self._server_info()}
        return result

    def _server_info(self) -> dict[str, Any]:
        """A fresh copy of the server's identity stamp (mcp deep-copies it per response; it holds only
        strings here, so a shallow copy is as fresh)."""
        if self._stamp is None:
            self._stamp = self._server.server_info_stamp
            self._stamp_flat = all(isinstance(v, (str, int, float, bool)) or v is None for v in self._stamp.values())
        return dict(self._stamp) if self._stamp_flat else copy.deepcopy(self._stamp)


def _error_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


class SessionBookkeeping:
    """Server middleware applying the optional bookkeeping keys of a ``tools/call`` request's ``_meta``:
    ``prove/close`` (ids of sessions whose worlds to drop) and ``prove/reset`` (reset this session to its
    seed before the call).

    It runs before mcp looks the tool up or validates its arguments, so the keys hold even when the call
    they ride on fails there (an unknown tool, arguments that do not validate): a client sends a reset
    once and may rely on it. Being the innermost middleware, it then hands a plain call of a kit tool
    to ``direct`` (:class:`DirectCalls`), when the server has one."""

    def __init__(self, store: "SessionStore[Any]", default_seed: int, direct: DirectCalls | None = None):
        self.store, self.default_seed, self.direct = store, default_seed, direct

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        if ctx.method != "tools/call" or not ctx.params:
            return await call_next(ctx)
        meta = ctx.params.get("_meta")
        if isinstance(meta, dict) and (CLOSE_META_KEY in meta or RESET_META_KEY in meta):
            self.apply(meta)
        # the tool reads its session from here: a handler taking mcp's Context only for its ``_meta``
        # would cost a validated Context argument on every call
        token = _REQUEST_META.set(meta)
        try:
            direct = self.direct
            if direct is not None and (tool := direct.tool_for(ctx)) is not None:
                return await direct(tool, ctx, call_next)
            return await call_next(ctx)
        finally:
            _REQUEST_META.reset(token)

    def apply(self, meta: dict[str, Any]) -> None:
        # the work the admin close and reset tools would do, so HandlerClock counts it as theirs
        with HandlerClock.timed(count=False):
            try:
                session, seed = _session_and_seed(meta, self.default_seed)
            except InvalidArgument:
                return  # the tool call itself reports the bad seed
            closes = meta.get(CLOSE_META_KEY)
            if closes and isinstance(closes, list):
                for sid in closes:
                    if str(sid) != session:
                        self.store.close(str(sid))
            if meta.get(RESET_META_KEY):
                self.store.reset(session, seed)


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


# --------------------------------------------------------------------------- server
class EnvServer(MCPServer, Generic[W]):
    """An ``MCPServer`` whose tools run against a per-session world.

    ``category`` is the catalogue category; ``expected_tools`` the user-visible tool count
    from the paper's table (checked by the conformance suite).

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
        self._lowlevel_server.middleware.insert(0, _ServerTiming())
        self.tool_specs: dict[str, dict[str, Any]] = {}
        self._install_admin_tools()

    # -- listing hides admin tools
    async def list_tools(self):  # type: ignore[override]
        tools = await super().list_tools()
        return [t for t in tools if not (t.meta or {}).get(HIDDEN_META_KEY)]

    # -- registration
    def env_tool(
        self,
        *,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool | None = None,
        open_world: bool = False,
        name: str | None = None,
        title: str | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a tool whose body reads and writes ``current_world()``.

        The body is a plain function with typed, described parameters and a pydantic return
        type (its output schema). It raises :class:`ToolFailure` subclasses for expected
        failures; anything else becomes a named ``internal_error``.
        """

        def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
            tool_name = name or fn.__name__
            annotations = ToolAnnotations(
                title=title,
                read_only_hint=read_only,
                destructive_hint=destructive,
                idempotent_hint=read_only if idempotent is None else idempotent,
                open_world_hint=open_world,
            )
            wrapper = self._bind(fn, tool_name)
            self.add_tool(wrapper, name=tool_name, title=title, description=inspect.getdoc(fn), annotations=annotations)
            self._direct(tool_name)
            self.tool_specs[tool_name] = {"read_only": read_only, "destructive": destructive}
            return fn

        return decorator

    def _bind(self, fn: Callable[..., Any], tool_name: str) -> Callable[..., Any]:
        sig = inspect.signature(fn, eval_str=True)
        store, default_seed = self.store, self.default_seed

        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = HandlerClock.start()
            session, seed = _session_of(default_seed)
            world = store.get(session, seed)
            token = _CURRENT.set(world)
            try:
                return fn(*args, **kwargs)
            except ToolError:
                raise
            except Exception as exc:  # a bug in a handler must still read as a named error
                raise InternalError(f"{tool_name} failed: {type(exc).__name__}: {exc}") from exc
            finally:
                _CURRENT.reset(token)
                HandlerClock.stop(t0)

        del wrapper.__wrapped__
        wrapper.__signature__ = sig  # type: ignore[attr-defined]
        hints = dict(getattr(fn, "__annotations__", {}))
        hints.update({p.name: p.annotation for p in sig.parameters.values() if p.annotation is not inspect.Parameter.empty})
        if sig.return_annotation is not inspect.Signature.empty:
            hints["return"] = sig.return_annotation
        wrapper.__annotations__ = hints
        return wrapper

    def _install_admin_tools(self) -> None:
        store, default_seed = self.store, self.default_seed
        hidden = {HIDDEN_META_KEY: True}

        async def prove_admin_reset(with_hash: bool = True) -> SessionInfo:
            """Reset this session's world to its seeded initial state (``with_hash=false``: skip hashing it)."""
            with HandlerClock.timed():
                session, seed = _session_of(default_seed)
                world = store.reset(session, seed)
                return SessionInfo(session=session, seed=seed, state_hash=world.state_hash() if with_hash else None)

        async def prove_admin_state_hash() -> SessionInfo:
            """The sha256 of this session's world state."""
            with HandlerClock.timed():
                session, seed = _session_of(default_seed)
                return SessionInfo(session=session, seed=seed, state_hash=store.get(session, seed).state_hash())

        async def prove_admin_state() -> SessionState:
            """The full state of this session's world, as JSON."""
            with HandlerClock.timed():
                session, seed = _session_of(default_seed)
                world = store.get(session, seed)
                return SessionState(session=session, seed=seed, state_hash=world.state_hash(), state=world.state_dict())

        async def prove_admin_close() -> Closed:
            """Drop this session's world."""
            with HandlerClock.timed():
                session, _ = _session_of(default_seed)
                return Closed(session=session, closed=store.close(session))

        for fn in (prove_admin_reset, prove_admin_state_hash, prove_admin_state, prove_admin_close):
            self.add_tool(fn, name=fn.__name__, meta=hidden, annotations=ToolAnnotations(read_only_hint=fn is not prove_admin_reset))
            self._direct(fn.__name__)

    def _direct(self, tool_name: str) -> None:
        if self.direct_calls is not None:
            self.direct_calls.add(self._tool_manager.get_tool(tool_name))

    # -- running
    def serve(self, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000) -> None:
        if transport == "stdio":
            self.run("stdio")
        elif transport == "http":
            self.run("streamable-http", host=host, port=port)
        else:
            raise ValueError(f"unknown transport {transport!r}: expected 'stdio' or 'http'")
