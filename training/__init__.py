"""GRPO with TRL: live environments for rollouts, the tiny offline model, training, evaluation."""
