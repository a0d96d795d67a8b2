"""SFT on every turn of the corpus conversations, then GRPO (TRL) on multi-step live rollouts, with
evaluation before, after SFT and after GRPO.

``train(corpus_dir, out_dir, config, progress=None)`` writes into ``out_dir``:

* ``metrics.jsonl``: one line per logged step (``phase`` sft | grpo; GRPO lines carry ``reward``,
  ``reward_std``, ``frac_reward_zero_std``, ``kl``, ``loss`` and the reward components ``reward/validity`` ...);
* ``eval_report.json`` and ``eval_report.md``: the eval split before, after SFT and after GRPO (mean reward
  with a 95% bootstrap interval, components, exact success, abstention accuracy, per kind, per server);
* ``reward_curve.png``: GRPO reward (and components, and the share of zero-variance groups) per step;
* ``checkpoint/``: the trained model and tokenizer (``from_pretrained``-loadable, also as ``model=`` again).

Rollouts: :mod:`training.multistep` through TRL's ``rollout_func`` (:mod:`training.grpo`). Under ``torchrun`` or
``accelerate launch`` every rank trains (DDP); only rank 0 evaluates and writes, and the report gains
``distributed`` (world size, every rank's parameter digest): see :mod:`training.distributed` and
docs/training-distributed.md.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from training.chat import ChatFormat
from training.config import TrainConfig, load_train_config
from training.data import Task, conversation_texts, load_tasks
from training.distributed import process_state, ranks_record
from training.evaluate import evaluate, paired_delta, plot_reward_curve, write_markdown
from training.grpo import RolloutReward, make_rollout_func
from training.multistep import MultiStepRunner
from training.policies import LocalPolicy
from training.rollout import EnvPool
from training.tiny import load_policy

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

Progress = Callable[..., None]
__all__ = ["TrainConfig", "load_train_config", "train", "run_sft", "run_grpo", "grpo_config"]


def _metrics_callback(path: Path | None, phase: str, timer: dict[str, float], progress: Progress | None, main: bool):
    from transformers import TrainerCallback

    class MetricsToJsonl(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            timer["_t"] = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            timer["steps_seconds"] = (
                timer.get("steps_seconds", 0.0) + time.perf_counter() - timer.pop("_t", time.perf_counter())
            )
            if (
                progress is not None and main and not control.should_log
            ):  # a logged step reports in on_log, with its metrics
                progress(phase, state.global_step, state.max_steps)

        def on_log(self, args, state, control, logs=None, **kw):
            if not logs or not main:
                return
            rec = {"phase": phase, "step": state.global_step}
            rec.update({k: (v if not isinstance(v, float) or math.isfinite(v) else None) for k, v in logs.items()})
            if path is not None:
                with path.open("a") as fh:
                    fh.write(json.dumps(rec) + "\n")
            if progress is not None and "train_runtime" not in logs:  # not the trainer's closing summary
                extra = {k: rec[k] for k in ("loss", "reward", "kl", "frac_reward_zero_std") if rec.get(k) is not None}
                progress(phase, state.global_step, state.max_steps, **extra)

    return MetricsToJsonl()


def run_sft(
    model: Any,
    fmt: ChatFormat,
    tasks: list[Task],
    config: TrainConfig,
    out_dir: Path,
    metrics_path: Path | None = None,
    progress: Progress | None = None,
    main: bool = True,
    callbacks: list[Any] | None = None,
) -> Any:
    """Supervised training on every turn of the conversations (loss on assistant tokens only); ``callbacks``:
    more ``TrainerCallback`` s (e.g. evaluations every N steps, ``bench/learning.py``)."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    rows = [fmt.sft_example(t, config.max_user_turns) for t in sft_tasks(tasks, config)]
    base = dict(
        output_dir=str(out_dir / "sft"),
        max_steps=config.sft_steps,
        per_device_train_batch_size=config.sft_batch_size,
        learning_rate=config.sft_lr,
        lr_scheduler_type=config.sft_lr_scheduler,
        warmup_steps=config.sft_warmup_steps,
        logging_steps=5,
        save_strategy="no",
        report_to="none",
        use_cpu=config.cpu(),
        seed=config.seed,
        disable_tqdm=True,
        max_length=config.max_prompt_length + config.max_completion_length,
        dataloader_pin_memory=False,
        completion_only_loss=True,
    )
    args = SFTConfig(**{**base, **config.sft_args})
    cbs = [_metrics_callback(metrics_path, "sft", {}, progress, main), *(callbacks or [])]
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=fmt.tok,
        callbacks=cbs,
        peft_config=None,
    )
    trainer.train()
    return trainer.model


