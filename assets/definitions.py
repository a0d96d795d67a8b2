"""The Dagster definitions of the project (``dagster dev -m assets.definitions``), assembled from its domains:

* ``assets.synthesis``: the per-server assets (one partition per server), probe -> replay;
* ``assets.corpus``: dedup -> augment -> rejections -> corpus, and the corpus's blocking quality gates;
* ``assets.training``: the policy (SFT, then GRPO) and the typed training settings;
* ``assets.automation``: jobs, the weekly schedule and the schema-change sensor;
* ``assets.resources``: the typed build settings, the stage store (IO manager) and the server partitions.

:func:`resources` puts the resources together (the build's, and the training's).

``prove build`` runs these same definitions through ``assets.orchestrate``.
"""

import os
from pathlib import Path
from typing import Any

import dagster as dg

from assets.automation import CROSS, corpus_job, schema_change_sensor, server_job, weekly_regeneration
from assets.corpus import CHECKS
from assets.resources import StageStore, settings_for
from assets.synthesis import PER_SERVER
from assets.training import training_settings
from pipeline.core.config import BuildConfig

ALL_ASSETS = PER_SERVER + CROSS


def resources(data_dir: str = "data", build_config: BuildConfig | None = None, train: bool = True,
              train_params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The build settings, the training settings (``train_params``: TrainConfig fields and ``config_file``)
    and the stage store under the build's data dir."""
    cfg = build_config or BuildConfig(data_dir=data_dir)
    return {"settings": settings_for(cfg), "training": training_settings(train, train_params),
            "io_manager": StageStore(base_dir=str(Path(cfg.data_dir) / "stages"))}


defs = dg.Definitions(assets=ALL_ASSETS, asset_checks=CHECKS, jobs=[corpus_job, server_job], schedules=[weekly_regeneration],
                      sensors=[schema_change_sensor], resources=resources(os.environ.get("PROVE_DATA_DIR", "data")))
