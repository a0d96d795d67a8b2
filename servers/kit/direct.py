"""The kit's own ``tools/call`` path for plain calls of kit tools (:class:`DirectCalls`), a measured fast path.

``PROVE_DIRECT_CALLS=0`` (or ``EnvServer(..., direct_calls=False)``) leaves every call to mcp's own path."""

import copy
import logging
import os
from collections.abc import Callable
from typing import Any

import pydantic_core
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import SERVER_INFO_META_KEY, CallToolResult
from mcp.types.methods import validate_client_request
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from servers.kit.keys import DIRECT_CALLS_ENV

logger = logging.getLogger("servers.kit")


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
