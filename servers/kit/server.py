""":class:`EnvServer`: an ``MCPServer`` whose tools run against the world of the caller's session.

Built on ``MCPServer``'s public API only: the kit makes mcp's ``Tool`` records itself (``Tool.from_function``,
as ``MCPServer.add_tool`` does) and hands them over at construction (``tools=``), so it keeps its own
registry of them; its middleware goes in through ``middleware=`` and the public ``middleware`` list.
"""

import functools
import inspect
import random
from collections.abc import Callable, Iterable
from typing import Any, Generic

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import BaseModel

from servers.kit.errors import InternalError
from servers.kit.fast_server import DirectCalls, FastPaths, drop_request_spans, server_info_stamp
from servers.kit.hooks import HOOKS, HandlerWork
from servers.kit.keys import HIDDEN_META_KEY
from servers.kit.redact import redacting_model, sensitive_parameters
from servers.kit.sessions import SessionBookkeeping, session_of
from servers.kit.toolset import ToolDef, ToolSet
from servers.kit.world import SessionStore, W, World


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
    fn, tool_name, writes = tool.fn, tool.name, not tool.read_only
    sig = tool.public_signature()

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        timer = HOOKS.handler_timer  # a benchmark's clock, if one is installed (servers.kit.hooks)
        token = timer.start() if timer is not None else None
        session, seed = session_of(default_seed)
        world = store.get(session, seed)
        if writes:
            store.touched(session)
        try:
            return fn(world, *args, **kwargs)
        except ToolError:
            raise
        except Exception as exc:  # a bug in a handler must still read as a named error
            raise InternalError(f"{tool_name} failed: {type(exc).__name__}: {exc}") from exc
        finally:
            if timer is not None:
                timer.stop(token)

    del wrapper.__wrapped__
    wrapper.__signature__ = sig  # type: ignore[attr-defined]
    hints = {p.name: p.annotation for p in sig.parameters.values() if p.annotation is not inspect.Parameter.empty}
    if sig.return_annotation is not inspect.Signature.empty:
        hints["return"] = sig.return_annotation
    wrapper.__annotations__ = hints
    return wrapper


def admin_tools(store: "SessionStore[Any]", default_seed: int) -> list[Callable[..., Any]]:
    """The hidden admin tools of a server (reset, state hash, state, close), as ``MCPServer`` tool functions."""

    async def prove_admin_reset(with_hash: bool = True) -> SessionInfo:
        """Reset this session's world to its seeded initial state (``with_hash=false``: skip hashing it)."""
        with HandlerWork():
            session, seed = session_of(default_seed)
            world = store.reset(session, seed)
            return SessionInfo(session=session, seed=seed, state_hash=world.state_hash() if with_hash else None)

    async def prove_admin_state_hash() -> SessionInfo:
        """The sha256 of this session's world state."""
        with HandlerWork():
            session, seed = session_of(default_seed)
            return SessionInfo(session=session, seed=seed, state_hash=store.get(session, seed).state_hash())

    async def prove_admin_state() -> SessionState:
        """The full state of this session's world, as JSON."""
        with HandlerWork():
            session, seed = session_of(default_seed)
            world = store.get(session, seed)
            return SessionState(session=session, seed=seed, state_hash=world.state_hash(), state=world.state_dict())

    async def prove_admin_close() -> Closed:
        """Drop this session's world."""
        with HandlerWork():
            session, _ = session_of(default_seed)
            return Closed(session=session, closed=store.close(session))

    return [prove_admin_reset, prove_admin_state_hash, prove_admin_state, prove_admin_close]


def tool_records(tools: "Iterable[ToolDef]", store: "SessionStore[Any]", default_seed: int) -> list[Tool]:
    """mcp's ``Tool`` records for a server: the hidden admin tools, then ``tools`` in order, each called with
    the world of the request's session; validation errors of a tool with sensitive parameters never show
    their values (:mod:`servers.kit.redact`).

    What ``Tool.from_function`` works out from a signature (the argument model, the input and output
    schemas) depends only on the tool, not on the server instance, so it is worked out once per tool in a
    process (:func:`_admin_templates`, :func:`_template`); each server's record is that one with its own
    function, bound to its session store (a pydantic ``model_copy``)."""
    admin = _admin_templates()
    out = [admin[fn.__name__].model_copy(update={"fn": fn}) for fn in admin_tools(store, default_seed)]
    out += [_template(tool).model_copy(update={"fn": world_tool(tool, store, default_seed)}) for tool in tools]
    return out


