"""`train(..., progress=)` reports each phase as it advances: the callback a progress display uses."""

from __future__ import annotations

import pytest

from training.fixture import build_fixture_corpus
from training.train import TrainConfig, train


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return build_fixture_corpus(tmp_path_factory.mktemp("corpus"), n=24, seed=0)


def test_training_reports_every_sft_and_grpo_step_with_loss_and_reward(corpus, tmp_path):
    events: list[tuple[str, int, int, dict]] = []
    cfg = TrainConfig(
        sft_steps=5,
        grpo_steps=2,
        batch_size=8,
        num_generations=4,
        eval_limit=4,
        max_completion_length=16,
        eval_max_new_tokens=16,
    )
    train(
        corpus, tmp_path / "run", cfg, progress=lambda phase, step, total, **m: events.append((phase, step, total, m))
    )
    phases = list(dict.fromkeys(e[0] for e in events))
    assert phases == ["eval_before", "sft", "eval_after_sft", "grpo", "eval_after_grpo"]
    sft_steps = sorted({e[1] for e in events if e[0] == "sft"})
    assert sft_steps == [1, 2, 3, 4, 5] and all(e[2] == 5 for e in events if e[0] == "sft")
    assert any("loss" in e[3] for e in events if e[0] == "sft")
    grpo = [e for e in events if e[0] == "grpo"]
    assert sorted({e[1] for e in grpo}) == [1, 2] and all(e[2] == 2 for e in grpo)
    assert sum("reward" in e[3] for e in grpo) == 2, "each GRPO step reports its mean reward"
    closing = [e for e in events if e[0].startswith("eval") and e[1] == e[2] and "mean_reward" in e[3]]
    assert [e[0] for e in closing] == ["eval_before", "eval_after_sft", "eval_after_grpo"], (
        "each evaluation ends with its mean reward"
    )
