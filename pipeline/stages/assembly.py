"""The steps over all servers' outputs: near-duplicate removal, the composition's selection and
augmentation, and the corpus writer. ``stage_*`` are the entry points the assets call."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.assembly.augment import (
    abstention_example,
    apply_robustness,
    import_abstention_file,
    irrelevance_example,
    missing_function_variant,
)
from pipeline.core.composition import INFO_LEVELS, Composition, KindCounts
from pipeline.core.config import AugmentConfig, BuildConfig, DedupConfig
from pipeline.core.records import Augmentation, Conversation, Example, Rejection, Snapshot, ToolSpec, rejection
from pipeline.core.similarity import dedup, reference_shingles
from pipeline.core.speedups import heap_settled
from pipeline.core.stage_names import StageName
from pipeline.corpus.store import write_corpus
from pipeline.env import Environment
from pipeline.stages.base import StageOutput, stage_rng
from servers.registry import available


@dataclass(frozen=True)
class DedupStep:
    """Drop conversations whose call sequences are near-duplicates of a kept one."""

    dedup: DedupConfig

    @classmethod
    def of(cls, cfg: BuildConfig) -> DedupStep:
        return cls(cfg.dedup)

    def run(self, convs: list[Conversation]) -> StageOutput:
        items = [(c.conversation_id, reference_shingles(c.reference, self.dedup.include_args)) for c in convs]
        kept, dropped = dedup(items, self.dedup)
        by_id = {c.conversation_id: c for c in convs}
        out = StageOutput(items=[by_id[k] for k in kept])
        for cid, (dup, j) in dropped.items():
            c = by_id[cid]
            out.rejections.append(
                rejection(
                    StageName.DEDUP,
                    "near_duplicate",
                    f"Jaccard {j:.2f} >= {self.dedup.threshold} with {dup}",
                    c.server,
                    {"conversation_id": cid, "chain_id": c.chain_id, "duplicate_of": dup},
                    c,
                )
            )
        out.stats = {"input": len(convs), "kept": len(kept), "dropped": len(dropped)}
        return out


def _round_robin(pool: list[Conversation]) -> list[Conversation]:
    """The pool in turns over its servers (sorted), so every server is represented early."""
    per: dict[str, list[Conversation]] = {}
    for c in pool:
        per.setdefault(c.server, []).append(c)
    order = []
    while any(per.values()):
        for s in sorted(per):
            if per[s]:
                order.append(per[s].pop(0))
    return order


def choose_multi_turn(
    plan: Composition, seed: int, convs: list[Conversation], n: int
) -> tuple[list[Conversation], list[Conversation]]:
    """Pick n conversations meeting the information-level shares exactly where supply allows, spread over servers."""
    want = Counter(plan.level_plan(n, f"{seed}:select"))
    by_level: dict[str, list[Conversation]] = {lvl: [] for lvl in INFO_LEVELS}
    for c in sorted(convs, key=lambda c: c.conversation_id):
        by_level.setdefault(c.info_level or "complete", []).append(c)
    chosen: list[Conversation] = []
    for lvl in INFO_LEVELS:
        chosen.extend(_round_robin(by_level[lvl])[: want[lvl]])
    cover_servers(chosen, convs)
    short = n - len(chosen)
    if short > 0:  # not enough of some level: fill with the rest, shares then drift
        ids = {c.conversation_id for c in chosen}
        rest = [c for c in sorted(convs, key=lambda c: c.conversation_id) if c.conversation_id not in ids]
        chosen.extend(rest[:short])
    ids = {c.conversation_id for c in chosen}
    return chosen, [c for c in convs if c.conversation_id not in ids]


def select_multi_turn(
    cfg: BuildConfig, convs: list[Conversation], n: int
) -> tuple[list[Conversation], list[Conversation]]:
    """:func:`choose_multi_turn` with the build's composition and seed."""
    return choose_multi_turn(Composition.of(cfg), cfg.seed, convs, n)


def cover_servers(chosen: list[Conversation], convs: list[Conversation]) -> None:
    """Give every server that has conversations at least one chosen, where the count allows it (in place).

    A server left out (a small request over many servers: the round-robin ends before reaching it)
    takes the place of the last chosen conversation of the best-represented server at the same
    information level, so the level shares hold. When every server is represented nothing changes."""
    have = Counter(c.server for c in chosen)
    for server in sorted({c.server for c in convs} - set(have)):
        for cand in sorted((c for c in convs if c.server == server), key=lambda c: c.conversation_id):
            level = cand.info_level or "complete"
            spots = [i for i, c in enumerate(chosen) if have[c.server] > 1 and (c.info_level or "complete") == level]
            if not spots:
                continue
            i = max(spots, key=lambda i: (have[chosen[i].server], i))
            have[chosen[i].server] -= 1
            chosen[i] = cand
            have[server] += 1
            break