# the templates' functions are bound to this store, which no request ever reaches (each server's copy has its own)
_TEMPLATE_STORE: "SessionStore[Any]" = SessionStore("template", seeder=lambda rng, seed: World())


@functools.cache
def _admin_templates() -> dict[str, Tool]:
    hidden = {HIDDEN_META_KEY: True}
    return {
        fn.__name__: Tool.from_function(
            fn,
            name=fn.__name__,
            meta=hidden,
            annotations=ToolAnnotations(read_only_hint=fn.__name__ != "prove_admin_reset"),
        )
        for fn in admin_tools(_TEMPLATE_STORE, 0)
    }


@functools.cache
def _template(tool: ToolDef) -> Tool:
    registered = Tool.from_function(
        world_tool(tool, _TEMPLATE_STORE, 0),
        name=tool.name,
        title=tool.title,
        description=tool.description,
        annotations=tool.annotations,
    )
    secret = sensitive_parameters(registered.parameters)
    if secret:
        registered.fn_metadata.arg_model = redacting_model(registered.fn_metadata.arg_model, secret)
    return registered


class EnvServer(MCPServer, Generic[W]):
    """An ``MCPServer`` whose tools run against a per-session world.

    ``category`` is the catalogue category; ``tools`` the server's :class:`ToolSet`; ``default_seed`` the seed
    of a session whose request names none (a plain MCP client's world). ``direct_calls`` and ``telemetry``
    are the fast-path switches (:class:`~servers.kit.fast_server.FastPaths`; unset: from the environment).
    ``kit_tools`` holds mcp's ``Tool`` record of every tool, admin tools included, by name.
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
        self.fast_paths = FastPaths.resolve(direct_calls=direct_calls, telemetry=telemetry)
        self.category = category
        self.summary = description
        self.default_seed = default_seed
        self.store: SessionStore[W] = SessionStore(name, seeder)
        registered = tool_records(tools or (), self.store, default_seed)
        self.kit_tools: dict[str, Tool] = {t.name: t for t in registered}
        # closes and resets riding on a request apply before mcp validates it (see SessionBookkeeping);
        # user middleware runs innermost, inside mcp's own
        bookkeeping = SessionBookkeeping(self.store, default_seed)
        super().__init__(
            name,
            description=description,
            instructions=description,
            tools=registered,
            middleware=[*kw.pop("middleware", ()), bookkeeping],
            **kw,
        )
        if not self.fast_paths.telemetry:
            drop_request_spans(self.middleware)
        self.middleware[0:0] = HOOKS.outer_middleware  # a benchmark's outermost middleware, if any
        self.direct_calls: DirectCalls | None = None
        if self.fast_paths.direct_calls:  # plain calls of kit tools answered by the kit's own path, innermost
            self.direct_calls = DirectCalls(
                server_info_stamp(self), call_cache_hinted="tools/call" in (kw.get("cache_hints") or {})
            )
            for t in registered:
                self.direct_calls.add(t)
            bookkeeping.direct = self.direct_calls
        self.tool_specs: dict[str, dict[str, Any]] = {
            t.name: {"read_only": t.read_only, "destructive": t.destructive} for t in tools or ()
        }

    # -- listing hides admin tools
    async def list_tools(self):  # type: ignore[override]
        tools = await super().list_tools()
        return [t for t in tools if not (t.meta or {}).get(HIDDEN_META_KEY)]

    # -- running
    def serve(self, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000) -> None:
        if transport == "stdio":
            self.run("stdio")
        elif transport == "http":
            self.run("streamable-http", host=host, port=port)
        else:
            raise ValueError(f"unknown transport {transport!r}: expected 'stdio' or 'http'")