def sft_tasks(tasks: list[Task], config: TrainConfig) -> list[Task]:
    """The SFT examples: every task, those where no call is right repeated ``sft_no_call_repeat`` times."""
    return [t for t in tasks for _ in range(config.sft_no_call_repeat if t.abstain else 1)]


def grpo_config(config: TrainConfig, out_dir: Path) -> Any:
    """The ``GRPOConfig`` a run uses (validated by TRL itself)."""
    from trl import GRPOConfig

    base = dict(
        output_dir=str(out_dir / "grpo"),
        max_steps=config.grpo_steps,
        per_device_train_batch_size=config.batch_size,
        num_generations=config.num_generations,
        max_completion_length=config.max_completion_length,
        learning_rate=config.lr,
        beta=config.kl_beta,
        temperature=config.temperature,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=config.cpu(),
        seed=config.seed,
        disable_tqdm=True,
        dataloader_pin_memory=False,
        remove_unused_columns=False,
        lr_scheduler_type="constant",
        warmup_steps=0,
    )
    return GRPOConfig(**{**base, **config.grpo_args})


def _peft_config(config: TrainConfig) -> Any:
    if config.lora is None:
        return None
    from peft import LoraConfig

    lo = config.lora
    return LoraConfig(
        r=lo.r, lora_alpha=lo.alpha, lora_dropout=lo.dropout, target_modules=lo.target_modules, task_type="CAUSAL_LM"
    )


def run_grpo(
    model: Any,
    runner: MultiStepRunner,
    tasks: list[Task],
    config: TrainConfig,
    out_dir: Path,
    metrics_path: Path | None = None,
    timer: dict[str, float] | None = None,
    progress: Progress | None = None,
    main: bool = True,
    callbacks: list[Any] | None = None,
) -> Any:
    """GRPO on multi-step live rollouts; returns the trained model (``callbacks``: as :func:`run_sft`)."""
    from datasets import Dataset
    from trl import GRPOTrainer

    ds = Dataset.from_list([{"prompt": t.example_id} for t in tasks])
    by_id = {t.example_id: t for t in tasks}
    timer = timer if timer is not None else {}
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[RolloutReward()],
        args=grpo_config(config, out_dir),
        train_dataset=ds,
        processing_class=runner.fmt.tok,
        callbacks=[_metrics_callback(metrics_path, "grpo", timer, progress, main), *(callbacks or [])],
        rollout_func=make_rollout_func(runner, by_id, config.temperature),
        peft_config=_peft_config(config),
    )
    trainer.train()
    m = trainer.model
    return m.merge_and_unload() if config.lora is not None and hasattr(m, "merge_and_unload") else m


def eval_policy(model: Any, tok: Any, config: TrainConfig) -> Any:
    """The policy the evaluation phases play: the model as it is now, greedy, ``eval_max_new_tokens`` a message,
    prompts cut (newest tokens kept) to what the model's positions hold."""
    return LocalPolicy(
        model,
        tok,
        name=config.model,
        max_new_tokens=config.eval_max_new_tokens,
        max_tool_chars=config.max_tool_chars,
        batch_size=config.eval_batch_size,
        template_kwargs=config.template_kwargs(),
    )


def _fits(fmt: ChatFormat, tasks: list[Task], max_len: int) -> tuple[list[Task], int]:
    keep = [t for t in tasks if len(fmt.prompt_ids(t)) <= max_len]
    return keep, len(tasks) - len(keep)


def _pin_kl_reference(model: Any, tok: Any, config: TrainConfig, out: Path, state: Any) -> None:
    """TRL loads the KL reference from the policy's ``name_or_path``: point it at the policy GRPO starts from
    (the SFT policy when SFT ran), saved under ``grpo_init/``."""
    if not config.kl_beta or config.lora is not None or (config.model != "tiny" and not config.sft_steps):
        return
    init = out / "grpo_init"
    if state.is_main_process:
        model.save_pretrained(init)
        tok.save_pretrained(init)
    state.wait_for_everyone()
    model.config.name_or_path = str(init)
    model.name_or_path = str(init)