def tool_pool(snapshots: dict[str, Snapshot], minimum: int = 3) -> dict[str, list[ToolSpec]]:
    """Tools by server for distractors and abstention. A build over fewer than ``minimum`` servers
    borrows the schemas of built-in servers (listed over MCP, never called) so that the knobs still apply."""
    pool = {s: snap.tools for s, snap in snapshots.items()}
    if len(pool) < minimum:
        for name in available():
            if len(pool) >= minimum:
                break
            if name not in pool:
                with Environment(name) as env:
                    pool[name] = env.tools()
    return pool


@dataclass(frozen=True)
class AugmentStep:
    """Select the multi-turn examples by the composition plan, add the no-call kinds, apply the robustness
    augmentations."""

    augment: AugmentConfig
    composition: Composition
    examples: int
    seed: int

    @classmethod
    def of(cls, cfg: BuildConfig) -> AugmentStep:
        return cls(cfg.augment, Composition.of(cfg), cfg.examples, cfg.seed)

    def counts(self, unique: list[Conversation], imported: int) -> tuple[KindCounts, int]:
        """What to make of each kind, and the multi-turn count requested. Short supply gives a smaller
        corpus with the same composition, rather than one with the shares off."""
        want = self.composition.kind_counts(self.examples, imported)
        feasible = self.composition.feasible_multi_turn(
            Counter(c.info_level or "complete" for c in unique), want.multi_turn
        )
        return (self.composition.scaled(want, feasible) if feasible < want.multi_turn else want), want.multi_turn

    def no_call_examples(
        self, counts: KindCounts, snapshots: dict[str, Snapshot], pool: dict[str, list[ToolSpec]], rng: random.Random
    ) -> list[Example]:
        """Irrelevance and abstention examples, spread over the servers in turn."""
        servers = sorted(snapshots)
        out: list[Example] = []
        asked: set[str] = set()  # no request is used twice by the no-call kinds
        for i in range(counts.irrelevance):
            s = servers[i % len(servers)]
            snap = snapshots[s]
            out.append(irrelevance_example(s, snap.tools, snap.seed, rng, snap.snapshot_id, asked))
        for i in range(counts.abstention):
            s = servers[i % len(servers)]
            snap = snapshots[s]
            own = {t.name for t in snap.tools}
            others = [
                t for o, ts in pool.items() if o != s for t in ts if t.name not in own
            ]  # a same-named tool would apply
            if not others:
                break
            out.append(abstention_example(s, snap.tools, rng.choice(others), snap.seed, rng, snap.snapshot_id, asked))
        return out

    def run(self, unique: list[Conversation], snapshots: dict[str, Snapshot]) -> StageOutput:
        imported: list[Example] = []
        for f in self.augment.import_files:
            imported.extend(import_abstention_file(f))
        counts, n_requested = self.counts(unique, len(imported))
        multi, spare = choose_multi_turn(self.composition, self.seed, unique, counts.multi_turn)
        rng = stage_rng(self.seed, "augment")
        extra: list[Example] = []
        # missing-function variants from conversations not selected (so they do not duplicate an example)
        for c in spare + multi:
            if len(extra) >= counts.missing_function:
                break
            v = missing_function_variant(c, rng)
            if v is not None:
                extra.append(v)
        pool = tool_pool(snapshots)
        extra += self.no_call_examples(counts, snapshots, pool, rng)
        examples = [Example.of(c) for c in multi] + extra + imported
        reach = apply_robustness(examples, pool, self.augment, self.seed)
        out = StageOutput(items=examples)
        if len(multi) < n_requested:
            out.rejections.append(
                rejection(
                    StageName.AUGMENT,
                    "short_supply",
                    f"only {len(multi)} multi-turn conversations meet the information-level shares for {n_requested} "
                    f"requested ({len(unique)} unique); the other kinds were scaled down with them. Add servers or "
                    "richer tools.",
                    None,
                    {},
                    None,
                )
            )
        out.stats = {
            "examples": len(examples),
            "kinds": dict(Counter(c.kind for c in examples)),
            "augmentations": dict(Counter(Augmentation.parse(x).kind for c in examples for x in c.augmentations)),
            # how many examples each robustness knob could apply to: the composition gate's ceiling for it
            "reach": reach,
        }
        return out


@heap_settled
def stage_dedup(cfg: BuildConfig, convs: list[Conversation]) -> StageOutput:
    return DedupStep.of(cfg).run(convs)


@heap_settled
def stage_augment(cfg: BuildConfig, unique: list[Conversation], snapshots: dict[str, Snapshot]) -> StageOutput:
    return AugmentStep.of(cfg).run(unique, snapshots)


@heap_settled
def stage_corpus(cfg: BuildConfig, examples: list[Example], rejections: list[Rejection], **kwargs: Any) -> Path:
    """Write the corpus version (:func:`pipeline.corpus.store.write_corpus`) with the records frozen out of the
    collector's sight, as the other stages run."""
    return write_corpus(cfg, examples, rejections, **kwargs)
