"""The policy asset: SFT then GRPO on the newest corpus version, evaluated before, after SFT and after GRPO;
and its resource, the training settings (typed Dagster ``Config``)."""

import json
from pathlib import Path
from typing import Any

import dagster as dg
from dagster import AssetExecutionContext, MetadataValue
from pydantic import Field

from assets import progress
from assets.code_versions import versioned
from assets.resources import ProveSettings, dagster_overrides, png_markdown
from training.config import TrainConfig, load_train_config

# every field of TrainConfig, typed, unset by default: an unset field takes the model's default
TrainParams = dagster_overrides(
    TrainConfig,
    config_file=(
        str | None,
        Field(
            None, description="a train.yaml read first, as by `prove train --config`; the fields set here win over it"
        ),
    ),
)


class TrainingSettings(dg.ConfigurableResource):
    """Whether the build trains the policy, and its training settings: the fields of
    ``training.config.TrainConfig``, typed. A field left unset takes the model's default (per-model defaults,
    :func:`training.config.load_train_config`); ``config_file`` is read first and the fields set here win."""

    train: bool = True
    params: TrainParams = TrainParams()  # type: ignore[valid-type]

    def train_config(self) -> TrainConfig:
        """The validated TrainConfig (``ValueError`` naming the file, if any, and the offending fields)."""
        values = {k: v for k, v in self.params.model_dump(mode="json").items() if v is not None}
        file = values.pop("config_file", None)
        return load_train_config(file, values) if file else load_train_config(values)


def training_settings(train: bool = True, params: dict[str, Any] | None = None) -> TrainingSettings:
    """The resource for ``params`` (TrainConfig fields and ``config_file``; a bad type is refused naming its field)."""
    return TrainingSettings(train=train, params=TrainParams(**(params or {})))


def _log_progress(context: AssetExecutionContext):
    """Training progress as log lines (a run launched from the UI, where no display listens): each phase's
    start and end, and every tenth step."""

    def log(phase: str, step: int, total: int, **metrics: Any) -> None:
        if step in (0, total) or step % 10 == 0:
            shown = ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in metrics.items())
            context.log.info(f"{phase} {step}/{total}" + (f": {shown}" if shown else ""))

    return log


def eval_numbers(phase: str, ev: dict[str, Any]) -> dict[str, float]:
    """An evaluation phase's means as plain numbers, which the asset's Plots tab draws across versions."""
    out = {}
    for k in ("reward", "exact_success", "abstention_accuracy"):
        mean = (ev.get(k) or {}).get("mean")
        if mean is not None:
            out[f"eval_{phase}_{k}"] = float(mean)
    return out


@versioned(
    group_name="training",
    description="SFT on every turn, then GRPO on multi-step live rollouts with the programmatic reward; "
    "evaluated before, after SFT and after GRPO.",
)
def grpo_policy(
    context: AssetExecutionContext, settings: ProveSettings, training: TrainingSettings, corpus: str
) -> str:
    if not training.train:
        context.log.info("training disabled (--no-train)")
        return ""
    from training.train import train  # deferred: torch and TRL load only when the policy is trained

    cfg = settings.build_config()
    tcfg = training.train_config()
    out_dir = cfg.data_path / "runs" / Path(corpus).name
    result = train(
        corpus, str(out_dir), tcfg, progress=progress.report if progress.active() else _log_progress(context)
    )
    report = json.loads((out_dir / "eval_report.json").read_text())
    meta: dict[str, Any] = {
        "out_dir": MetadataValue.path(str(out_dir.resolve())),
        "result": MetadataValue.json(json.loads(json.dumps(result, default=str))),
    }
    for phase, ev in report["phases"].items():  # before / after_sft / after_grpo, 95% bootstrap intervals
        meta[f"eval_{phase}"] = MetadataValue.json(
            {k: ev[k] for k in ("reward", "exact_success", "abstention_accuracy", "by_kind", "by_server")}
        )
        meta.update(eval_numbers(phase, ev))
    meta["grpo_vs_sft"] = MetadataValue.json(report.get("grpo_vs_sft") or {})
    if (report.get("grpo_vs_sft") or {}).get("mean") is not None:
        meta["grpo_minus_sft"] = float(report["grpo_vs_sft"]["mean"])
    meta["frac_reward_zero_std_per_step"] = MetadataValue.json(report["frac_reward_zero_std_per_step"])
    meta["eval_report"] = MetadataValue.md((out_dir / "eval_report.md").read_text())
    curve = out_dir / "reward_curve.png"
    if curve.exists():
        meta["reward_curve"] = png_markdown("reward", curve)
    context.add_output_metadata(meta)
    return str(out_dir)