def _load_tasks(corpus_dir: str | Path, config: TrainConfig) -> tuple[list[Task], list[Task]]:
    train_tasks = load_tasks(corpus_dir, "train", None)
    eval_tasks = load_tasks(corpus_dir, "eval", None)
    if config.servers:
        train_tasks = [t for t in train_tasks if t.server in config.servers]
        eval_tasks = [t for t in eval_tasks if t.server in config.servers]
    by_id = lambda t: t.example_id  # noqa: E731  a limit takes a stable sample across kinds and servers
    return sorted(train_tasks, key=by_id)[: config.train_limit], sorted(eval_tasks, key=by_id)[: config.eval_limit]


def train(
    corpus_dir: str | Path, out_dir: str | Path, config: TrainConfig | None = None, progress: Progress | None = None
) -> dict[str, Any]:
    """SFT + GRPO on the corpus; returns paths and final metrics (see the module docstring).

    ``progress(phase, step, total, **metrics)`` is called per logged SFT/GRPO step (``loss``, ``reward``,
    ``kl``, ``frac_reward_zero_std``) and per evaluation batch (phase ``eval_before`` ...)."""
    config = config or TrainConfig()
    state = process_state(config)  # a launch this training cannot run is refused first, naming the problem
    main = state.is_main_process

    import torch

    t_start = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    metrics_path = out / "metrics.jsonl"
    if main:
        metrics_path.write_text("")
    if config.torch_threads:
        torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)

    train_tasks, eval_tasks = _load_tasks(corpus_dir, config)
    if not train_tasks or not eval_tasks:
        raise ValueError(
            f"no train or eval examples in {corpus_dir}" + (f" for servers {config.servers}" if config.servers else "")
        )
    model, tok = load_policy(config.model, conversation_texts(train_tasks), config.tiny, config.model_dtype)
    fmt = ChatFormat(tok, config.template_kwargs(), config.max_tool_chars)
    train_tasks, skipped_train = _fits(fmt, train_tasks, config.max_prompt_length)
    eval_tasks, skipped_eval = _fits(fmt, eval_tasks, config.max_prompt_length)
    if not train_tasks or not eval_tasks:
        raise ValueError(f"no train or eval example fits max_prompt_length={config.max_prompt_length} tokens")
    if not config.cpu():
        model.to(state.device)

    timings: dict[str, float] = {}
    phases: dict[str, Any] = {}
    grpo_timer: dict[str, float] = {}
    with EnvPool(rollout_timeout_s=config.rollout_timeout_s) as pool:

        def ev(name: str) -> None:
            t = time.perf_counter()
            if main:
                cb = (lambda i, n: progress(f"eval_{name}", i, n)) if progress else None
                phases[name] = evaluate(
                    eval_policy(model, tok, config),
                    eval_tasks,
                    pool,
                    config.reward,
                    config.max_user_turns,
                    config.max_assistant_turns,
                    config.bootstrap_samples,
                    config.seed,
                    cb,
                )
                if progress:  # the phase's closing report carries its result
                    n = max(1, len(eval_tasks))
                    progress(f"eval_{name}", n, n, mean_reward=phases[name]["reward"]["mean"])
            state.wait_for_everyone()
            timings[f"eval_{name}_s"] = time.perf_counter() - t

        ev("before")
        t = time.perf_counter()
        if config.sft_steps:
            model = run_sft(model, fmt, train_tasks, config, out, metrics_path, progress, main)
            ev("after_sft")
        timings["sft_s"] = time.perf_counter() - t - timings.get("eval_after_sft_s", 0.0)

        delta = None
        rollout = None
        if config.grpo_steps:
            t = time.perf_counter()
            small = sum(p.numel() for p in model.parameters()) < 50_000_000
            snap = [p.detach().clone() for p in model.parameters()] if small else None
            _pin_kl_reference(model, tok, config, out, state)
            grpo_runner = MultiStepRunner(fmt, pool, config.limits(), config.reward, config.batch_size)
            model = run_grpo(model, grpo_runner, train_tasks, config, out, metrics_path, grpo_timer, progress, main)
            if snap is not None:
                delta = float(
                    sum(((p.detach().cpu() - s.cpu()) ** 2).sum() for p, s in zip(model.parameters(), snap)) ** 0.5
                )
            timings["grpo_s"] = time.perf_counter() - t
            st = grpo_runner.stats
            step_s = grpo_timer.get("steps_seconds", timings["grpo_s"])
            rollout = {
                "rollouts": st.rollouts,
                "calls": st.calls,
                "env_seconds": st.env_seconds,
                "reward_seconds": st.reward_seconds,
                "generate_seconds": st.generate_seconds,
                "grpo_step_seconds": step_s,
                "share_env_plus_reward": (st.env_seconds + st.reward_seconds) / step_s if step_s else None,
            }
            ev("after_grpo")

    dist = ranks_record(model, state)  # several processes: every rank's parameter digest (a collective)
    if not main:
        return {"out_dir": str(out), "rank": state.process_index, "world_size": state.num_processes}
    return _write_outputs(
        out,
        model,
        tok,
        config,
        phases,
        timings,
        t_start,
        rollout,
        delta,
        {
            "n_train": len(train_tasks),
            "n_eval": len(eval_tasks),
            "skipped_too_long": {"train": skipped_train, "eval": skipped_eval},
        },
        dist,
    )


