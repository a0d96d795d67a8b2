"""The composition plan, in one place: how many examples of each kind a build makes, the
information-level shares of its multi-turn examples (60/20/20 by default), and how much the
per-server stages oversample to meet them.

Every number comes from config (``simulate`` for the levels and their generation weights,
``augment`` for the other kinds, ``chains.oversample``); the stages and the corpus's composition
gate ask a :class:`Composition` instead of re-deriving the plan.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass

from pipeline.core.config import AugmentConfig, BuildConfig, SimulateConfig

INFO_LEVELS = ("complete", "missing", "minimal")


def level_weights(simulate: SimulateConfig, generation: bool = False) -> list[float]:
    """The information levels' weights (in :data:`INFO_LEVELS` order): the configured shares, or for
    generation the shares with the levels that lose more requests to rejection weighted up."""
    s = simulate
    if generation:
        return [s.complete, s.missing * s.missing_oversample, s.minimal * s.minimal_oversample]
    return [s.complete, s.missing, s.minimal]


@dataclass(frozen=True)
class KindCounts:
    """Examples of each kind for a build (multi-turn is what is left)."""

    multi_turn: int
    irrelevance: int
    abstention: int
    missing_function: int


@dataclass(frozen=True)
class Composition:
    simulate: SimulateConfig
    augment: AugmentConfig
    oversample: float = 2.0

    @classmethod
    def of(cls, cfg: BuildConfig) -> Composition:
        return cls(cfg.simulate, cfg.augment, cfg.chains.oversample)

    # -- the kinds -----------------------------------------------------------------------------
    @property
    def multi_turn_share(self) -> float:
        a = self.augment
        return 1.0 - a.irrelevance_rate - a.abstention_rate - a.missing_function_rate

    def per_server_target(self, examples: int, n_servers: int) -> int:
        """Multi-turn conversations to aim for per server (before replay and dedup losses)."""
        return max(4, math.ceil(examples * self.multi_turn_share * self.oversample / max(1, n_servers)))

    def kind_counts(self, examples: int, imported: int = 0) -> KindCounts:
        """The no-call kinds at their rates of ``examples``; multi-turn fills the rest (after ``imported``)."""
        a = self.augment
        n_irr, n_abs, n_mf = (
            round(a.irrelevance_rate * examples),
            round(a.abstention_rate * examples),
            round(a.missing_function_rate * examples),
        )
        return KindCounts(max(0, examples - n_irr - n_abs - n_mf - imported), n_irr, n_abs, n_mf)

    @staticmethod
    def scaled(counts: KindCounts, multi_turn: int) -> KindCounts:
        """The same composition for a smaller multi-turn supply: the other kinds scaled down with it."""
        scale = multi_turn / max(1, counts.multi_turn)
        return KindCounts(
            multi_turn,
            round(counts.irrelevance * scale),
            round(counts.abstention * scale),
            round(counts.missing_function * scale),
        )

    # -- the information levels ----------------------------------------------------------------
    def level_plan(self, n: int, salt: str, generation: bool = False) -> list[str]:
        """Exact information levels over n requests, deterministically shuffled by ``salt``.

        For generation the levels that lose more to rejection are weighted up (``*_oversample``), so
        the final selection can meet the shares exactly."""
        w = level_weights(self.simulate, generation)
        counts = [round(x / sum(w) * n) for x in w]
        counts[0] += n - sum(counts)
        levels = [lvl for lvl, c in zip(INFO_LEVELS, counts) for _ in range(c)]
        random.Random(salt).shuffle(levels)
        return levels

    def feasible_multi_turn(self, supply: Counter[str], wanted: int) -> int:
        """The largest multi-turn count <= wanted whose level shares ``supply`` (level -> count) meets exactly."""
        best = 0
        lo, hi = 0, wanted
        while lo <= hi:  # the exact plan is monotone in n: binary search the largest that fits
            mid = (lo + hi) // 2
            need = Counter(self.level_plan(mid, "feasible"))
            if all(supply[lvl] >= k for lvl, k in need.items()):
                best, lo = mid, mid + 1
            else:
                hi = mid - 1
        return best

    # -- what the corpus gate checks -----------------------------------------------------------
    def targets(self) -> dict[str, float]:
        """The shares the composition gate checks a corpus against."""
        a, s = self.augment, self.simulate
        total = s.complete + s.missing + s.minimal
        return {
            "distractors": a.distractor_rate,
            "enum_stripped": a.enum_strip_rate,
            "irrelevance": a.irrelevance_rate,
            "missing_function": a.missing_function_rate,
            "info_complete": s.complete / total,
            "info_missing": s.missing / total,
            "info_minimal": s.minimal / total,
        }
