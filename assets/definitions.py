"""The Dagster definitions of the project (``dagster dev -m assets.definitions``), assembled from its domains:

* ``assets.synthesis``: the per-server assets (one partition per server), probe -> replay;
* ``assets.corpus``: dedup -> augment -> rejections -> corpus, and the corpus's blocking quality gates;
* ``assets.training``: the policy (SFT, then GRPO);
* ``assets.automation``: jobs, the weekly schedule and the schema-change sensor;
* ``assets.resources``: the typed build settings, the stage store (IO manager) and the server partitions.

``prove build`` runs these same definitions through ``assets.orchestrate``.
"""

import os

import dagster as dg

from assets.automation import CROSS, corpus_job, schema_change_sensor, server_job, weekly_regeneration
from assets.corpus import CHECKS
from assets.resources import resources
from assets.synthesis import PER_SERVER

ALL_ASSETS = PER_SERVER + CROSS

defs = dg.Definitions(assets=ALL_ASSETS, asset_checks=CHECKS, jobs=[corpus_job, server_job], schedules=[weekly_regeneration],
                      sensors=[schema_change_sensor], resources=resources(os.environ.get("PROVE_DATA_DIR", "data")))
