"""The Dagster assets, materialized for real on a small configuration."""

import json
from pathlib import Path

import dagster as dg
import polars as pl

from assets.orchestrate import build
from pipeline.core.config import BuildConfig
from tests.builds import TINY_TRAINING

SERVERS = ["banking", "crm"]


def _materialize_all(tmp_path: Path, train: bool, servers: list[str] = SERVERS, examples: int = 30):
    # 12 tool chains per server (the default plans 60 whatever the size)
    cfg = BuildConfig(examples=examples, servers=servers, data_dir=str(tmp_path / "data"), chains={"per_server": 12})
    instance = dg.DagsterInstance.ephemeral()
    b = build(cfg, train=train, train_params=TINY_TRAINING, instance=instance)
    assert not b.unavailable, b.unavailable
    return cfg, b.result, instance


def test_materialize_all_assets_writes_a_corpus_version_with_rejections_and_a_policy(tmp_path):
    cfg, r, instance = _materialize_all(tmp_path, train=True)
    assert r.success
    versions = [p for p in (tmp_path / "data" / "corpus").iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(versions) == 1
    m = json.loads((versions[0] / "manifest.json").read_text())
    assert set(m["composition"]["by_server"]) == set(SERVERS)
    rej = pl.read_parquet(versions[0] / "rejections.parquet")
    assert rej.height > 0 and rej["reason"].null_count() == 0
    # every stage is a recorded materialization
    for a in [
        "server_snapshots",
        "dependency_graphs",
        "tool_chains",
        "user_queries",
        "conversations",
        "validated_conversations",
        "unique_conversations",
        "augmented_examples",
        "rejections",
        "corpus",
    ]:
        assert instance.get_latest_materialization_event(dg.AssetKey(a)) is not None, a
    checks = {e.check_name: e.passed for e in r.get_asset_check_evaluations()}
    assert checks == {
        "corpus_nonempty_per_server": True,
        "corpus_no_near_duplicates": True,
        "corpus_composition": True,
        "corpus_lint": True,
    }
    # rejections is in the UI before training starts (its step goes first of those ready after the corpus's gates)
    events = [(e.event_type_value, e.step_key) for e in r.all_events]
    assert events.index(("ASSET_MATERIALIZATION", "rejections")) < events.index(("STEP_START", "grpo_policy"))
    # the policy: a checkpoint and a per-step reward log
    ev = instance.get_latest_materialization_event(dg.AssetKey("grpo_policy"))
    assert ev is not None
    run_dir = tmp_path / "data" / "runs" / versions[0].name
    assert (run_dir / "checkpoint").is_dir()
    steps = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    assert any("reward" in json.dumps(s) for s in steps)
    # numbers Dagster's Plots tab draws across versions: eval rewards, corpus counts and shares, rejection counts
    policy = ev.asset_materialization.metadata
    for phase in ("before", "after_sft", "after_grpo"):
        assert isinstance(policy[f"eval_{phase}_reward"], dg.FloatMetadataValue), phase
    assert policy["out_dir"].value == str(run_dir.resolve())
    # the policy scored on the fixed suites: the default frozen held-out suite and a BFCL sample
    scored = instance.get_latest_materialization_event(dg.AssetKey("policy_eval")).asset_materialization.metadata
    for key in ("heldout_reward", "heldout_validity", "heldout_abstention_accuracy", "bfcl_overall"):
        assert isinstance(scored[key], dg.FloatMetadataValue), key
    assert scored["suites"].value["heldout"]["name"] == "default"
    assert (tmp_path / "data" / "suites" / "default" / "suite.json").exists()
    assert Path(scored["out_dir"].value).is_absolute() and (Path(scored["out_dir"].value) / "results.parquet").exists()
    meta = instance.get_latest_materialization_event(dg.AssetKey("corpus")).asset_materialization.metadata
    assert meta["examples"].value == sum(m["composition"]["by_kind"].values())
    assert meta["kind_multi_turn"].value == m["composition"]["by_kind"]["multi_turn"]
    assert isinstance(meta["share_distractors"], dg.FloatMetadataValue) and meta["rejections"].value == rej.height
    assert meta["path"].value == str(versions[0].resolve()) and Path(meta["path"].value).is_absolute()
    assert set(meta["shares_vs_targets"].value["distractors"]) == {"share", "target"}
    rejected = instance.get_latest_materialization_event(dg.AssetKey("rejections")).asset_materialization.metadata
    counted = {k: v.value for k, v in rejected.items() if k.startswith("rejected_")}
    assert sum(counted.values()) == rejected["total"].value == rej.height
    knobs = next(e for e in r.get_asset_check_evaluations() if e.check_name == "corpus_composition").metadata["knobs"]
    assert all({"share", "target", "allowance", "one_example", "within"} <= set(k) for k in knobs.value.values())


def test_failing_quality_gate_stops_before_grpo_policy(tmp_path, monkeypatch):
    monkeypatch.setenv("PROVE_COMPOSITION_TOLERANCE", "-1")  # a gate that must fail, whatever the build's size
    cfg, r, instance = _materialize_all(tmp_path, train=True, servers=["banking"], examples=10)
    assert not r.success
    checks = {e.check_name: e.passed for e in r.get_asset_check_evaluations()}
    assert checks["corpus_composition"] is False
    assert instance.get_latest_materialization_event(dg.AssetKey("corpus")) is not None
    assert instance.get_latest_materialization_event(dg.AssetKey("grpo_policy")) is None
