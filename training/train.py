"""SFT warm start, then GRPO with TRL on live, session-isolated environments, with evaluation before and after.

``train(corpus_dir, out_dir, config)`` writes into ``out_dir``:

* ``metrics.jsonl``: one line per logged step (``phase`` sft | grpo; GRPO lines carry ``reward``, ``reward_std``,
  ``kl``, ``loss`` and the reward components ``reward/validity`` ...);
* ``eval_report.json`` and ``eval_report.md``: the eval split before and after training (mean reward and each
  component, exact-success rate, abstention accuracy, per kind);
* ``reward_curve.png``: GRPO reward (and components) per step;
* ``checkpoint/``: the trained model and tokenizer (``from_pretrained``-loadable, also as ``model=`` again).

The rollout design (what TRL 1.16 supports on CPU): GRPO generates one assistant message per prompt; the reward
function (:class:`training.rollout.LiveToolReward`) parses the tool calls out of it, runs them in order on a
fresh ``Environment(server).session(env_seed)`` and scores them with :mod:`pipeline.reward`. Prompts are rendered
per example with that example's tools (tool lists differ between examples: distractors, other servers), which
TRL's own ``tools=``/``environment_factory`` paths do not allow (they fix one tool list per environment class).
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, Field

from pipeline.reward import RewardConfig
from training.data import Task, conversation_texts, load_tasks, render_prompt, render_target
from training.rollout import EnvPool, LiveToolReward, score_completion
from training.tiny import TinyConfig, load_policy

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

# ``progress(phase, step, total, **metrics)``: what training reports as it goes, for a progress display.
# Phases: "eval_before", "sft" (metrics: loss), "grpo" (metrics: reward, kl, loss), "eval_after" (mean_reward).
Progress = Callable[..., None]


class TrainConfig(BaseModel):
    """Defaults are sized for the tiny policy on 2 CPU cores (~200 examples, a few minutes).

    For a pretrained model use the paper's values (see docs/training.md): ``lr`` 1e-6 / 3e-7 / 5e-8 by family,
    ``batch_size`` 16 prompts x ``num_generations`` 16, 350 steps, ``kl_beta`` 0.01.
    """

    model_config = {"extra": "forbid"}

    model: str = Field("tiny", description="'tiny' (offline, built here) or a Hugging Face model id / local path")
    tiny: TinyConfig = TinyConfig()
    sft_steps: int = Field(120, ge=0)
    sft_batch_size: int = 8
    sft_lr: float = 3e-3
    grpo_steps: int = Field(10, ge=0)
    batch_size: int = Field(8, description="completions per GRPO step (prompts per step = batch_size / num_generations)")
    num_generations: int = Field(4, ge=2, description="group size")
    lr: float = 5e-4
    kl_beta: float = Field(0.01, description="KL coefficient (paper: 0.01)")
    temperature: float = 1.0
    max_prompt_length: int = Field(1024, description="tokens; longer prompts are skipped (counted in the report)")
    max_completion_length: int = 64
    eval_limit: int | None = Field(256, ge=1, description="eval examples scored before and after training (a stable sample "
                                   "by example id); None scores the whole eval split, which at paper scale is ~1,300 "
                                   "rollouts per evaluation")
    eval_batch_size: int = 16
    train_limit: int | None = None
    seed: int = 0
    reward: RewardConfig = RewardConfig()
    rollout_timeout_s: float = 30.0
    torch_threads: int | None = None
    use_cpu: bool | None = Field(None, description="None: CPU unless CUDA is available")
    sft_args: dict[str, Any] = Field(default_factory=dict, description="extra SFTConfig fields (e.g. bf16, gradient_checkpointing)")
    grpo_args: dict[str, Any] = Field(default_factory=dict, description="extra GRPOConfig fields (e.g. use_vllm, vllm_mode, bf16)")

    def cpu(self) -> bool:
        if self.use_cpu is not None:
            return self.use_cpu
        import torch

        return not torch.cuda.is_available()


# ------------------------------------------------------------------------------------------------ evaluation

def generate(model: Any, tokenizer: Any, prompts: list[str], max_new_tokens: int, batch_size: int = 16) -> list[str]:
    """Greedy completions (decoded without special tokens)."""
    import torch

    model.eval()
    out: list[str] = []
    with torch.no_grad():
        for i in range(0, len(prompts), batch_size):
            enc = tokenizer(prompts[i:i + batch_size], return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)
            gen = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False,
                                 pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
            out.extend(tokenizer.batch_decode(gen[:, enc["input_ids"].shape[1]:], skip_special_tokens=True))
    return out


def evaluate(model: Any, tokenizer: Any, tasks: list[Task], pool: EnvPool, reward: RewardConfig,
             max_new_tokens: int, batch_size: int = 16) -> dict[str, Any]:
    """Mean reward and components, exact-success rate (tool tasks), abstention accuracy, per kind."""
    prompts = [render_prompt(tokenizer, t) for t in tasks]
    texts = generate(model, tokenizer, prompts, max_new_tokens, batch_size)
    rows = []
    for t, text in zip(tasks, texts):
        b, ro = score_completion(text, t.tools_json, t.reference, t.server, t.env_seed, pool, reward)
        rows.append((t, b, text))
    return summarize(rows)


def summarize(rows: list[tuple[Task, Any, str]]) -> dict[str, Any]:
    n = len(rows)
    tool = [(t, b) for t, b, _ in rows if not t.abstain]
    abst = [(t, b) for t, b, _ in rows if t.abstain]
    mean = lambda xs: (sum(xs) / len(xs)) if xs else None  # noqa: E731
    by_kind: dict[str, list[float]] = {}
    for t, b, _ in rows:
        by_kind.setdefault(t.kind, []).append(b.total)
    return {
        "n": n,
        "n_tool_tasks": len(tool),
        "n_abstention_tasks": len(abst),
        "mean_reward": mean([b.total for _, b, _ in rows]),
        "components": {k: mean([getattr(b, k) for _, b in tool]) for k in ("validity", "coverage", "efficiency", "name", "args")},
        "exact_success_rate": mean([1.0 if b.exact else 0.0 for _, b in tool]),
        "abstention_accuracy": mean([1.0 if b.n_calls == 0 else 0.0 for _, b in abst]),
        "mean_calls": mean([b.n_calls for _, b, _ in rows]),
        "by_kind": {k: {"n": len(v), "mean_reward": mean(v)} for k, v in sorted(by_kind.items())},
        "samples": [{"example_id": t.example_id, "completion": text[:300], "total": b.total} for t, b, text in rows[:3]],
    }


# ------------------------------------------------------------------------------------------------ logging

def _metrics_callback(path: Path, phase: str, timer: dict[str, float]):
    from transformers import TrainerCallback

    class MetricsToJsonl(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            timer["_t"] = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            timer["steps_seconds"] = timer.get("steps_seconds", 0.0) + time.perf_counter() - timer.pop("_t", time.perf_counter())

        def on_log(self, args, state, control, logs=None, **kw):
            if not logs:
                return
            rec = {"phase": phase, "step": state.global_step}
            rec.update({k: (v if not isinstance(v, float) or math.isfinite(v) else None) for k, v in logs.items()})
            with path.open("a") as fh:
                fh.write(json.dumps(rec) + "\n")

    return MetricsToJsonl()


def _progress_callback(progress: Progress, phase: str, total: int):
    """Reports each finished step, and the step's logged loss / reward, to ``progress``."""
    from transformers import TrainerCallback

    keys = {"loss": "loss", "reward": "reward", "kl": "kl"}

    class ReportProgress(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            progress(phase, state.global_step, total)

        def on_log(self, args, state, control, logs=None, **kw):
            found = {name: logs[k] for k, name in keys.items() if logs and isinstance(logs.get(k), (int, float))}
            if found:
                progress(phase, state.global_step, total, **found)

    return ReportProgress()


def plot_reward_curve(metrics_path: Path, png_path: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    recs = [json.loads(x) for x in metrics_path.read_text().splitlines() if x.strip()] if metrics_path.exists() else []
    recs = [r for r in recs if r.get("phase") == "grpo" and r.get("reward") is not None]
    fig, ax = plt.subplots(figsize=(7, 4))
    if recs:
        steps = [r["step"] for r in recs]
        ax.plot(steps, [r["reward"] for r in recs], marker="o", lw=2, label="total reward")
        for k in ("validity", "coverage", "name", "args", "efficiency"):
            ys = [r.get(f"reward/{k}") for r in recs]
            if all(y is not None for y in ys):
                ax.plot(steps, ys, lw=1, alpha=0.7, label=k)
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("reward (max 1.3)")
    ax.set_title("GRPO reward on live environments")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return png_path


def _fmt(v: Any) -> str:
    return "–" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


def write_markdown(report: dict[str, Any], path: Path) -> None:
    b, a = report["before"], report["after"]
    lines = [
        "# Evaluation report", "",
        f"model: `{report['config']['model']}`; eval examples: {b['n']} ({b['n_tool_tasks']} tool tasks, "
        f"{b['n_abstention_tasks']} abstention); SFT {report['config']['sft_steps']} steps, GRPO {report['config']['grpo_steps']} steps.",
        "", "| metric | before | after |", "|---|---|---|",
        f"| mean reward (max 1.3) | {_fmt(b['mean_reward'])} | {_fmt(a['mean_reward'])} |",
    ]
    for k in b["components"]:
        lines.append(f"| {k} (tool tasks) | {_fmt(b['components'][k])} | {_fmt(a['components'][k])} |")
    lines += [
        f"| exact success rate | {_fmt(b['exact_success_rate'])} | {_fmt(a['exact_success_rate'])} |",
        f"| abstention accuracy | {_fmt(b['abstention_accuracy'])} | {_fmt(a['abstention_accuracy'])} |",
        f"| calls per example | {_fmt(b['mean_calls'])} | {_fmt(a['mean_calls'])} |",
        "", "## By kind", "", "| kind | n | before | after |", "|---|---|---|---|",
    ]
    for k, v in a["by_kind"].items():
        lines.append(f"| {k} | {v['n']} | {_fmt(b['by_kind'].get(k, {}).get('mean_reward'))} | {_fmt(v['mean_reward'])} |")
    lines += ["", "## Sample completions after training", ""]
    for s in a["samples"]:
        lines.append(f"- `{s['example_id']}` (reward {s['total']:.3f}): `{s['completion'].strip()[:200]}`")
    path.write_text("\n".join(lines) + "\n")


# ------------------------------------------------------------------------------------------------ phases

def run_sft(model: Any, tokenizer: Any, tasks: list[Task], config: TrainConfig, out_dir: Path, metrics_path: Path | None = None,
            progress: Progress | None = None) -> Any:
    """A short supervised warm start on the first-turn targets (completion-only loss)."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    rows = []
    for t in tasks:
        p = render_prompt(tokenizer, t)
        rows.append({"prompt": p, "completion": render_target(tokenizer, t, p)})
    args = SFTConfig(
        output_dir=str(out_dir / "sft"), max_steps=config.sft_steps, per_device_train_batch_size=config.sft_batch_size,
        learning_rate=config.sft_lr, lr_scheduler_type="constant", warmup_steps=0, logging_steps=5, save_strategy="no",
        report_to="none", use_cpu=config.cpu(), seed=config.seed, disable_tqdm=True,
        max_length=config.max_prompt_length + config.max_completion_length,
        dataloader_pin_memory=False, completion_only_loss=True, **config.sft_args,
    )
    cbs = [_metrics_callback(metrics_path, "sft", {})] if metrics_path else []
    cbs += [_progress_callback(progress, "sft", config.sft_steps)] if progress else []
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer, callbacks=cbs)
    trainer.train()
    return trainer.model


def run_grpo(model: Any, tokenizer: Any, tasks: list[Task], config: TrainConfig, out_dir: Path, pool: EnvPool,
             metrics_path: Path | None = None, timer: dict[str, float] | None = None,
             progress: Progress | None = None) -> tuple[Any, LiveToolReward]:
    """GRPO with the live reward; returns (model, reward function with its timing counters)."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    ds = Dataset.from_list([{"prompt": render_prompt(tokenizer, t), "tools": t.tools_json, "reference": t.reference_json,
                             "server": t.server, "env_seed": t.env_seed} for t in tasks])
    reward = LiveToolReward(pool, config.reward)
    src = str(getattr(model.config, "_name_or_path", "") or "")
    if config.kl_beta and not (src and (Path(src).is_dir() or config.model != "tiny")):
        # TRL builds the KL reference model from the policy's name_or_path: give an in-memory model one
        init = out_dir / "grpo_init"
        model.save_pretrained(init)
        tokenizer.save_pretrained(init)
        model.config._name_or_path = str(init)
        model.name_or_path = str(init)
    args = GRPOConfig(
        output_dir=str(out_dir / "grpo"), max_steps=config.grpo_steps, per_device_train_batch_size=config.batch_size,
        num_generations=config.num_generations, max_completion_length=config.max_completion_length,
        learning_rate=config.lr, beta=config.kl_beta, temperature=config.temperature, logging_steps=1, save_strategy="no",
        report_to="none", use_cpu=config.cpu(), seed=config.seed, disable_tqdm=True, dataloader_pin_memory=False,
        remove_unused_columns=False, lr_scheduler_type="constant", warmup_steps=0, **config.grpo_args,
    )
    timer = timer if timer is not None else {}
    cbs = [_metrics_callback(metrics_path, "grpo", timer)] if metrics_path else []
    cbs += [_progress_callback(progress, "grpo", config.grpo_steps)] if progress else []
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=args, train_dataset=ds, processing_class=tokenizer, callbacks=cbs)
    trainer.train()
    return trainer.model, reward


