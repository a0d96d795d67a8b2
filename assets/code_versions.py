"""Code versions of the assets, derived from the source they run.

Every asset's ``code_version`` is a short hash of the source of the stage function it calls and of
the ``pipeline`` (or ``training``) modules that do its work. Editing, say, ``pipeline/chains.py``
changes the code version of ``tool_chains`` only; the Dagster UI then marks ``tool_chains`` and
everything downstream of it stale, and nothing upstream.

Modules are hashed from their files (found with ``importlib.util.find_spec``, never imported), so
hashing ``training.train`` does not import torch.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
from pathlib import Path
from typing import Any, Callable, Iterable

# the records and configuration every stage reads and writes
COMMON = ("pipeline.records", "pipeline.config")

# asset -> (stage function it calls, the modules that do its work)
ASSET_SOURCES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "server_snapshots": ("stage_snapshot", ("pipeline.probe", "pipeline.env", "pipeline.env.core", "pipeline.env.connection",
                                            "pipeline.env.isolation", "pipeline.env.transport", "pipeline.env.fastpath",
                                            "pipeline.env.workdir", "pipeline.serverfile", "pipeline.values")),
    "dependency_graphs": ("stage_graph", ("pipeline.graph", "pipeline.values")),
    "tool_chains": ("stage_chains", ("pipeline.chains",)),
    "user_queries": ("stage_queries", ("pipeline.queries", "pipeline.simulate", "pipeline.requests", "pipeline.lexicon", "pipeline.phrasing",
                                       "pipeline.teacher", "pipeline.values")),
    "conversations": ("stage_conversations", ("pipeline.simulate", "pipeline.replies", "pipeline.lexicon", "pipeline.phrasing",
                                              "pipeline.teacher", "pipeline.queries", "pipeline.requests", "pipeline.values")),
    "validated_conversations": ("stage_validate", ("pipeline.replay",)),
    "unique_conversations": ("stage_dedup", ("pipeline.dedup",)),
    "augmented_examples": ("stage_augment", ("pipeline.augment", "pipeline.offtopic")),
    "rejections": (None, ("pipeline.report", "pipeline.redact", "pipeline.corpus")),
    "corpus": (None, ("pipeline.corpus", "pipeline.sql", "pipeline.report", "pipeline.lint")),
    "grpo_policy": (None, ("training.train", "training.config", "training.data", "training.chat", "training.multistep",
                           "training.grpo", "training.evaluate", "training.rollout", "training.tiny", "pipeline.reward")),
}


def module_source(name: str) -> bytes:
    """The bytes of a module's file (a package's ``__init__``); empty when it cannot be found."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return b""
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        return b""
    return Path(spec.origin).read_bytes()


def source_hash(functions: Iterable[Callable[..., Any]] = (), modules: Iterable[str] = (), n: int = 12) -> str:
    """A short, stable hash of the source of some functions and module files."""
    h = hashlib.sha256()
    for fn in functions:
        h.update(f"fn:{fn.__module__}.{fn.__qualname__}\n".encode())
        h.update(inspect.getsource(fn).encode())
    for m in sorted(set(modules)):
        h.update(f"module:{m}\n".encode())
        h.update(module_source(m))
    return h.hexdigest()[:n]


def asset_code_version(asset: str) -> str:
    """The code version of one asset of ``assets.definitions`` (see :data:`ASSET_SOURCES`)."""
    from pipeline import stages

    fn_name, modules = ASSET_SOURCES[asset]
    fns = [getattr(stages, fn_name)] if fn_name else []
    return source_hash(fns, (*COMMON, *modules))


def all_code_versions() -> dict[str, str]:
    return {a: asset_code_version(a) for a in ASSET_SOURCES}
