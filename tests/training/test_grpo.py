"""SFT + GRPO with TRL on the tiny policy against the live banking server, end to end."""

from __future__ import annotations

import json

import polars as pl
import pytest
from safetensors.torch import load_file

from pipeline.corpus.columns import reference_of
from training.fixture import build_fixture_corpus
from training.train import TrainConfig, train


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return build_fixture_corpus(tmp_path_factory.mktemp("corpus"), n=40, seed=0)


def test_fixture_corpus_has_the_corpus_columns(corpus):
    df = pl.read_parquet(corpus / "train.parquet")
    assert {
        "example_id",
        "kind",
        "servers",
        "env_seed",
        "messages",
        "tools",
        "reference",
        "augmentations",
        "split",
    } <= set(df.columns)
    row = df.row(0, named=True)
    assert row["servers"] == ["banking"] and isinstance(reference_of(row["reference"]), list)


def test_sft_then_grpo_changes_the_weights_and_reports_three_phases_with_intervals(corpus, tmp_path):
    cfg = TrainConfig(
        sft_steps=10,
        grpo_steps=2,
        batch_size=8,
        num_generations=4,
        eval_limit=6,
        max_new_tokens=24,
        max_completion_length=96,
        eval_max_new_tokens=24,
        bootstrap_samples=200,
    )
    calls: list[tuple] = []
    out = train(
        corpus, tmp_path / "run", cfg, progress=lambda phase, step, total, **m: calls.append((phase, step, total, m))
    )
    before = load_file(
        tmp_path / "run" / "grpo_init" / "model.safetensors"
    )  # the policy GRPO started from (the KL reference)
    after = load_file(tmp_path / "run" / "checkpoint" / "model.safetensors")
    name = "model.layers.0.self_attn.q_proj.weight"
    assert not before[name].equal(after[name])
    assert out["grpo_weight_delta"] > 0

    report = json.loads((tmp_path / "run" / "eval_report.json").read_text())
    assert set(report["phases"]) == {"before", "after_sft", "after_grpo"}
    assert "distributed" not in report and "distributed" not in out  # one process: the report as it always was
    for ph in report["phases"].values():
        assert set(ph["components"]) == {"validity", "coverage", "efficiency", "name", "args"}
        lo, hi = ph["reward"]["ci95"]
        assert lo <= ph["reward"]["mean"] <= hi and ph["n"] == 6
        assert ph["by_server"] == {"banking": {"n": 6, "mean_reward": pytest.approx(ph["mean_reward"])}}
        assert "exact_success" in ph and "abstention_accuracy" in ph
    assert report["grpo_vs_sft"]["mean"] is not None
    steps = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    grpo = [s for s in steps if s["phase"] == "grpo" and "reward" in s]
    assert len(grpo) == 2 and all({"kl", "loss", "frac_reward_zero_std", "reward/validity"} <= set(s) for s in grpo)
    assert len(report["frac_reward_zero_std_per_step"]) == 2
    assert [c[1] for c in calls if c[0] == "grpo"] == [1, 2] and all("reward" in c[3] for c in calls if c[0] == "grpo")
    assert any(c[0] == "sft" for c in calls) and any(c[0] == "eval_after_grpo" for c in calls)
    assert (tmp_path / "run" / "reward_curve.png").stat().st_size > 1000
    md = (tmp_path / "run" / "eval_report.md").read_text()
    assert md.startswith("# Evaluation report") and "after_sft" in md and "## By server" in md


def test_a_task_limit_takes_a_stable_sample_by_example_id_not_the_first_rows(corpus, tmp_path):
    from training.data import load_tasks

    df = pl.read_parquet(corpus / "train.parquet").reverse()  # rows not in id order
    df.write_parquet(tmp_path / "train.parquet")
    five = load_tasks(tmp_path, "train", 5)
    assert [t.example_id for t in five] == sorted(df["example_id"].to_list())[:5] != df["example_id"].to_list()[:5]
    assert [t.example_id for t in load_tasks(tmp_path, "train", 5)] == [t.example_id for t in five]
    assert len(load_tasks(tmp_path, "train", None)) == df.height


def test_lora_grpo_trains_adapters_and_saves_a_merged_plain_checkpoint(corpus, tmp_path):
    from transformers import AutoModelForCausalLM

    cfg = TrainConfig(
        sft_steps=0,
        grpo_steps=1,
        batch_size=4,
        num_generations=2,
        eval_limit=2,
        max_new_tokens=16,
        max_completion_length=48,
        eval_max_new_tokens=16,
        bootstrap_samples=100,
        lora={"r": 4, "alpha": 8, "target_modules": ["q_proj", "v_proj"]},
    )
    train(corpus, tmp_path / "run", cfg)
    saved = load_file(tmp_path / "run" / "checkpoint" / "model.safetensors")
    assert not any("lora" in k for k in saved)  # adapters merged into the base weights
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "run" / "checkpoint")
    assert sum(p.numel() for p in model.parameters()) > 100_000
    report = json.loads((tmp_path / "run" / "eval_report.json").read_text())
    assert set(report["phases"]) == {"before", "after_grpo"} and report["config"]["lora"]["r"] == 4
