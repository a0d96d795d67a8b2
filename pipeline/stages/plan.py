"""The build's composition plan as the stages see it: :class:`pipeline.core.composition.Composition`
read from a :class:`BuildConfig` (kept as functions of the whole config for their callers)."""

from __future__ import annotations

import math
from typing import Any

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


# prompt and completion tokens of one teacher request of each kind (the prompts' sizes in builds on the built-in
# servers, 4 characters a token; an estimate, which a version's manifest then replaces with the endpoint's count)
TOKENS_PER_REQUEST = {"user_turns": (700, 90), "reply": (420, 60), "tool_pair": (230, 15)}


def teacher_estimate(cfg: BuildConfig, tool_counts: dict[str, int | None], cached: int = 0) -> dict[str, Any]:
    """Roughly how many teacher completions and tokens a build needs, before it sends any: one user-turn request per
    planned chain, one reply per turn of each (an upper bound: requests rejected at their dry run never reach the
    teacher), one request per tool pair when ``graph.llm`` classifies them. ``cached``: answers already on disk."""
    chains = chains_wanted(cfg) * len(cfg.servers)
    turns = (cfg.simulate.min_turns + cfg.simulate.max_turns) / 2
    known = {s: n for s, n in tool_counts.items() if n is not None}
    counts = {
        "user_turns": chains,
        "reply": round(chains * turns),
        "tool_pair": sum(n * (n - 1) // 2 for n in known.values()) if cfg.graph.llm else 0,
    }
    prompt = sum(n * TOKENS_PER_REQUEST[k][0] for k, n in counts.items())
    completion = sum(n * TOKENS_PER_REQUEST[k][1] for k, n in counts.items())
    return {
        "completions": counts,
        "total_completions": sum(counts.values()),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cached_answers": cached,
        "servers_without_tool_count": sorted(set(tool_counts) - set(known)) if cfg.graph.llm else [],
        "max_concurrency": cfg.query.max_concurrency,
    }
