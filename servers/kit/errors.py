"""Tool failures a model can read: a stable reason code and a message naming the argument or entity at fault."""

from typing import Any, ClassVar

from mcp.server.mcpserver.exceptions import ToolError


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
