"""The server kit: stateful, session-scoped MCP servers on top of mcp 2.x ``MCPServer``.

A server built with the kit keeps one *world* (a pydantic model of its state) per session, and its tools
are module-level functions of that world (:mod:`servers.kit.toolset`).

* A session is named by the caller in the request ``_meta`` (``prove/session``) together with the
  seed its world is generated from (``prove/seed``). A request without ``_meta`` uses the
  ``default`` session and the server's default seed, so any plain MCP client works and sees one
  consistent world.
* A new session starts from the seeded initial state; its writes are invisible to every other
  session; ``prove_admin_reset`` brings it back to the seed. The same seed gives the same
  entities and the same ids on every transport, because worlds are generated from a
  ``random.Random`` keyed by server name and seed, and new ids come from per-world counters.
* Admin tools (reset, state, state hash, close) are callable but hidden from ``tools/list``:
  they are not part of the user-visible tool count.
* The measured fast paths live in :mod:`servers.kit.fast_server`, each behind one switch
  (:class:`FastPaths`): plain calls of kit tools answered by the kit's own ``tools/call`` path
  (:class:`DirectCalls`, the result ``MCPServer`` would give with less in between), mcp's request spans
  dropped when no tracer is installed, seeded worlds copied by unpickling. With the switches off a
  server runs mcp's plain path. Only public mcp API is used.
* Nothing is timed by the kit: benchmarks attach their clocks through :mod:`servers.kit.hooks`.
* Tool failures are results a model can read: :class:`ToolFailure` subclasses carry a reason
  code and a message naming the argument or entity at fault. Unexpected exceptions are turned
  into a named ``internal_error`` instead of the SDK's generic "Error executing tool".

Modules: :mod:`~servers.kit.keys` (``_meta`` keys, switches, :func:`sensitive`), :mod:`~servers.kit.errors`,
:mod:`~servers.kit.world` (worlds and session stores), :mod:`~servers.kit.sessions` (which session a call
belongs to), :mod:`~servers.kit.toolset`, :mod:`~servers.kit.server` (:class:`EnvServer`),
:mod:`~servers.kit.fast_server` (the measured fast paths), :mod:`~servers.kit.hooks` (where benchmarks attach) and
:mod:`~servers.kit.domain` (a server's domain texts, its package's ``domain.yaml``).
"""

from servers.kit.domain import domain_texts
from servers.kit.errors import (
    InternalError,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    StateConflict,
    ToolFailure,
    not_found,
)
from servers.kit.fast_server import DirectCalls, FastPaths, direct_calls_wanted, telemetry_wanted, tracing_installed
from servers.kit.hooks import HOOKS, Hooks, WorkTimer
from servers.kit.keys import (
    ADMIN_PREFIX,
    CLOSE_META_KEY,
    DEFAULT_SESSION,
    DIRECT_CALLS_ENV,
    HIDDEN_META_KEY,
    RESET_META_KEY,
    SEED_META_KEY,
    SENSITIVE_KEY,
    SESSION_META_KEY,
    STATE_HASH_META_KEY,
    TELEMETRY_ENV,
    sensitive,
)
from servers.kit.server import Closed, EnvServer, SessionInfo, SessionState
from servers.kit.sessions import SessionBookkeeping, session_and_seed
from servers.kit.toolset import ToolDef, ToolSet
from servers.kit.world import SessionStore, World, seeded_world

__all__ = [
    "ADMIN_PREFIX",
    "CLOSE_META_KEY",
    "DEFAULT_SESSION",
    "DIRECT_CALLS_ENV",
    "HIDDEN_META_KEY",
    "RESET_META_KEY",
    "SEED_META_KEY",
    "SENSITIVE_KEY",
    "SESSION_META_KEY",
    "STATE_HASH_META_KEY",
    "TELEMETRY_ENV",
    "HOOKS",
    "Closed",
    "DirectCalls",
    "EnvServer",
    "FastPaths",
    "Hooks",
    "InternalError",
    "InvalidArgument",
    "NotFound",
    "PermissionDenied",
    "SessionBookkeeping",
    "SessionInfo",
    "SessionState",
    "SessionStore",
    "StateConflict",
    "ToolDef",
    "ToolFailure",
    "ToolSet",
    "World",
    "direct_calls_wanted",
    "not_found",
    "seeded_world",
    "sensitive",
    "session_and_seed",
    "telemetry_wanted",
    "tracing_installed",
    "WorkTimer",
    "domain_texts",
]
