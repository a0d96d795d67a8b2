"""TRL glue: the ``rollout_func`` that runs multi-step live rollouts, and the reward function that hands
their scores to the trainer.

Prompt-count semantics (TRL 1.16, pinned by ``tests/training/test_multistep.py``): the trainer calls
``rollout_func(prompts, trainer)`` with the prompts of this process's batch *as the sampler drew them*:
each prompt already repeated ``num_generations`` times (``per_device_train_batch_size`` entries in all), and
expects one completion per entry, in order. The dataset's ``prompt`` column holds the example id; the
rollout looks the task up, so each example keeps its own tool list, server and seed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from training.multistep import MultiStepRunner, breakdown_json

COMPONENT_KEYS = ("validity", "coverage", "efficiency", "name", "args")


def make_rollout_func(runner: MultiStepRunner, tasks: Mapping[str, Any], temperature: float):
    """``rollout_func`` for ``GRPOTrainer``: prompt_ids, completion_ids, env_mask (0 on tool-result and user
    tokens), logprobs None (the trainer recomputes them), and per completion ``prove_reward`` (the total)
    and ``prove_breakdown`` (JSON of the components)."""

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        from trl.models.utils import unwrap_model_for_generation

        batch = [tasks[str(p)] for p in prompts]
        with unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator) as model:
            trajs = runner.run(model, batch, temperature=temperature)
        eos = runner.fmt.tok.eos_token_id
        for tr in trajs:  # the trainer needs at least one completion token
            if not tr.completion_ids:
                tr.add([eos if eos is not None else runner.pad_id], 1)
        return {
            "prompt_ids": [tr.prompt_ids for tr in trajs],
            "completion_ids": [tr.completion_ids for tr in trajs],
            "logprobs": None,
            "env_mask": [tr.env_mask for tr in trajs],
            "prove_reward": [float(tr.reward.total) for tr in trajs],
            "prove_breakdown": [breakdown_json(tr.reward) for tr in trajs],
        }

    return rollout_func


class RolloutReward:
    """The reward function: the score :func:`pipeline.reward.score_turns` gave each rollout (computed in the
    rollout, where the calls ran live). Component means go to the trainer's log (``reward/validity`` ...)."""

    __name__ = "prove_reward"

    def __call__(self, prompts: list, completions: list, prove_reward: list | None = None,
                 prove_breakdown: list | None = None, log_metric: Any = None, **_: Any) -> list[float]:
        if prove_reward is None:
            raise ValueError("prove_reward missing: this reward reads the scores of training.grpo.make_rollout_func")
        if log_metric is not None and prove_breakdown:
            parts = [json.loads(b) for b in prove_breakdown]
            n = len(parts)
            for k in COMPONENT_KEYS:
                log_metric(f"reward/{k}", sum(p[k] for p in parts) / n)
            log_metric("reward/calls_per_rollout", sum(p["n_calls"] for p in parts) / n)
            log_metric("reward/exact", sum(1.0 for p in parts if p["exact"]) / n)
        return [float(r) for r in prove_reward]
