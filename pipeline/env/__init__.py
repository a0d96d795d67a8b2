"""The environment client: one synchronous interface over built-in and third-party MCP servers.

``Environment(config)`` connects (in process, over stdio or over streamable HTTP;
:mod:`~pipeline.env.transport`) and hands out :class:`Session` objects, kept apart by the
isolation strategy the config names (:mod:`~pipeline.env.isolation`): ``meta`` (built-in servers:
every session a separate world on one connection, named in the request ``_meta``), ``process`` (a
server process and a fresh copy of its files per session; :mod:`~pipeline.env.workdir`) or
``none`` (one world, reset by the server's reset tool).

The plain SDK path is the default reading of the code; the measured fast paths (an in-process loop
driven by the calling thread, kit results not re-validated on the client, reset/close riding on the
next request) live in :mod:`~pipeline.env.fast_client` behind one switch, ``PROVE_FAST_PATHS``.
Benchmarks observe every tool call through :data:`CALL_OBSERVERS` (``bench/clocks.py``).
"""

from pipeline.env.connection import CALL_OBSERVERS, Connection, classify_error, result_to_call
from pipeline.env.environment import Environment, ServerBudgetExceeded, Session
from pipeline.env.fast_client import FAST_PATHS_ENV, InlineLoop, fast_paths_wanted
from pipeline.env.transport import EnvironmentError_, free_port, wait_for_port
from servers.kit.keys import ADMIN_PREFIX

ADMIN_TOOLS = ("reset", "state_hash", "state", "close")

__all__ = [
    "ADMIN_PREFIX",
    "ADMIN_TOOLS",
    "CALL_OBSERVERS",
    "FAST_PATHS_ENV",
    "Connection",
    "Environment",
    "EnvironmentError_",
    "InlineLoop",
    "ServerBudgetExceeded",
    "Session",
    "classify_error",
    "fast_paths_wanted",
    "free_port",
    "result_to_call",
    "wait_for_port",
]
