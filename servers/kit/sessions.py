"""Which session a ``tools/call`` belongs to, and the bookkeeping keys a request may carry.

mcp calls a tool function with its arguments only; the request's ``_meta`` (session and seed) reaches the
kit's tool wrapper through :data:`REQUEST_META`, set around the call by :class:`SessionBookkeeping`. This is
the kit's only context variable: tool functions receive their session's world as their first argument.
"""

import contextvars
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from servers.kit.errors import InvalidArgument
from servers.kit.hooks import HandlerWork
from servers.kit.keys import (
    CLOSE_META_KEY,
    DEFAULT_SESSION,
    RESET_META_KEY,
    SEED_META_KEY,
    SESSION_META_KEY,
    STATE_HASH_META_KEY,
)
from servers.kit.world import SessionStore

if TYPE_CHECKING:
    from servers.kit.fast_server import DirectCalls


def session_and_seed(meta: Any, default_seed: int) -> tuple[str, int]:
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
REQUEST_META: contextvars.ContextVar[Any] = contextvars.ContextVar("prove_request_meta", default=None)


def session_of(default_seed: int) -> tuple[str, int]:
    """(session, seed) of the running tool call (the ``default`` session when it is called outside a request)."""
    return session_and_seed(REQUEST_META.get(), default_seed)


class SessionBookkeeping:
    """Server middleware applying the optional bookkeeping keys of a ``tools/call`` request's ``_meta``:
    ``prove/close`` (ids of sessions whose worlds to drop) and ``prove/reset`` (reset this session to its
    seed before the call), and answering ``prove/state_hash`` (the session's state hash after the call, put
    in the result's ``_meta`` under the same key: what ``prove_admin_state_hash`` would answer next).

    It runs before mcp looks the tool up or validates its arguments, so the keys hold even when the call
    they ride on fails there (an unknown tool, arguments that do not validate): a client sends a reset
    once and may rely on it. Being the innermost middleware, it then hands a plain call of a kit tool
    to ``direct`` (:class:`DirectCalls`), when the server has one."""

    def __init__(self, store: "SessionStore[Any]", default_seed: int, direct: "DirectCalls | None" = None):
        self.store, self.default_seed, self.direct = store, default_seed, direct

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        if ctx.method != "tools/call" or not ctx.params:
            return await call_next(ctx)
        meta = ctx.params.get("_meta")
        if isinstance(meta, dict) and (CLOSE_META_KEY in meta or RESET_META_KEY in meta):
            self.apply(meta)
        # the tool reads its session from here: a handler taking mcp's Context only for its ``_meta``
        # would cost a validated Context argument on every call
        token = REQUEST_META.set(meta)
        try:
            direct = self.direct
            if direct is not None and (tool := direct.tool_for(ctx)) is not None:
                result = await direct(tool, ctx, call_next)
            else:
                result = await call_next(ctx)
        finally:
            REQUEST_META.reset(token)
        if isinstance(meta, dict) and meta.get(STATE_HASH_META_KEY):
            result = self.with_state_hash(meta, result)
        return result

    def with_state_hash(self, meta: dict[str, Any], result: Any) -> Any:
        """``result`` with the session's state hash in its ``_meta`` (a result of another shape: as it is)."""
        with HandlerWork(count=False):  # the admin state_hash tool's work, timed as a handler's
            try:
                session, seed = session_and_seed(meta, self.default_seed)
            except InvalidArgument:
                return result
            digest = self.store.get(session, seed).state_hash()
        if isinstance(result, dict):
            return {**result, "_meta": {**(result.get("_meta") or {}), STATE_HASH_META_KEY: digest}}
        if hasattr(result, "meta") and hasattr(result, "model_copy"):
            return result.model_copy(update={"meta": {**(result.meta or {}), STATE_HASH_META_KEY: digest}})
        return result

    def apply(self, meta: dict[str, Any]) -> None:
        # the work the admin close and reset tools would do, so a handler timer counts it as theirs
        with HandlerWork(count=False):
            try:
                session, seed = session_and_seed(meta, self.default_seed)
            except InvalidArgument:
                return  # the tool call itself reports the bad seed
            closes = meta.get(CLOSE_META_KEY)
            if closes and isinstance(closes, list):
                for sid in closes:
                    if str(sid) != session:
                        self.store.close(str(sid))
            if meta.get(RESET_META_KEY):
                self.store.reset(session, seed)
