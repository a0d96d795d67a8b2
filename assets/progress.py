"""Progress of the stages that run in this process, for whoever displays it.

``report(phase, step, total, **metrics)`` is called by the cross-server assets (dedup, corpus) and,
through ``training.train.train(progress=...)``, by the policy's training (eval_before, sft, eval_after_sft,
grpo, eval_after_grpo). ``prove build`` listens and draws one progress bar per phase; with no listener (runs
launched from the Dagster UI) nothing is drawn and the assets log as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_listeners: list[Callable[..., None]] = []


def report(phase: str, step: int, total: int, **metrics: Any) -> None:
    for fn in list(_listeners):
        try:
            fn(phase, step, total, **metrics)
        except Exception:  # a display that breaks must never cost the build
            _listeners.remove(fn)


def active() -> bool:
    return bool(_listeners)


def listen(fn: Callable[..., None]) -> None:
    """``fn`` hears every report from now on (a build worker forwarding its reports to the parent's display)."""
    _listeners.append(fn)


@contextmanager
def listening(fn: Callable[..., None]) -> Iterator[None]:
    _listeners.append(fn)
    try:
        yield
    finally:
        _listeners.remove(fn)
