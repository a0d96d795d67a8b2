"""Corpus builds for tests: the one build path (``assets.orchestrate.build``), in process, on an ephemeral
Dagster instance (nothing written under ``$DAGSTER_HOME``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg

from assets.orchestrate import BuildRun, build
from pipeline.core.config import BuildConfig
from pipeline.core.records import Conversation
from pipeline.corpus.columns import trace_of

# a policy trained in seconds: enough for a checkpoint, a reward log and eval numbers, not for learning
TINY_TRAINING = {
    "sft_steps": 2,
    "grpo_steps": 2,
    "batch_size": 4,
    "num_generations": 2,
    "eval_limit": 4,
    # one conversation a generation: on the CPU a batch of prompts of different lengths is left-padded, and the tiny
    # model's first pass over a padded batch took 3x that over the same prompts one by one (1.14 against 0.36 CPU-s,
    # six prompts of 800-1,900 tokens). Batched generation stays tested where the default batch (16) is kept:
    # test_grpo, test_progress
    "eval_batch_size": 1,
    "bootstrap_samples": 100,
    "max_new_tokens": 16,
    "eval_max_new_tokens": 16,  # the evaluation's replies as short as the rollouts': what is tested is its report
    "max_completion_length": 48,
}


def build_run(cfg: BuildConfig, gates: bool = True, **kw: Any) -> BuildRun:
    """A build whose runs all succeed; with ``gates=False`` a failed quality gate is allowed (the version is
    written and marked failed), for builds too small to meet the composition targets."""
    b = build(cfg, instance=dg.DagsterInstance.ephemeral(), **kw)
    if gates:
        assert b.success, f"the build failed: {b.error()}"
    else:
        failed = (
            [e.step_key for e in b.result.all_events if e.is_step_failure] if b.result is not None else ["every server"]
        )
        assert all(k.startswith("corpus_corpus_") for k in failed), f"the build failed: {b.error()}"
    return b


def build_corpus(cfg: BuildConfig, gates: bool = True, **kw: Any) -> Path:
    """The corpus version a build wrote (see :func:`build_run`)."""
    path = build_run(cfg, gates, **kw).corpus_path
    assert path is not None and path.is_dir()
    return path


def as_conversation(row: dict) -> Conversation:
    """A corpus row as the conversation :func:`pipeline.synthesis.replay.replay_trace` replays: its trace, set-up."""
    setup = row.get("setup") or []
    setup = json.loads(setup) if isinstance(setup, str) else setup
    return Conversation(
        conversation_id=row["example_id"],
        server=row["server"],
        servers=[row["server"]],
        seed=row["env_seed"],
        snapshot_id="s",
        messages=[],
        tools=[],
        reference=[],
        trace=trace_of(row["trace"]),
        setup=setup,
    )
