"""What every stage shares: its output record, the environment it runs on, seeded randomness, timing."""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.core.config import BuildConfig
from pipeline.core.records import Rejection
from pipeline.env import Environment

# ``progress(i, n)`` as a stage's items go; ``progress(done, total, phase="teacher", in_flight=k, per_s=r)`` as the
# teacher's answers come in
Progress = Callable[..., None]


def teacher_progress(progress: Progress | None) -> Callable[[int, int, int, float], None] | None:
    """A stage's progress callback as the teacher's fetch reports to it (answers, in flight, answers per second)."""
    if progress is None:
        return None
    return lambda done, total, in_flight, per_s: progress(
        done, total, phase="teacher", in_flight=in_flight, per_s=round(per_s, 1)
    )


class Markdown(str):
    """Metadata text meant to be read as Markdown (the Dagster UI renders it)."""


@dataclass
class Produced:
    """What a registered stage's ``run`` returns: its output (what the next stage reads), the metadata people
    want to see beside it (plain values; dicts and lists shown as JSON, :class:`Markdown` as Markdown), and
    optionally a data version (a stage whose output is unchanged when this is, like a snapshot's schema hash)."""

    value: Any
    metadata: dict[str, Any] = field(default_factory=dict)
    data_version: str | None = None


@dataclass
class StageOutput:
    """A stage's records, its rejections and what it measured."""

    items: list[Any] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


def stage_rng(seed: int, *parts: Any) -> random.Random:
    """The seeded randomness of one record of one stage (``seed:part:part``)."""
    return random.Random(":".join(str(p) for p in (seed, *parts)))


def cache_dir(configured: str | None, data_path: Path, name: str) -> Path:
    """A stage's cache directory: the configured one, else ``<data>/cache/<name>``."""
    return Path(configured) if configured else data_path / "cache" / name


def open_env(cfg: BuildConfig, server: str) -> Environment:
    return Environment(cfg.server_config(server), log_dir=cfg.data_path / "logs" / "servers")


@contextlib.contextmanager
def server_env(cfg: BuildConfig, server: str, env: Environment | None) -> Iterator[Environment]:
    """The given environment, or one opened for the stage and closed after it."""
    if env is not None:
        yield env
        return
    own = open_env(cfg, server)
    try:
        yield own
    finally:
        own.close()


class Timer:
    """Wall time per stage name (summed over servers).

    ``meters`` (optional) are named counters read before and after every timed block (a benchmark
    passes the tool-call clocks), so each stage also gets the part of its time each meter saw:
    ``metered[stage][meter]``."""

    def __init__(self, meters: dict[str, Callable[[], float]] | None = None) -> None:
        self.times: dict[str, float] = {}
        self.meters = dict(meters or {})
        self.metered: dict[str, dict[str, float]] = {}

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        before = {k: m() for k, m in self.meters.items()}
        t = time.perf_counter()
        try:
            yield
        finally:
            self.times[name] = self.times.get(name, 0.0) + time.perf_counter() - t
            if self.meters:
                seen = self.metered.setdefault(name, {})
                for k, m in self.meters.items():
                    seen[k] = seen.get(k, 0.0) + m() - before[k]
