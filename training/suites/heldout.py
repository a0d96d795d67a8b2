"""The frozen held-out suite: a corpus version's eval split, frozen once and pinned by content hash, so every
later policy and every later corpus version is scored on the same items.

``freeze(corpus_dir, suites_root, name)`` copies the eval rows (sorted by example id; optionally some servers
only, or the first ``limit``) into ``<suites_root>/<name>/items.parquet`` with ``suite.json`` (the source
version, the servers, the count and ``items_hash``, a hash of the rows' canonical JSON). ``open_suite`` checks
the hash before anything is played: a suite whose items changed is refused, naming both hashes.

Each item is played live on its own session of its server at its seed (:class:`HeldoutEpisode`), every user
turn of the conversation in order (up to ``max_user_turns``), and scored with the one programmatic reward
(:func:`pipeline.reward.score.score_turns`, per user turn): the total and its components, exact success on tool
tasks, abstention on items where no call is right.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.core.records import stable_hash
from pipeline.core.storage import atomic_dir, atomic_write_json
from pipeline.reward.score import RewardBreakdown, RewardConfig, score_turns
from training.data import REQUIRED_COLUMNS, Task, task_from_row
from training.episodes import Episode, play
from training.rollout import EnvPool, run_call

SUITE = "heldout"
ITEM_COLUMNS = ("example_id", "kind", "servers", "env_seed", "messages", "tools", "reference")


class SuiteError(ValueError):
    """A suite that cannot be made or read (the message names it and the problem)."""


def _canonical_rows(table: Any) -> list[dict[str, Any]]:
    rows = table.select(list(REQUIRED_COLUMNS)).to_pylist()
    return sorted(rows, key=lambda r: str(r["example_id"]))


def items_hash(rows: list[dict[str, Any]]) -> str:
    return stable_hash(rows, 16)


def freeze(
    corpus_dir: str | Path,
    suites_root: str | Path,
    name: str | None = None,
    servers: list[str] | None = None,
    limit: int | None = None,
    origin: dict[str, Any] | None = None,
) -> Path:
    """Freeze the eval split of ``corpus_dir`` as a suite; returns its folder (an existing suite of the same name
    and the same items is returned as it is; one with other items is refused). ``origin``: how the corpus was made
    (``prove eval freeze --build``: the named build's servers, size and seed), kept in ``suite.json``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = Path(corpus_dir) / "eval.parquet"
    if not src.exists():
        raise SuiteError(f"no eval split at {src}: freeze a corpus version folder")
    rows = _canonical_rows(pq.read_table(src))
    if servers:
        unknown = sorted(set(servers) - {s for r in rows for s in r["servers"]})
        if unknown:
            raise SuiteError(f"{src}: no eval example on server(s) {', '.join(unknown)}")
        rows = [r for r in rows if r["servers"][0] in servers]
    rows = rows[:limit] if limit else rows
    if not rows:
        raise SuiteError(f"{src}: no eval example to freeze")
    digest = items_hash(rows)
    name = name or f"heldout-{Path(corpus_dir).name}-{digest[:8]}"
    final = Path(suites_root) / name
    if final.exists():
        have = json.loads((final / "suite.json").read_text())
        if have.get("items_hash") != digest:
            raise SuiteError(
                f"suite {name} already exists at {final} with other items ({have.get('items_hash')}); "
                "choose another name"
            )
        return final
    meta = {
        "name": name,
        "suite": SUITE,
        "source_version": Path(corpus_dir).name,
        "servers": sorted({r["servers"][0] for r in rows}),
        "n_items": len(rows),
        "by_kind": {k: sum(r["kind"] == k for r in rows) for k in sorted({r["kind"] for r in rows})},
        "items_hash": digest,
        **({"origin": origin} if origin else {}),
    }
    with atomic_dir(final) as tmp:
        pq.write_table(pa.Table.from_pylist(rows), tmp / "items.parquet")
        atomic_write_json(tmp / "suite.json", meta)
    return final


@dataclass
class FrozenSuite:
    path: Path
    meta: dict[str, Any]
    tasks: list[Task]

    @property
    def name(self) -> str:
        return str(self.meta["name"])


def open_suite(path: str | Path) -> FrozenSuite:
    """A frozen suite, its items checked against the pinned hash (:class:`SuiteError` naming both if not)."""
    import pyarrow.parquet as pq

    p = Path(path)
    if not (p / "suite.json").exists() or not (p / "items.parquet").exists():
        raise SuiteError(f"{p}: not a frozen suite (no suite.json / items.parquet); make one with `prove eval freeze`")
    meta = json.loads((p / "suite.json").read_text())
    rows = _canonical_rows(pq.read_table(p / "items.parquet"))
    got = items_hash(rows)
    if got != meta.get("items_hash"):
        raise SuiteError(
            f"suite {p.name}: its items hash {got} does not match the pinned {meta.get('items_hash')} "
            f"(items.parquet changed since it was frozen); freeze it again under a new name"
        )
    tasks = [task_from_row(r, f"{p.name} item {i}") for i, r in enumerate(rows)]
    return FrozenSuite(p, meta, tasks)


class HeldoutEpisode(Episode):
    """One held-out item on its own live session."""

    def __init__(self, task: Task, pool: EnvPool, max_user_turns: int):
        prompt = [dict(m) for m in task.prompt]
        super().__init__(item_id=task.example_id, messages=prompt, user_turns=list(task.user_turns), tools=task.tools)
        self.task = task
        self.pool = pool
        self.n_turns = min(task.n_turns, max_user_turns)
        self.session = None
        try:
            self.session = pool.env(task.server).session(task.env_seed)
        except Exception as exc:  # the calls fail as server errors; the item still plays
            self.error = f"{type(exc).__name__}: {exc}"

    def execute(self, calls: list[dict[str, Any]]) -> list[str]:
        import time

        deadline = time.perf_counter() + self.pool.rollout_timeout_s
        contents = []
        for c in calls:
            rec, content, _ = run_call(self.session, c, deadline, self.error)
            self.calls_per_turn[-1].append(rec)
            contents.append(content)
        return contents

    def close(self) -> None:
        if self.session is not None:
            try:
                self.session.close()
            finally:
                self.session = None

    def score(self, reward: RewardConfig) -> RewardBreakdown:
        n = self.n_turns
        calls = (self.calls_per_turn + [[] for _ in range(n)])[:n]
        try:
            return score_turns(calls, self.task.reference[:n], self.task.tools, reward)
        except Exception:  # a malformed item: scored as a failed rollout
            return RewardBreakdown()


def record(ep: HeldoutEpisode, b: RewardBreakdown) -> dict[str, Any]:
    """One per-item row of the results table."""
    abstain = ep.task.abstain
    return {
        "suite": SUITE,
        "category": ep.task.kind,
        "item_id": ep.item_id,
        "server": ep.task.server,
        "valid": bool(b.exact),
        "reward": float(b.total),
        **{k: float(getattr(b, k)) for k in ("validity", "coverage", "efficiency", "name", "args")},
        "abstain_expected": abstain,
        "abstained": b.n_calls == 0,
        "n_calls": int(b.n_calls),
        "n_turns": ep.n_turns,
        "error_type": None if b.exact else ("called_when_it_should_not" if abstain else "not_exact"),
        "error_message": ep.error,
        "messages": json.dumps(ep.messages, ensure_ascii=False, default=str),
        "calls": json.dumps(ep.calls_per_turn, ensure_ascii=False, default=str),
        "reference": json.dumps(ep.task.reference[: ep.n_turns], ensure_ascii=False, default=str),
    }


def run_heldout(
    policy: Any,
    suite: FrozenSuite,
    limit: int | None = None,
    max_user_turns: int = 5,
    max_steps_per_turn: int = 10,
    reward: RewardConfig | None = None,
    on_step: Any = None,
    pool: EnvPool | None = None,
) -> list[dict[str, Any]]:
    """Play the suite's items (the first ``limit`` by example id) with ``policy``; one record per item."""
    reward = reward or RewardConfig(per_turn=True)
    tasks = suite.tasks[:limit] if limit else suite.tasks
    own = pool is None
    pool = pool or EnvPool()
    try:
        eps = [HeldoutEpisode(t, pool, max_user_turns) for t in tasks]
        play(policy, eps, max_steps_per_turn=max_steps_per_turn, max_user_turns=max_user_turns, on_step=on_step)
        return [record(ep, ep.score(reward)) for ep in eps]
    finally:
        if own:
            pool.close()
