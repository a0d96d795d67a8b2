"""The per-server synthesis steps: write the user's requests (dry runs), play the conversations, replay them.

Each step is built from its own config section (``Step.of(cfg)``); the ``stage_*`` functions are
the entry points the assets call.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.core.composition import Composition
from pipeline.core.config import BuildConfig, QueryConfig, ReplayConfig, SimulateConfig
from pipeline.core.records import Chain, Conversation, Snapshot, UserQuery, rejection
from pipeline.core.redact import Redactor
from pipeline.core.speedups import heap_settled
from pipeline.core.stage_names import StageName
from pipeline.env import Environment, ServerBudgetExceeded
from pipeline.language.teacher_client import prefetched, usage_numbers
from pipeline.language.value_plans import ValueMemo
from pipeline.stages.base import (
    Markdown,
    Produced,
    Progress,
    StageOutput,
    cache_dir,
    server_env,
    stage_rng,
    teacher_progress,
)
from pipeline.synthesis.queries import LLMBackend, make_backend
from pipeline.synthesis.replay import validate
from pipeline.synthesis.simulate import plan_query, run_conversation


def assign_levels(chains: list[Chain], plan: list[str]) -> list[str]:
    """Give the "missing" level to chains whose first call takes a value from the user (only those
    have something the user can leave out); the other levels keep the plan's order."""
    eligible = [i for i, c in enumerate(chains) if any(src.kind == "user" for src in c.steps[0].args.values())]
    missing = set(eligible[: plan.count("missing")])
    rest = iter([lvl for lvl in plan if lvl != "missing"])
    return ["missing" if i in missing else next(rest, "complete") for i in range(len(chains))]


@dataclass(frozen=True)
class QueryStep:
    """Resolve each chain's arguments on a scratch session and write the user's request per turn."""

    simulate: SimulateConfig
    query: QueryConfig
    max_error_rate: float  # the replay's error budget (:mod:`pipeline.core.rules`): a dry run over it is rejected here
    composition: Composition
    seed: int
    llm_cache: Path
    teacher_slots: int = 1  # the build's steps that may ask the teacher at once (they share its max_concurrency)

    @classmethod
    def of(cls, cfg: BuildConfig) -> QueryStep:
        return cls(
            cfg.simulate,
            cfg.query,
            cfg.replay.max_error_rate,
            Composition.of(cfg),
            cfg.seed,
            cache_dir(cfg.query.cache_dir, cfg.data_path, "llm"),
            cfg.deployment.steps_at_once,
        )

    def run(
        self, env: Environment, snap: Snapshot, chains: list[Chain], progress: Progress | None = None
    ) -> StageOutput:
        backend = make_backend(self.query, self.llm_cache, self.teacher_slots)
        teacher = getattr(backend, "teacher", None)
        out = prefetched(
            teacher,
            lambda final: self._plan_all(env, snap, chains, backend, progress if final else None),
            teacher_progress(progress),
        )
        out.stats = {
            "queries": len(out.items),
            "backend": backend.name,
            "contexts": len({q.snapshot_id for q in out.items}),
            "info_levels": dict(Counter(q.info_level for q in out.items)),
        }
        if teacher is not None:
            out.stats.update(
                llm_calls=backend.calls, llm_cache_hits=backend.cache_hits, teacher=teacher.usage.as_dict()
            )
        return out

    def _plan_all(
        self, env: Environment, snap: Snapshot, chains: list[Chain], backend: Any, progress: Progress | None
    ) -> StageOutput:
        out = StageOutput()
        levels = assign_levels(
            chains, self.composition.level_plan(len(chains), f"{self.seed}:{snap.server}:levels", generation=True)
        )
        memo = ValueMemo()
        for i, chain in enumerate(chains):
            rng = stage_rng(self.seed, "query", chain.chain_id)
            q, rej = plan_query(
                env,
                snap.context(chain.snapshot_id),
                chain,
                backend,
                self.simulate,
                self.query,
                rng,
                info_level=levels[i],
                max_error_rate=self.max_error_rate,
                memo=memo,
            )
            if q is not None:
                out.items.append(q)
            if rej is not None:
                out.rejections.append(rej)
            if progress:
                progress(i + 1, len(chains))
        return out


