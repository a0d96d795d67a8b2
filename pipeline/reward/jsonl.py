"""Scoring a JSONL file of trajectories with the reward (what ``prove reward`` runs).

One JSON object per line:

* ``tools``: the offered tool schemas (a list of objects or of their JSON texts, as a corpus row read from
  Parquet holds them, or one JSON string of the list);
* ``reference``: the reference calls ``[{name, arguments, depends_on}]`` (``[]`` for abstention), or the
  corpus's own per-turn layout ``[[...turn 0...], [...turn 1...]]`` (a list, ``arguments`` as objects or JSON
  texts, or the list's JSON string), whose
  ``depends_on`` indices are over the flattened reference;
* ``calls``: the model's calls ``[{name, arguments, ok}]`` (OpenAI ``tool_calls`` are accepted), flat or per
  user turn; ``ok`` is the live outcome, and calls without it are executed on a fresh session of ``server``;
* ``seed`` (or the corpus's ``env_seed``): the world seed of that session (default 0).

Flat calls against a per-turn reference are scored as one trajectory (the reference flattened). Per-turn
calls against a per-turn reference are scored with :func:`pipeline.reward.score.score_turns`: turn by turn when
``config.per_turn``, and the state match (``config.w_state`` with a server) is then the share of turns after
which the session's state equals the reference's replayed on a fresh session.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.env import Environment
from pipeline.reward.score import (
    COMPONENTS,
    RewardConfig,
    RewardInputError,
    execute_and_hash,
    parse_calls,
    parse_reference,
    parse_tools,
    replay_state_hashes,
    score,
    score_turns,
)


def _text(value: str, key: str, lineno: int) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        raise RewardInputError(f"line {lineno}: field '{key}': a string that is not valid JSON") from None


def _leaves(value: Any, key: str, lineno: int) -> Any:
    """The JSON-text leaves of a corpus row read from Parquet decoded: each tool of ``tools`` and each reference
    call's ``arguments`` (pipeline/corpus/columns.py)."""
    if isinstance(value, list):
        return [_text(v, key, lineno) if isinstance(v, str) else _leaves(v, key, lineno) for v in value]
    if isinstance(value, dict) and isinstance(value.get("arguments"), str) and key == "reference":
        return {**value, "arguments": _text(value["arguments"], key, lineno)}
    return value


def _decoded(rec: dict[str, Any], key: str, lineno: int) -> Any:
    value = rec[key]
    if isinstance(value, str):  # a corpus written before its columns were nested held JSON strings
        return _text(value, key, lineno)
    return _leaves(value, key, lineno) if key in ("tools", "reference") else value


def _per_turn(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(t, list) for t in value)


def _reference_turns(obj: Any, lineno: int) -> tuple[list[dict[str, Any]], list[int] | None]:
    """The flattened reference and, for the per-turn layout, each turn's length."""
    if not _per_turn(obj):
        return parse_reference(obj, lineno), None
    flat = parse_reference([g for turn in obj for g in turn], lineno)
    return flat, [len(t) for t in obj]


def _calls_turns(obj: Any, lineno: int) -> list[list[dict[str, Any]]] | None:
    if not _per_turn(obj):
        return None
    return [parse_calls(turn, lineno, f"calls[{t}]") for t, turn in enumerate(obj)]


def _split(flat: list[dict[str, Any]], sizes: list[int]) -> list[list[dict[str, Any]]]:
    out, i = [], 0
    for n in sizes:
        out.append(flat[i : i + n])
        i += n
    return out