def _write_outputs(
    out: Path,
    model: Any,
    tok: Any,
    config: TrainConfig,
    phases: dict[str, Any],
    timings: dict[str, float],
    t_start: float,
    rollout: dict[str, Any] | None,
    delta: float | None,
    counts: dict[str, Any],
    dist: dict[str, Any] | None = None,
) -> dict[str, Any]:
    ckpt = out / "checkpoint"
    model.save_pretrained(ckpt)
    tok.save_pretrained(ckpt)
    metrics_path = out / "metrics.jsonl"
    png = plot_reward_curve(metrics_path, out / "reward_curve.png")
    final = phases.get("after_grpo") or phases.get("after_sft") or phases["before"]
    vs = None
    if "after_grpo" in phases and "after_sft" in phases:
        vs = paired_delta(
            phases["after_sft"]["per_example"],
            phases["after_grpo"]["per_example"],
            config.bootstrap_samples,
            config.seed,
        )
    n_params = sum(p.numel() for p in model.parameters())
    zero_std = [
        json.loads(x).get("frac_reward_zero_std") for x in metrics_path.read_text().splitlines() if '"grpo"' in x
    ]
    report = {
        "config": config.model_dump(mode="json"),
        "n_params": n_params,
        **counts,
        "phases": phases,
        "before": phases["before"],
        "after": final,
        "grpo_vs_sft": vs,
        "frac_reward_zero_std_per_step": [z for z in zero_std if z is not None],
        "timings": {**timings, "total_s": time.perf_counter() - t_start},
        "rollout": rollout,
        "grpo_weight_delta": delta,
        **({"distributed": dist} if dist is not None else {}),  # one process: the report as before
    }
    tmp = out / "eval_report.json.tmp"
    tmp.write_text(json.dumps(report, indent=2))
    tmp.replace(out / "eval_report.json")
    write_markdown(report, out / "eval_report.md")
    headline = ("mean_reward", "exact_success", "abstention_accuracy")
    return {
        "out_dir": str(out),
        "checkpoint": str(ckpt),
        "eval_report": str(out / "eval_report.json"),
        "eval_report_md": str(out / "eval_report.md"),
        "metrics": str(metrics_path),
        "reward_curve": str(png) if png else None,
        "phases": {
            k: {h: (v[h]["mean"] if isinstance(v[h], dict) else v[h]) for h in headline} for k, v in phases.items()
        },
        "intervals": {k: v["reward"]["ci95"] for k, v in phases.items()},
        "grpo_vs_sft": vs,
        "components_after": final["components"],
        "timings": report["timings"],
        "rollout": rollout,
        "grpo_weight_delta": delta,
        "n_params": n_params,
        **({"distributed": dist} if dist is not None else {}),
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m training.train --corpus DIR --out DIR [--config train.yaml|JSON]`` (also under
    ``accelerate launch``)."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--config", default=None, help="a train.yaml / JSON file of TrainConfig fields, or a JSON string")
    a = ap.parse_args(argv)
    result = train(a.corpus, a.out, load_train_config(a.config))
    print(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