def _fits(tokenizer: Any, tasks: list[Task], max_len: int) -> tuple[list[Task], int]:
    keep = [t for t in tasks if len(tokenizer(render_prompt(tokenizer, t), add_special_tokens=False)["input_ids"]) <= max_len]
    return keep, len(tasks) - len(keep)


def train(corpus_dir: str | Path, out_dir: str | Path, config: TrainConfig | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """SFT warm start + GRPO on the corpus; returns paths and final metrics (see the module docstring).
    ``progress`` (optional) is called as each phase advances (see :data:`Progress`)."""
    import torch

    report_progress: Progress = progress or (lambda phase, step, total, **metrics: None)

    config = config or TrainConfig()
    t_start = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    metrics_path = out / "metrics.jsonl"
    metrics_path.write_text("")
    if config.torch_threads:
        torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)

    train_tasks = load_tasks(corpus_dir, "train", config.train_limit)
    eval_tasks = load_tasks(corpus_dir, "eval", config.eval_limit)
    model, tok = load_policy(config.model, conversation_texts(train_tasks), config.tiny)
    train_tasks, skipped_train = _fits(tok, train_tasks, config.max_prompt_length)
    eval_tasks, skipped_eval = _fits(tok, eval_tasks, config.max_prompt_length)
    if not train_tasks or not eval_tasks:
        raise ValueError(f"no train or eval example fits max_prompt_length={config.max_prompt_length} tokens")

    timings: dict[str, float] = {}
    with EnvPool(rollout_timeout_s=config.rollout_timeout_s) as pool:
        t = time.perf_counter()
        report_progress("eval_before", 0, 1)
        before = evaluate(model, tok, eval_tasks, pool, config.reward, config.max_completion_length, config.eval_batch_size)
        report_progress("eval_before", 1, 1, mean_reward=before["mean_reward"])
        timings["eval_before_s"] = time.perf_counter() - t

        t = time.perf_counter()
        if config.sft_steps:
            model = run_sft(model, tok, train_tasks, config, out, metrics_path, progress)
        timings["sft_s"] = time.perf_counter() - t

        reward_fn = None
        grpo_timer: dict[str, float] = {}
        t = time.perf_counter()
        delta = None
        if config.grpo_steps:
            small = sum(p.numel() for p in model.parameters()) < 50_000_000
            snap = [p.detach().clone() for p in model.parameters()] if small else None
            model, reward_fn = run_grpo(model, tok, train_tasks, config, out, pool, metrics_path, grpo_timer, progress)
            if snap is not None:
                delta = float(sum(((p.detach() - s) ** 2).sum() for p, s in zip(model.parameters(), snap)) ** 0.5)
        timings["grpo_s"] = time.perf_counter() - t

        t = time.perf_counter()
        report_progress("eval_after", 0, 1)
        after = evaluate(model, tok, eval_tasks, pool, config.reward, config.max_completion_length, config.eval_batch_size)
        report_progress("eval_after", 1, 1, mean_reward=after["mean_reward"])
        timings["eval_after_s"] = time.perf_counter() - t

    ckpt = out / "checkpoint"
    model.save_pretrained(ckpt)
    tok.save_pretrained(ckpt)
    png = plot_reward_curve(metrics_path, out / "reward_curve.png")

    grpo_step_s = grpo_timer.get("steps_seconds", timings["grpo_s"])
    rollout = None
    if reward_fn is not None:
        rollout = {
            "reward_calls": reward_fn.calls,
            "reward_seconds": reward_fn.total_seconds,
            "env_seconds": reward_fn.env_seconds,
            "grpo_step_seconds": grpo_step_s,
            "share_env": reward_fn.env_seconds / grpo_step_s if grpo_step_s else None,
            "share_reward_incl_env": reward_fn.total_seconds / grpo_step_s if grpo_step_s else None,
        }
    n_params = sum(p.numel() for p in model.parameters())
    report = {
        "config": config.model_dump(mode="json"),
        "n_params": n_params,
        "n_train": len(train_tasks), "n_eval": len(eval_tasks),
        "skipped_too_long": {"train": skipped_train, "eval": skipped_eval},
        "before": before, "after": after,
        "timings": {**timings, "total_s": time.perf_counter() - t_start},
        "rollout": rollout,
        "grpo_weight_delta": delta,
    }
    (out / "eval_report.json").write_text(json.dumps(report, indent=2))
    write_markdown(report, out / "eval_report.md")
    return {
        "out_dir": str(out),
        "checkpoint": str(ckpt),
        "eval_report": str(out / "eval_report.json"),
        "eval_report_md": str(out / "eval_report.md"),
        "metrics": str(metrics_path),
        "reward_curve": str(png) if png else None,
        "before": {k: before[k] for k in ("mean_reward", "exact_success_rate", "abstention_accuracy")},
        "after": {k: after[k] for k in ("mean_reward", "exact_success_rate", "abstention_accuracy")},
        "components_after": after["components"],
        "timings": report["timings"],
        "rollout": rollout,
        "grpo_weight_delta": delta,
        "n_params": n_params,
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m training.train --corpus DIR --out DIR [--config JSON]`` (also under ``accelerate launch``)."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--config", default="{}", help="TrainConfig fields as JSON, or a path to a JSON file")
    a = ap.parse_args(argv)
    raw = Path(a.config).read_text() if Path(a.config).is_file() else a.config
    result = train(a.corpus, a.out, TrainConfig.model_validate_json(raw))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
