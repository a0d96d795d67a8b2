"""The build's composition plan as the stages see it: :class:`pipeline.core.composition.Composition`
read from a :class:`BuildConfig` (kept as functions of the whole config for their callers)."""

from __future__ import annotations

import math

from pipeline.core.composition import Composition
from pipeline.core.config import BuildConfig


def per_server_target(cfg: BuildConfig) -> int:
    """Multi-turn conversations to aim for per server (before replay and dedup losses)."""
    return Composition.of(cfg).per_server_target(cfg.examples, len(cfg.servers))


def chains_wanted(cfg: BuildConfig) -> int:
    return max(cfg.chains.per_server, per_server_target(cfg))


def n_contexts(cfg: BuildConfig) -> int:
    """Sampled contexts per server: one per ``probe.refresh_every`` conversations."""
    k = cfg.probe.refresh_every
    return max(1, math.ceil(chains_wanted(cfg) / k)) if k else 1


def info_level_plan(n: int, cfg: BuildConfig, salt: str, generation: bool = False) -> list[str]:
    """Exact information levels over n requests (:meth:`Composition.level_plan`)."""
    return Composition.of(cfg).level_plan(n, salt, generation)
