"""Corpus builds for tests: the one build path (``assets.orchestrate.build``), in process, on an ephemeral
Dagster instance (nothing written under ``$DAGSTER_HOME``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg

from assets.orchestrate import BuildRun, build
from pipeline.core.config import BuildConfig


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
