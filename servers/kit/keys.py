"""Names the kit shares with its clients: request ``_meta`` keys, environment switches, schema markers."""

from typing import Any

from pydantic import Field

SESSION_META_KEY = "prove/session"
SEED_META_KEY = "prove/seed"
# optional request ``_meta`` a client may add so session bookkeeping costs no extra round trip:
# reset this session to its seed before the call, and drop the worlds of sessions it has closed
RESET_META_KEY = "prove/reset"
CLOSE_META_KEY = "prove/close"
# asked for in a request's ``_meta``: the session's state hash after the call, answered in the result's ``_meta``
STATE_HASH_META_KEY = "prove/state_hash"
HIDDEN_META_KEY = "prove/hidden"
SENSITIVE_KEY = "x-sensitive"
DEFAULT_SESSION = "default"
ADMIN_PREFIX = "prove_admin_"
TELEMETRY_ENV = "PROVE_SERVER_TELEMETRY"
DIRECT_CALLS_ENV = "PROVE_DIRECT_CALLS"


def sensitive(description: str, **kw: Any) -> Any:
    """A pydantic ``Field`` marked sensitive (PIN, password, token) in the JSON schema."""
    extra = dict(kw.pop("json_schema_extra", {}) or {})
    extra[SENSITIVE_KEY] = True
    return Field(description=description, json_schema_extra=extra, **kw)
