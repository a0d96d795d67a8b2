"""The executor a build's deployment settings choose (``pipeline.core.config.DeploymentConfig``), and its part of a
run's config: used by ``prove build`` (``assets.distributed``) and by the jobs the UI, the schedule and the sensors
launch (``assets.automation``). docs/scale-out.md says what runs where."""

from __future__ import annotations

from typing import Any

import dagster as dg

from assets.cluster import celery_settings
from pipeline.core.config import BuildConfig

# steps fork from a process that has already imported the definitions, instead of importing them again each
# (the multiprocess executor's forkserver start method with preloaded modules)
FORKSERVER = {"forkserver": {"preload_modules": ["assets.definitions"]}}


def steps_elsewhere(cfg: BuildConfig) -> bool:
    """Whether the build's steps run outside the process that runs its jobs (its executor is not ``in_process``)."""
    return cfg.deployment.executor != "in_process"


def executor_def(kind: str) -> dg.ExecutorDefinition:
    """Dagster's executor for ``multiprocess`` or ``celery`` (dagster-celery's, from the ``distributed`` extra)."""
    if kind == "multiprocess":
        return dg.multiprocess_executor
    if kind == "celery":
        try:
            from dagster_celery import celery_executor
        except ImportError as exc:  # an optional extra
            raise ValueError(
                "deployment.executor 'celery' needs dagster-celery: pip install -e '.[distributed]'"
            ) from exc
        return celery_executor
    raise ValueError(f"no executor to give for {kind!r}: multiprocess or celery")


def execution_config(cfg: BuildConfig) -> dict[str, Any]:
    """The executor's part of a run's config (``execution: config:``), from the build's deployment settings."""
    d = cfg.deployment
    if d.executor == "multiprocess":
        return {"max_concurrent": d.max_concurrent, "start_method": FORKSERVER}
    return {"broker": d.broker, "backend": d.backend or d.broker, "config_source": celery_settings(cfg)}
