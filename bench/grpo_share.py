"""Where a GRPO step's wall time goes with multi-step live rollouts on CPU. Prints JSON.

A short SFT + GRPO run of the tiny policy (TRL ``GRPOTrainer`` with ``training.grpo``'s ``rollout_func``) on a
fixture corpus built on the live banking server (one- and two-turn conversations, calls that depend on earlier
results). Reported: seconds of the GRPO steps, of generation, of environment work (session open, calls, close,
state hashes) and of the reward (``score_turns``), and the share of environment + reward in a step; the
target is under 10%. The baseline is the step time measured in the same run.

    PYTHONPATH=. .venv/bin/python bench/grpo_share.py [--steps 4] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def measure(steps: int = 4, examples: int = 60) -> dict:
    from training.fixture import build_fixture_corpus
    from training.train import TrainConfig, train

    cfg = TrainConfig(
        sft_steps=60, grpo_steps=steps, eval_limit=4, bootstrap_samples=100
    )  # SFT enough that the policy calls tools
    with tempfile.TemporaryDirectory() as d:
        corpus = build_fixture_corpus(Path(d) / "corpus", n=examples)
        res = train(corpus, Path(d) / "run", cfg)
    ro = res["rollout"]
    step = ro["grpo_step_seconds"]
    env_reward = ro["env_seconds"] + ro["reward_seconds"]
    return {
        "grpo_steps": steps,
        "completions_per_step": cfg.batch_size,
        "rollouts": ro["rollouts"],
        "tool_calls": ro["calls"],
        "grpo_step_seconds": round(step, 3),
        "generate_seconds": round(ro["generate_seconds"], 3),
        "env_seconds": round(ro["env_seconds"], 4),
        "reward_seconds": round(ro["reward_seconds"], 4),
        "share_env_plus_reward": round(env_reward / step, 4),
        "share_generate": round(ro["generate_seconds"] / step, 4),
        "target": "share_env_plus_reward < 0.10",
        "within_target": env_reward / step < 0.10,
        "device": "cpu",
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--out")
    a = ap.parse_args()
    text = json.dumps(measure(a.steps), indent=2)
    if a.out:
        Path(a.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
