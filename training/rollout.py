"""Rollouts on live environments: parse the tool calls out of generated text, run them on a fresh session,
and score them with :mod:`pipeline.reward.score`.

Every rollout gets its own ``Environment(server).session(env_seed)`` (the environments themselves are opened
once per server and kept in an :class:`EnvPool`), so one rollout's writes never reach another's. Nothing here
raises on bad model output or a broken server: malformed JSON, an unknown tool, a server that cannot start,
dies or hangs past its timeout all end as failed calls (``ok=False`` with an ``error_code``) that the reward
scores, and the training step goes on.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.core.config import ServerConfig
from pipeline.env import Environment
from pipeline.reward.score import RewardBreakdown, RewardConfig, replay_state_hashes, score, tool_index

_TOOL_CALL_RE = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|(?=<tool_call>)|$)", re.S)


def parse_tool_calls(text: str) -> list[dict[str, Any]]:
    """The calls in ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks, in order.

    A block that is not a JSON object with a string ``name`` becomes ``{"name": "", "arguments": None,
    "malformed": True}`` (it counts as a call and scores as invalid). ``arguments`` may also be a JSON string
    or be called ``parameters``. An unterminated last block is read to the end of the text.
    """
    out: list[dict[str, Any]] = []
    for m in _TOOL_CALL_RE.finditer(text):
        body = m.group(1).strip()
        try:
            obj = json.loads(body)
        except ValueError:
            obj = None
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
            out.append({"name": "", "arguments": None, "malformed": True, "raw": body[:200]})
            continue
        args = obj.get("arguments", obj.get("parameters", {}))
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                pass
        out.append({"name": obj["name"], "arguments": {} if args is None else args})
    return out


@dataclass
class Rollout:
    calls: list[dict[str, Any]]  # parsed calls with ok / error_code from live execution
    state_hash: str | None = None
    error: str | None = None  # a server/environment failure that cut the rollout short
    env_seconds: float = 0.0


@dataclass
class EnvPool:
    """One open :class:`Environment` per server; sessions are per rollout. Close when done.

    ``configs`` maps a server name to its :class:`ServerConfig` (default: the built-in server of that name).
    ``rollout_timeout_s`` bounds a whole rollout: calls left when it runs out are not sent and count as failed.
    """

    configs: dict[str, ServerConfig] = field(default_factory=dict)
    rollout_timeout_s: float = 30.0
    _envs: dict[str, Environment] = field(default_factory=dict)
    _broken: dict[str, str] = field(default_factory=dict)
    _ref_hash: dict[tuple[str, int, str], str | None] = field(default_factory=dict)
    _ref_turn_hashes: dict[tuple[str, int, str], list[str | None]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def env(self, server: str) -> Environment:
        with self._lock:
            if server in self._broken:
                raise RuntimeError(self._broken[server])
            e = self._envs.get(server)
            if e is None:
                try:
                    e = Environment(self.configs.get(server) or server)
                except Exception as exc:
                    self._broken[server] = f"cannot open environment {server!r}: {type(exc).__name__}: {exc}"
                    raise RuntimeError(self._broken[server]) from exc
                self._envs[server] = e
            return e

    def reference_state_hash(self, server: str, seed: int, reference: Sequence[Mapping[str, Any]]) -> str | None:
        key = (server, seed, json.dumps(reference, sort_keys=True, default=str))
        if key not in self._ref_hash:
            try:
                self._ref_hash[key] = replay_state_hashes(self.env(server), seed, [reference])[-1]
            except Exception:
                self._ref_hash[key] = None
        return self._ref_hash[key]

    def reference_state_hashes(
        self, server: str, seed: int, reference_per_turn: Sequence[Sequence[Mapping[str, Any]]]
    ) -> list[str | None]:
        """The state hash after each user turn of the reference, replayed on a fresh session (cached)."""
        key = (server, seed, json.dumps(reference_per_turn, sort_keys=True, default=str))
        if key not in self._ref_turn_hashes:
            try:
                self._ref_turn_hashes[key] = replay_state_hashes(self.env(server), seed, reference_per_turn)
            except Exception:
                self._ref_turn_hashes[key] = [None] * len(reference_per_turn)
        return self._ref_turn_hashes[key]

    def close(self) -> None:
        with self._lock:
            for e in self._envs.values():
                try:
                    e.close()
                except Exception:
                    pass
            self._envs.clear()

    def __enter__(self) -> EnvPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _failed(calls: Sequence[dict[str, Any]], code: str) -> list[dict[str, Any]]:
    return [{**c, "ok": False, "error_code": code} for c in calls]


def _error_content(code: str, message: str) -> str:
    return json.dumps({"error": code, "message": message})


def run_call(
    session: Any, call: dict[str, Any], deadline: float, unavailable: str | None = None
) -> tuple[dict[str, Any], str, str | None]:
    """Run one parsed call on a rollout's session (``None``: it never opened, ``unavailable`` says why); never raises.

    Returns the call with ``ok`` / ``error_code``, the tool message content the policy reads, and, when the
    environment itself failed (no session, the rollout's time ran out, the server broke), what went wrong."""
    if call.get("malformed") or not call.get("name") or not isinstance(call.get("arguments"), dict):
        return (
            {**call, "ok": False, "error_code": "malformed_call"},
            _error_content("malformed_call", "the tool call is not a JSON object with a name and object arguments"),
            None,
        )
    if session is None:
        why = unavailable or "the environment is not available"
        return {**call, "ok": False, "error_code": "server_error"}, _error_content("server_error", why), why
    if time.perf_counter() > deadline:
        return (
            {**call, "ok": False, "error_code": "timeout"},
            _error_content("timeout", "the rollout ran out of time"),
            "timeout",
        )
    try:
        r = session.call(call["name"], call["arguments"])
    except Exception as exc:
        why = f"{type(exc).__name__}: {exc}"
        return {**call, "ok": False, "error_code": "server_error"}, _error_content("server_error", why), why
    return {**call, "ok": bool(r.ok), "error_code": r.error_code}, r.as_tool_content(), None


def execute_rollout(
    calls: Sequence[dict[str, Any]], server: str, seed: int, pool: EnvPool, want_state: bool = False
) -> Rollout:
    """Run parsed calls in order on a fresh session (one completion's calls); never raises. The first
    environment failure fails the calls left."""
    t0 = time.perf_counter()
    if not calls and not want_state:
        return Rollout(calls=[])
    try:
        session = pool.env(server).session(seed)
    except Exception as exc:
        return Rollout(calls=_failed(calls, "server_error"), error=str(exc), env_seconds=time.perf_counter() - t0)
    out: list[dict[str, Any]] = []
    error = None
    deadline = t0 + pool.rollout_timeout_s
    try:
        for i, c in enumerate(calls):
            rec, _, failure = run_call(session, c, deadline)
            out.append(rec)
            if failure is not None:
                error = f"rollout timed out after {pool.rollout_timeout_s:.0f}s" if failure == "timeout" else failure
                out.extend(_failed(calls[i + 1 :], rec["error_code"]))
                break
        state = session.state_hash() if want_state and error is None else None
    except Exception as exc:
        error, state = f"{type(exc).__name__}: {exc}", None
    finally:
        try:
            session.close()
        except Exception:
            pass
    return Rollout(calls=out, state_hash=state, error=error, env_seconds=time.perf_counter() - t0)


def score_completion(
    text: str,
    tools: str | Sequence[Mapping[str, Any]],
    reference: Sequence[Mapping[str, Any]],
    server: str,
    seed: int,
    pool: EnvPool,
    config: RewardConfig | None = None,
) -> tuple[RewardBreakdown, Rollout]:
    """Parse, execute live, score. Never raises on model output or environment failure."""
    cfg = config or RewardConfig()
    calls = parse_tool_calls(text)
    want_state = bool(cfg.w_state)
    ro = execute_rollout(calls, server, seed, pool, want_state=want_state)
    state = None
    if want_state:
        ref_hash = pool.reference_state_hash(server, seed, reference)
        state = ro.state_hash is not None and ro.state_hash == ref_hash
    return score(ro.calls, reference, tool_index(tools), cfg, state_match=state), ro
