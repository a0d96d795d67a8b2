"""A corpus run stopped before its version is written leaves nothing that looks current: the rejections asset
is made from the version the corpus asset wrote, so its latest materialization stays the last version's."""

from __future__ import annotations

import dagster as dg
import pytest

from assets import corpus as C
from assets.definitions import ALL_ASSETS, resources
from assets.resources import ensure_partitions
from assets.synthesis import PER_SERVER
from pipeline.core.config import BuildConfig


def _meta(instance: dg.DagsterInstance, asset: str) -> dict:
    return instance.get_latest_materialization_event(dg.AssetKey(asset)).asset_materialization.metadata


def test_a_corpus_run_stopped_before_its_version_leaves_the_rejections_of_the_last_version(tmp_path, monkeypatch):
    cfg = BuildConfig(examples=12, servers=["banking"], data_dir=str(tmp_path / "data"))
    res = resources(build_config=cfg, train=False)
    instance = dg.DagsterInstance.ephemeral()
    ensure_partitions(instance, cfg.servers)
    cross = [C.unique_conversations, C.augmented_examples, C.corpus, C.rejections]
    assert dg.materialize(ALL_ASSETS, selection=PER_SERVER, partition_key="banking", resources=res, instance=instance)
    assert dg.materialize(ALL_ASSETS, selection=cross, resources=res, instance=instance).success
    version = _meta(instance, "corpus")["version"].value
    assert _meta(instance, "rejections")["version"].value == version

    def stopped(*a, **k):
        raise KeyboardInterrupt("the run was stopped while the version was being written")

    monkeypatch.setattr(C, "stage_corpus", stopped)
    with pytest.raises(BaseException):  # noqa: B017  (the stop reaches the caller as Dagster raises it)
        dg.materialize(ALL_ASSETS, selection=cross, resources=res, instance=instance)
    assert _meta(instance, "corpus")["version"].value == version
    assert _meta(instance, "rejections")["version"].value == version, "no rejections of a version never written"
