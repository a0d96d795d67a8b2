"""The stage registry is the one place to add a stage: a stage registered there is an asset of the graph, a step
of the server job, an input of the rejections asset, and its rejections carry its name."""

from __future__ import annotations

import dagster as dg
import pytest

from assets.definitions import make_definitions, resources, stage_assets
from assets.resources import ensure_partitions
from pipeline.core.config import BuildConfig
from pipeline.core.records import rejection
from pipeline.core.stage_names import StageName
from pipeline.stages.base import Produced, StageOutput
from pipeline.stages.registry import STAGES, Registry, Stage


def _spot_check(cfg: BuildConfig, server: str, progress, validated_conversations: StageOutput) -> Produced:
    """A throwaway stage: sets the first validated conversation aside for review."""
    convs = validated_conversations.items
    rejs = [
        rejection(
            "spot_check",
            "picked_for_review",
            "the first conversation of the server",
            server,
            {"conversation_id": c.conversation_id},
            c,
        )
        for c in convs[:1]
    ]
    return Produced(StageOutput(items=convs[1:], rejections=rejs), {"kept": len(convs) - 1})


SPOT_CHECK = Stage(
    "spot_check",
    "spot_checked_conversations",
    "Validated conversations after a spot check.",
    ("validated_conversations",),
    run=_spot_check,
)


def test_the_built_in_stages_are_registered_in_build_order_with_their_names():
    assert [s.asset for s in STAGES] == [
        "server_snapshots",
        "dependency_graphs",
        "tool_chains",
        "user_queries",
        "conversations",
        "validated_conversations",
        "unique_conversations",
        "augmented_examples",
        "corpus",
    ]
    assert STAGES.names() == [n.value for n in StageName]
    assert [s.asset for s in STAGES.rejecting()] == [
        "tool_chains",
        "user_queries",
        "conversations",
        "validated_conversations",
        "unique_conversations",
        "augmented_examples",
    ]


def test_a_stage_must_come_after_what_it_reads_and_make_a_new_asset():
    reg = Registry()
    with pytest.raises(ValueError, match="reads \\['validated_conversations'\\], which no registered stage makes"):
        reg.register(SPOT_CHECK)
    reg = STAGES.copy()
    reg.register(SPOT_CHECK)
    with pytest.raises(ValueError, match="already makes the asset 'spot_checked_conversations'"):
        reg.register(SPOT_CHECK)
    with pytest.raises(ValueError, match="has no run function"):
        reg.register(Stage("x", "x_out", "no run", ("tool_chains",)))
    assert "spot_checked_conversations" not in [s.asset for s in STAGES], "registering in a copy leaves STAGES alone"


def test_a_registered_stage_is_in_the_asset_graph_the_server_job_and_the_rejections(tmp_path):
    reg = STAGES.copy()
    reg.register(SPOT_CHECK)
    defs = make_definitions(reg, data_dir=str(tmp_path / "data"))
    graph = defs.resolve_asset_graph()
    key = dg.AssetKey("spot_checked_conversations")
    assert key in graph.get_all_asset_keys()
    assert graph.get(key).parent_keys == {dg.AssetKey("validated_conversations")}
    assert key in graph.get(dg.AssetKey("corpus")).parent_keys  # the version writes every stage's rejections
    assert key in defs.resolve_job_def("server_job").asset_layer.selected_asset_keys

    # built: the server's partition (with the new stage), then dedup -> augment -> rejections
    cfg = BuildConfig(examples=12, servers=["banking"], data_dir=str(tmp_path / "data"))
    per_server, cross = stage_assets(reg)
    res = resources(build_config=cfg, train=False)
    instance = dg.DagsterInstance.ephemeral()
    ensure_partitions(instance, ["banking"])
    everything = per_server + cross
    assert dg.materialize(
        everything, selection=per_server, partition_key="banking", resources=res, instance=instance
    ).success
    r = dg.materialize(everything, selection=cross[:4], resources=res, instance=instance)  # to rejections
    assert r.success
    spot = [x for x in r.output_for_node("rejections") if x.stage == "spot_check"]
    assert len(spot) == 1 and spot[0].reason == "picked_for_review" and spot[0].server == "banking"
    rows = r.asset_materializations_for_node("rejections")[0].metadata["by_stage_reason"].value
    assert "spot_check/picked_for_review" in rows
