"""The Dagster definitions of the project (``prove ui``, or ``dg dev`` from the root: ``[tool.dg]``), assembled from its
domains:

* ``assets.synthesis``: the per-server assets (one partition per server), probe -> replay;
* ``assets.corpus``: dedup -> augment -> rejections -> corpus, and the corpus's blocking quality gates;
* ``assets.training``: the policy (SFT, then GRPO) and the typed training settings;
* ``assets.automation``: jobs, the weekly schedule and the schema-change sensor;
* ``assets.resources``: the typed build settings, the stage store (IO manager) and the server partitions.

:func:`resources` puts the resources together (the build's, and the training's).

``prove build`` runs these same definitions through ``assets.orchestrate``.
"""

from pathlib import Path
from typing import Any

import dagster as dg

from assets.automated_build import AutomatedBuild
from assets.automation import (
    AUTOMATED,
    CROSS,
    asset_jobs,
    corpus_after_changes,
    corpus_job,
    schema_change_sensor,
    server_job,
    weekly_regeneration,
)
from assets.corpus import CHECKS, augmented_examples, corpus_asset, rejections, unique_conversations
from assets.executors import steps_elsewhere
from assets.lineage import lineage_job
from assets.resources import StageStore, settings_for
from assets.synthesis import PER_SERVER, per_server_assets
from assets.training import grpo_policy, policy_eval, training_settings
from pipeline.core.config import BuildConfig
from pipeline.stages.registry import STAGES, Registry

ALL_ASSETS = PER_SERVER + CROSS


def resources(
    data_dir: str = "data",
    build_config: BuildConfig | None = None,
    train: bool = True,
    train_params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The build settings, the training settings (``train_params``: TrainConfig fields and ``config_file``)
    and the stage store under the build's data dir."""
    cfg = build_config or BuildConfig(data_dir=data_dir)
    return {
        "settings": settings_for(cfg),
        "training": training_settings(train, train_params),
        "io_manager": StageStore(base_dir=str(Path(cfg.data_dir) / "stages")),
    }


def stage_assets(stages: Registry) -> tuple[list[dg.AssetsDefinition], list[dg.AssetsDefinition]]:
    """The per-server assets and the cross-server ones (dedup -> corpus -> policy) of a stage registry."""
    if stages is STAGES:
        return PER_SERVER, CROSS
    return per_server_assets(stages), [
        unique_conversations,
        augmented_examples,
        corpus_asset(stages),
        rejections,
        grpo_policy,
        policy_eval,
    ]


def make_definitions(
    stages: Registry = STAGES, data_dir: str | None = None, build: AutomatedBuild | None = None
) -> dg.Definitions:
    """The project's definitions for a stage registry (``defs`` is the one of :data:`STAGES`): a stage registered
    there is an asset of the graph, a step of ``server_job`` and, if it rejects, an input of ``corpus``, whose
    version (and so the ``rejections`` asset) holds its rejections.

    ``build``: what the launchpads, the schedule and the sensors run (default: the automated build of
    ``$PROVE_AUTOMATION``, ``assets/automated_build.py``); ``data_dir`` moves its data."""
    build = build or AUTOMATED
    if data_dir is not None:
        build = AutomatedBuild(build.config.model_copy(update={"data_dir": data_dir}), build.train, build.source)
    per_server, cross = stage_assets(stages)
    if stages is STAGES and build is AUTOMATED:
        jobs = [corpus_job, server_job]
    else:
        jobs = list(asset_jobs(per_server, cross, build))
    jobs.append(lineage_job)
    return dg.Definitions(
        assets=per_server + cross,
        asset_checks=CHECKS,
        jobs=jobs,
        schedules=[weekly_regeneration],
        sensors=[schema_change_sensor, corpus_after_changes],
        resources=resources(build_config=build.config, train=build.train),
        # the jobs without an executor of their own (the asset graph's Materialize, lineage_job) run in process too
        # (a deployment that runs steps elsewhere leaves them Dagster's default: its executor needs the run's config)
        executor=None if steps_elsewhere(build.config) else dg.in_process_executor,
    )


defs = make_definitions()