class _Live:
    """Executes calls without a recorded outcome on fresh sessions of one server, and compares states."""

    def __init__(self, server: str | None) -> None:
        self.server, self.env = server, None

    def environment(self):
        if self.env is None:
            self.env = Environment(self.server)
        return self.env

    def run(
        self, turns: list[list[dict[str, Any]]], seed: int, want_state: bool
    ) -> tuple[list[list[dict[str, Any]]], list[str | None]]:
        s = self.environment().session(seed)
        try:
            executed, hashes = [], []
            for calls in turns:
                done, digest = execute_and_hash(s, calls, state_hash=want_state)
                executed.append(done)
                hashes.append(digest)
            return executed, hashes
        finally:
            s.close()

    def close(self) -> None:
        if self.env is not None:
            self.env.close()


def _score_line(rec: dict[str, Any], lineno: int, cfg: RewardConfig, live: _Live) -> dict[str, Any]:
    for key in ("tools", "reference", "calls"):
        if key not in rec:
            raise RewardInputError(f"line {lineno}: field '{key}' is missing")
    idx = parse_tools(_decoded(rec, "tools", lineno), lineno)
    ref, sizes = _reference_turns(_decoded(rec, "reference", lineno), lineno)
    raw_calls = _decoded(rec, "calls", lineno)
    call_turns = _calls_turns(raw_calls, lineno)
    turn_wise = sizes is not None and call_turns is not None
    if turn_wise and len(call_turns) != len(sizes):
        raise RewardInputError(
            f"line {lineno}: field 'calls': {len(call_turns)} turns of calls but the reference has {len(sizes)}"
        )
    if cfg.per_turn and not turn_wise:
        raise RewardInputError(
            f"line {lineno}: per-turn scoring needs 'reference' and 'calls' both as lists per user turn"
        )
    turns = (
        call_turns
        if turn_wise
        else [[c for t in call_turns for c in t] if call_turns is not None else parse_calls(raw_calls, lineno)]
    )
    ref_turns = _split(ref, sizes) if turn_wise else [ref]
    seed = rec.get("seed", rec.get("env_seed", 0))
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise RewardInputError(f"line {lineno}: field 'seed': expected an integer, got {seed!r}")
    need_live = any("ok" not in c for t in turns for c in t)
    want_state = bool(cfg.w_state) and live.server is not None
    state_per_turn = None
    if need_live or want_state:
        if live.server is None:
            t, i = next((t, i) for t, calls in enumerate(turns) for i, c in enumerate(calls) if "ok" not in c)
            where = f"calls[{t}][{i}]" if turn_wise else f"calls[{i}]"
            raise RewardInputError(
                f"line {lineno}: field '{where}.ok' is missing; pass --server NAME to execute the calls live"
            )
        executed, hashes = live.run(turns, seed, want_state)
        turns = executed if need_live else turns
        if want_state:
            want = replay_state_hashes(live.environment(), seed, ref_turns)
            state_per_turn = [h is not None and h == w for h, w in zip(hashes, want)]
    if turn_wise:
        b = score_turns(turns, ref_turns, idx, cfg, state_per_turn=state_per_turn)
    else:
        b = score(turns[0], ref, idx, cfg, state_match=None if state_per_turn is None else state_per_turn[-1])
    row = {k: getattr(b, k) + 0.0 for k in COMPONENTS}  # + 0.0: never a negative zero
    if b.state is not None:
        row["state"] = b.state + 0.0
    return row


def score_jsonl(
    path: str | Path, server: str | None = None, config: RewardConfig | None = None
) -> list[dict[str, Any]]:
    """Score every line of a JSONL file (see the module docstring); an empty file is an error."""
    cfg = config or RewardConfig()
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such file: {p}")
    live = _Live(server)
    results: list[dict[str, Any]] = []
    try:
        with p.open(encoding="utf-8") as fh:
            for lineno, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                try:
                    rec = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise RewardInputError(f"line {lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
                if not isinstance(rec, dict):
                    raise RewardInputError(f"line {lineno}: expected a JSON object, got {type(rec).__name__}")
                results.append(_score_line(rec, lineno, cfg, live))
    finally:
        live.close()
    if not results:
        raise RewardInputError(f"{p}: no trajectories (the file is empty); expected one JSON object per line")
    return results
