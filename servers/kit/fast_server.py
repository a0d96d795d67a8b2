"""The kit's measured fast paths, each behind one switch. The plain SDK path is what a server runs with
every switch off; ``bench/OPTIMISATIONS.md`` has the figures that keep each one here.

* **Direct calls** (row 38; ``PROVE_DIRECT_CALLS=0`` or ``EnvServer(..., direct_calls=False)`` turns it
  off): :class:`DirectCalls` answers plain calls of kit tools with the result ``MCPServer`` would give,
  without the parts of mcp's path a kit tool does not need. Halves mcp's server side of a call.
* **No request spans without a tracer** (row 19; ``PROVE_SERVER_TELEMETRY=1`` or
  ``EnvServer(..., telemetry=True)`` keeps them): mcp's per-request OpenTelemetry middleware is dropped
  from the server's middleware list (mcp's documented opt-out) unless a tracer provider is installed.
* **Seeded worlds copied by unpickling** (row 4, always on: a plain library call): :func:`world_copier`.

:class:`FastPaths` holds the two switches of a server, resolved once when it is built.
"""

import copy
import functools
import logging
import os
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pydantic_core
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import SERVER_INFO_META_KEY, CallToolResult, Implementation
from mcp.types.methods import validate_client_request
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from servers.kit.keys import DIRECT_CALLS_ENV, TELEMETRY_ENV

logger = logging.getLogger("servers.kit")
T = TypeVar("T")

_ON, _OFF = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def _switch(env: str) -> bool | None:
    value = os.environ.get(env, "").strip().lower()
    return True if value in _ON else False if value in _OFF else None


def tracing_installed() -> bool:
    """Whether an OpenTelemetry tracer provider is installed (the API's default provider records nothing)."""
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), (trace.ProxyTracerProvider, trace.NoOpTracerProvider))


def telemetry_wanted(telemetry: bool | None = None) -> bool:
    """Keep mcp's per-request OpenTelemetry span? An explicit choice wins, then ``PROVE_SERVER_TELEMETRY``
    (``1``/``0``), then whether a tracer provider is installed when the server is built."""
    if telemetry is not None:
        return telemetry
    env = _switch(TELEMETRY_ENV)
    return tracing_installed() if env is None else env


def direct_calls_wanted(direct: bool | None = None) -> bool:
    """Answer plain calls of kit tools with :class:`DirectCalls`? An explicit choice wins, then
    ``PROVE_DIRECT_CALLS`` (``0`` turns it off, to compare with mcp's own path); on by default."""
    if direct is not None:
        return direct
    return _switch(DIRECT_CALLS_ENV) is not False


@dataclass(frozen=True)
class FastPaths:
    """The fast-path switches of one server (see the module docstring)."""

    direct_calls: bool
    telemetry: bool

    @classmethod
    def resolve(cls, direct_calls: bool | None = None, telemetry: bool | None = None) -> "FastPaths":
        """Explicit choices win; unset ones come from the environment (:func:`direct_calls_wanted`,
        :func:`telemetry_wanted`)."""
        return cls(direct_calls=direct_calls_wanted(direct_calls), telemetry=telemetry_wanted(telemetry))


@functools.cache
def _sdk_default_middleware() -> tuple[type, ...]:
    """The middleware types every mcp server starts with: a bare low-level ``Server``'s list, which mcp
    documents as its OpenTelemetry span, on by default, dropped from the list to opt out."""
    return tuple(type(m) for m in Server(name="prove-probe").middleware)


def drop_request_spans(middleware: list[Any]) -> None:
    """Remove mcp's default (OpenTelemetry) middleware from a server's middleware list, in place."""
    defaults = _sdk_default_middleware()
    middleware[:] = [m for m in middleware if not isinstance(m, defaults)]


def server_info_stamp(server: MCPServer) -> dict[str, Any]:
    """The ``serverInfo`` stamp mcp puts in a response's ``_meta`` (the wire dump of the server's identity),
    from ``MCPServer``'s public identity properties."""
    info = Implementation(
        name=server.name,
        version=server.version,
        title=server.title,
        description=server.description,
        website_url=server.website_url,
        icons=server.icons,
    )
    return info.model_dump(by_alias=True, mode="json", exclude_none=True)


def world_copier(world: T) -> Callable[[], T]:
    """A function returning fresh copies of ``world``: unpickling a blob made once copies a seeded world
    about twice as fast as ``copy.deepcopy`` (row 4); a world that does not pickle is deep-copied."""
    try:
        blob = pickle.dumps(world, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return lambda: copy.deepcopy(world)
    return lambda: pickle.loads(blob)


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

    def __init__(self, stamp: Mapping[str, Any], call_cache_hinted: bool = False) -> None:
        """``stamp``: the server's :func:`server_info_stamp`; ``call_cache_hinted``: the server was built with a
        cache hint for ``tools/call`` (mcp fills it in after the handler: such calls are left to mcp)."""
        self.stamp = dict(stamp)
        self.stamp_flat = all(isinstance(v, (str, int, float, bool)) or v is None for v in self.stamp.values())
        self.call_cache_hinted = call_cache_hinted
        self.tools: dict[str, Tool] = {}
        self.answered = 0  # calls this path answered (the rest went on to mcp)

    def add(self, tool: Tool | None) -> None:
        """Answer calls of ``tool`` directly, if it is a plain one (async, no Context, no resolvers)."""
        if tool is None:
            return
        md = tool.fn_metadata
        if (
            tool.is_async
            and tool.context_kwarg is None
            and not tool.resolved_params
            and md.output_model is not None
            and md.output_schema is not None
            and not md.wrap_output
        ):
            self.tools[tool.name] = tool
        else:
            self.tools.pop(tool.name, None)

    def tool_for(self, ctx: Any) -> Tool | None:
        """The tool this request calls, if it is one to answer directly (``None``: leave it to mcp)."""
        params = ctx.params
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS or not params.keys() <= self._PLAIN_PARAMS:
            return None
        tool = self.tools.get(params.get("name"))  # type: ignore[arg-type]
        if tool is None or self.call_cache_hinted:
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
                result = {
                    "content": [
                        {"type": "text", "text": pydantic_core.to_json(returned, fallback=str, indent=2).decode()}
                    ],
                    "structuredContent": returned.model_dump(mode="json", by_alias=True),
                    "isError": False,
                }
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
        return dict(self.stamp) if self.stamp_flat else copy.deepcopy(self.stamp)


def _error_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}
