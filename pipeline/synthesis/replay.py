"""Replay validation on a freshly reset session.

Rules (each rejection names its rule as the reason code):

* ``error_rate``: schema and execution errors over all executed calls above the threshold (30%)
  reject. An empty result is not an error. A corrected wrong attempt (a recovery demonstration)
  is a schema error like any other; the simulator only adds them within this budget.
* ``replay_mismatch``: a replayed call's outcome or result differs from the recorded one.
* ``nondeterministic``: executing the trace twice does not reach the same final state. The
  simulation that recorded the trace is the first execution when the conversation carries its
  final state hash (its results are checked call by call against the replay), so
  ``determinism_runs=2`` costs one replay; without a recorded hash the trace is replayed twice.
* ``sensitive_provenance``: a sensitive argument (PIN, password, token) whose value appears in no
  earlier user turn or tool output.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.core import rules
from pipeline.core.config import ReplayConfig
from pipeline.core.records import Conversation, Rejection, TraceCall, rejection
from pipeline.core.stage_names import StageName
from pipeline.env import Environment
from pipeline.env.workdir import needs_workdir, same_answer, same_result


def trace_errors(conv: Conversation) -> tuple[int, int]:
    """Executed calls and failed calls of the conversation's trace (recovery attempts included)."""
    return len(conv.trace), sum(1 for t in conv.trace if not t.ok)


def error_rate(conv: Conversation) -> float:
    """The share of the conversation's executed calls that failed (:func:`pipeline.core.rules.error_rate`)."""
    return rules.error_rate(*trace_errors(conv))


def replay_trace(env: Environment, conv: Conversation) -> tuple[list[dict[str, Any]], str | None]:
    with env.session(conv.seed, setup=conv.setup) as s:  # the recorded set-up, repeated
        s.reset()
        out = []
        for i, t in enumerate(conv.trace):
            r = s.call(
                t.name, t.arguments, hash_after=i == len(conv.trace) - 1
            )  # the final state's hash comes with the last call
            out.append({"ok": r.ok, "error_code": r.error_code, "error": r.error, "result": r.data if r.ok else None})
        return out, s.state_hash()


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


def _first_difference(recorded: Any, replayed: Any, path: str = "result") -> str:
    """Where two results first differ, as ``path: recorded X, replayed Y``."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for k in sorted(set(recorded) | set(replayed), key=str):
            if k not in replayed:
                return f"{path}.{k}: recorded {_short(recorded[k])}, missing on replay"
            if k not in recorded:
                return f"{path}.{k}: not recorded, replayed {_short(replayed[k])}"
            if recorded[k] != replayed[k]:
                return _first_difference(recorded[k], replayed[k], f"{path}.{k}")
    if isinstance(recorded, list) and isinstance(replayed, list):
        if len(recorded) != len(replayed):
            return f"{path}: recorded {len(recorded)} items, replayed {len(replayed)}"
        for i, (a, b) in enumerate(zip(recorded, replayed)):
            if a != b:
                return _first_difference(a, b, f"{path}[{i}]")
    return f"{path}: recorded {_short(recorded)}, replayed {_short(replayed)}"


def describe_mismatch(i: int, recorded: TraceCall, replayed: dict[str, Any]) -> str:
    """Why replayed call ``i`` does not match the recording: the outcome, or where the results differ."""
    name = recorded.name
    if recorded.ok and not replayed["ok"]:
        return (
            f"call {i} {name} succeeded when recorded but failed on replay: "
            f"{replayed['error_code']}: {replayed.get('error')}"
        )
    if not recorded.ok and replayed["ok"]:
        return (
            f"call {i} {name} failed when recorded ({recorded.error_code}: {recorded.error}) "
            f"but succeeded on replay with {_short(replayed['result'])}"
        )
    return f"call {i} {name} returned a different result on replay: " + _first_difference(
        recorded.result, replayed["result"]
    )


def sensitive_violations(conv: Conversation) -> list[str]:
    called = {tc.function.name for m in conv.messages if m.role == "assistant" for tc in m.tool_calls or ()}
    sens = {t.name: set(t.sensitive) for t in conv.tools if t.name in called}  # the offered tools that were called
    seen_text = ""
    bad = []
    for m in conv.messages:
        if m.role in ("user", "tool"):
            seen_text += "\n" + (m.content or "")
        elif m.role == "assistant" and m.tool_calls:
            for tc in m.tool_calls:
                fn = tc.function
                args = json.loads(fn.arguments)
                for p in sens.get(fn.name, ()):
                    if p in args and str(args[p]) not in seen_text:
                        bad.append(f"{fn.name}.{p}")
    return bad


def validate(env: Environment, conv: Conversation, cfg: ReplayConfig) -> Rejection | None:
    up = {
        "snapshot_id": conv.snapshot_id,
        "chain_id": conv.chain_id,
        "query_id": conv.query_id,
        "conversation_id": conv.conversation_id,
    }
    calls, fails = trace_errors(conv)
    if rules.over_budget(calls, fails, cfg.max_error_rate):
        rate = rules.error_rate(calls, fails)
        failing = [f"{t.name}: {t.error_code}: {t.error}" for t in conv.trace if not t.ok]
        return rejection(
            StageName.REPLAY,
            "error_rate",
            f"{rate:.0%} of calls failed (max {cfg.max_error_rate:.0%}); failing calls: {failing}",
            conv.server,
            up,
            conv,
        )
    if cfg.check_sensitive:
        bad = sensitive_violations(conv)
        if bad:
            return rejection(
                StageName.REPLAY,
                "sensitive_provenance",
                f"sensitive arguments not given by the user or a tool output: {bad}",
                conv.server,
                up,
                conv,
            )
    # a server run in a copy of its files may show the copy's own file times: compared without times of day
    copied = needs_workdir(env.config)

    def same(t: TraceCall, r: dict[str, Any]) -> bool:
        return same_answer(t.result, r["result"]) or (copied and same_result(t.result, r["result"]))

    hashes = []
    # the recorded simulation is one execution already when its final state hash was recorded
    runs = max(1, cfg.determinism_runs - (1 if conv.final_state_hash else 0))
    for _run in range(runs):
        results, h = replay_trace(env, conv)
        for i, (t, r) in enumerate(zip(conv.trace, results)):
            if t.ok != r["ok"] or (t.ok and not same(t, r)):
                return rejection(StageName.REPLAY, "replay_mismatch", describe_mismatch(i, t, r), conv.server, up, conv)
        hashes.append(h)
    if len(set(hashes)) > 1 or (conv.final_state_hash and hashes and hashes[0] != conv.final_state_hash):
        return rejection(
            StageName.REPLAY,
            "nondeterministic",
            f"final state hashes differ across replays: {sorted(set(hashes))}",
            conv.server,
            up,
            conv,
        )
    return None