@dataclass(frozen=True)
class ConversationStep:
    """Play every request live on a fresh session of its chain's seed."""

    recovery_rate: float
    max_error_rate: float  # recovery demonstrations are added only within the replay's error budget
    query: QueryConfig  # the reference date, and the teacher that writes the replies (``backend: llm``)
    seed: int
    llm_cache: Path
    teacher_slots: int = 1  # the build's steps that may ask the teacher at once (they share its max_concurrency)

    @classmethod
    def of(cls, cfg: BuildConfig) -> ConversationStep:
        return cls(
            cfg.simulate.recovery_rate,
            cfg.replay.max_error_rate,
            cfg.query,
            cfg.seed,
            cache_dir(cfg.query.cache_dir, cfg.data_path, "llm"),
            cfg.deployment.steps_at_once,
        )

    def replier(self) -> Any | None:
        if self.query.backend != "llm":
            return None

        return LLMBackend(self.query, self.llm_cache, steps_at_once=self.teacher_slots)

    def run(
        self,
        env: Environment,
        snap: Snapshot,
        chains: list[Chain],
        queries: list[UserQuery],
        progress: Progress | None = None,
    ) -> StageOutput:
        replier = self.replier()
        out = prefetched(
            replier.teacher if replier is not None else None,
            lambda final: self._play_all(env, snap, chains, queries, replier, progress if final else None),
            teacher_progress(progress),
        )
        out.stats = {
            "conversations": len(out.items),
            "outcomes": dict(Counter(o for c in out.items for o in c.outcomes)),
        }
        if replier is not None:
            out.stats.update(
                reply_calls=replier.calls,
                reply_cache_hits=replier.cache_hits,
                reply_fallbacks=replier.reply_fallbacks,
                teacher=replier.teacher.usage.as_dict(),
            )
        return out

    def _play_all(
        self,
        env: Environment,
        snap: Snapshot,
        chains: list[Chain],
        queries: list[UserQuery],
        replier: LLMBackend | None,
        progress: Progress | None,
    ) -> StageOutput:
        by_id = {c.chain_id: c for c in chains}
        out = StageOutput()
        if replier is not None:
            replier.reply_fallbacks = 0  # counted on the run that is kept
        for i, q in enumerate(queries):
            rng = stage_rng(self.seed, "conv", q.query_id)
            try:
                out.items.append(
                    run_conversation(
                        env,
                        snap.context(q.snapshot_id),
                        by_id[q.chain_id],
                        q,
                        rng,
                        recovery_rate=self.recovery_rate,
                        max_error_rate=self.max_error_rate,
                        reference_date=self.query.reference_date,
                        replier=replier,
                    )
                )
            except ServerBudgetExceeded:  # the server's time is up: its partition ends here
                raise
            except Exception as exc:  # a crashed or hung server rejects this conversation, the build goes on
                out.rejections.append(
                    rejection(
                        StageName.SIMULATE,
                        "server_failure",
                        f"{type(exc).__name__}: {exc}",
                        snap.server,
                        {"snapshot_id": snap.snapshot_id, "chain_id": q.chain_id, "query_id": q.query_id},
                        q,
                    )
                )
            if progress:
                progress(i + 1, len(queries))
        return out


@dataclass(frozen=True)
class ReplayStep:
    """Replay every conversation on a freshly reset session and keep those that pass its rules."""

    replay: ReplayConfig

    @classmethod
    def of(cls, cfg: BuildConfig) -> ReplayStep:
        return cls(cfg.replay)

    def run(
        self, env: Environment, convs: list[Conversation], server: str, progress: Progress | None = None
    ) -> StageOutput:
        out = StageOutput()
        for i, c in enumerate(convs):
            try:
                rej = validate(env, c, self.replay)
            except ServerBudgetExceeded:  # the server's time is up: its partition ends here
                raise
            except Exception as exc:
                rej = rejection(
                    StageName.REPLAY,
                    "server_failure",
                    f"{type(exc).__name__}: {exc}",
                    server,
                    {"conversation_id": c.conversation_id, "chain_id": c.chain_id},
                    c,
                )
            if rej is None:
                out.items.append(c)
            else:
                out.rejections.append(rej)
            if progress:
                progress(i + 1, len(convs))
        out.stats = {
            "validated": len(out.items),
            "rejected": len(out.rejections),
            "pass_rate": len(out.items) / max(1, len(convs)),
        }
        return out


@heap_settled
def stage_queries(
    cfg: BuildConfig,
    snap: Snapshot,
    chains: list[Chain],
    env: Environment | None = None,
    progress: Progress | None = None,
) -> StageOutput:
    with server_env(cfg, snap.server, env) as e:
        return QueryStep.of(cfg).run(e, snap, chains, progress)


@heap_settled
def stage_conversations(
    cfg: BuildConfig,
    snap: Snapshot,
    chains: list[Chain],
    queries: list[UserQuery],
    env: Environment | None = None,
    progress: Progress | None = None,
) -> StageOutput:
    with server_env(cfg, snap.server, env) as e:
        return ConversationStep.of(cfg).run(e, snap, chains, queries, progress)


@heap_settled
def stage_validate(
    cfg: BuildConfig,
    convs: list[Conversation],
    server: str,
    env: Environment | None = None,
    progress: Progress | None = None,
) -> StageOutput:
    with server_env(cfg, server, env) as e:
        return ReplayStep.of(cfg).run(e, convs, server, progress)


# The registered stages' runs (pipeline.stages.registry): each asset calls one and shows its metadata.


def run_queries(
    cfg: BuildConfig, server: str, progress: Progress | None, server_snapshots: Snapshot, tool_chains: StageOutput
) -> Produced:
    red = Redactor.for_snapshots([server_snapshots])
    out = stage_queries(cfg, server_snapshots, tool_chains.items, progress=progress)
    return Produced(
        out,
        {
            "queries": len(out.items),
            "info_levels": out.stats.get("info_levels", {}),
            "preview": Markdown("\n".join(f"- {red.text(q.turns[0])}" for q in out.items[:8])),
            **teacher_meta(out),
        },
    )


def run_conversations(
    cfg: BuildConfig,
    server: str,
    progress: Progress | None,
    server_snapshots: Snapshot,
    tool_chains: StageOutput,
    user_queries: StageOutput,
) -> Produced:
    out = stage_conversations(cfg, server_snapshots, tool_chains.items, user_queries.items, progress=progress)
    return Produced(
        out, {"conversations": len(out.items), "outcomes": out.stats.get("outcomes", {}), **teacher_meta(out)}
    )


def teacher_meta(out: StageOutput) -> dict[str, Any]:
    """What the teacher cost the stage, when it wrote for it: numbers to plot, and the whole account."""
    u = out.stats.get("teacher")
    if not u:
        return {}
    return {**usage_numbers(u), "teacher": u}


def run_validate(cfg: BuildConfig, server: str, progress: Progress | None, conversations: StageOutput) -> Produced:
    out = stage_validate(cfg, conversations.items, server)
    return Produced(out, {"validated": len(out.items), "pass_rate": out.stats["pass_rate"]})
