"""Tools as module-level functions: ``def transfer(w: BankWorld, from_account_id: ..., ...) -> TransferResult``.

A server module collects its tools in a :class:`ToolSet`; the kit's :class:`~servers.kit.server.EnvServer`
registers them with ``MCPServer``, calling each with the world of the session the request belongs to (the
first parameter, left out of the advertised signature and input schema). Called directly, a tool is an
ordinary function of a world and its arguments (``transfer(world, "ACC-0001", "ACC-0002", 5.0, "1234")``).
"""

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic

from mcp.types import ToolAnnotations

from servers.kit.world import W


@dataclass(frozen=True)
class ToolDef:
    """One tool of a :class:`ToolSet`: its function and how it is advertised."""

    fn: Callable[..., Any]
    name: str
    title: str | None
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool

    @property
    def description(self) -> str | None:
        return inspect.getdoc(self.fn)

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title=self.title,
            read_only_hint=self.read_only,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=self.open_world,
        )

    def public_signature(self) -> inspect.Signature:
        """The tool's signature as a caller sees it: without its first parameter, the session's world."""
        sig = inspect.signature(self.fn, eval_str=True)
        params = list(sig.parameters.values())
        if not params or params[0].kind not in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            raise TypeError(
                f"tool {self.name!r}: its first parameter must be the session's world (e.g. 'w: BankWorld')"
            )
        return sig.replace(parameters=params[1:])


class ToolSet(Generic[W]):
    """The tools of one server, in registration order (the order of ``tools/list``).

    ``@TOOLS.tool(read_only=True)`` over a module-level function whose first parameter is the world adds it.
    The function is returned unchanged, so it stays importable and callable on a world.
    """

    def __init__(self) -> None:
        self._tools: dict[str, ToolDef] = {}

    def tool(
        self,
        *,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool | None = None,
        open_world: bool = False,
        name: str | None = None,
        title: str | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Add a tool. ``idempotent`` defaults to ``read_only``; ``name`` to the function's name.

        The body is a plain function with the world first, then typed, described parameters, and a pydantic
        return type (its output schema). It raises :class:`~servers.kit.errors.ToolFailure` subclasses for
        expected failures; anything else becomes a named ``internal_error``.
        """

        def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
            tool_name = name or fn.__name__
            if tool_name in self._tools:
                raise ValueError(f"tool {tool_name!r} is defined twice")
            self._tools[tool_name] = ToolDef(
                fn=fn,
                name=tool_name,
                title=title,
                read_only=read_only,
                destructive=destructive,
                idempotent=read_only if idempotent is None else idempotent,
                open_world=open_world,
            )
            return fn

        return decorator

    def __iter__(self) -> Iterator[ToolDef]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __getitem__(self, name: str) -> ToolDef:
        return self._tools[name]

    def names(self) -> list[str]:
        return list(self._tools)
