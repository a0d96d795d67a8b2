"""Corpus builds for tests: the one build path (``assets.orchestrate.build``), in process, on an ephemeral
Dagster instance (nothing written under ``$DAGSTER_HOME``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg

from assets.orchestrate import BuildRun, build
from pipeline.config import BuildConfig


def build_run(cfg: BuildConfig, **kw: Any) -> BuildRun:
    """A build that must succeed (every run, every quality gate); returns what it did."""
    b = build(cfg, instance=dg.DagsterInstance.ephemeral(), **kw)
    assert b.success, f"the build failed: {b.error()}"
    return b


def build_corpus(cfg: BuildConfig, **kw: Any) -> Path:
    """The corpus version a build that must succeed wrote."""
    path = build_run(cfg, **kw).corpus_path
    assert path is not None and path.is_dir()
    return path
