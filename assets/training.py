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


class PolicyEvalSettings(dg.Config):
    """What ``policy_eval`` scores the policy on: the same suites for every version, so the Plots compare them.

    ``heldout``: a frozen suite's folder or name under ``<data>/suites`` (default ``default``: frozen from the
    first corpus version it is asked for, then the same items for every later version); ``policy``: score
    another policy instead of this version's (a checkpoint folder or a Hugging Face id)."""

    suites: list[str] = Field(["heldout", "bfcl-multi-turn"], description="heldout, bfcl-multi-turn")
    heldout: str = Field("default", description="a frozen held-out suite (folder or name under <data>/suites)")
    heldout_limit: int | None = Field(None, description="items of the held-out suite (None: all)")
    bfcl_categories: list[str] = Field(["base", "miss_func", "miss_param", "long_context"])
    bfcl_limit: int = Field(2, description="BFCL items per category (a fixed-seed sample)")
    seed: int = 0
    policy: str | None = Field(None, description="a checkpoint folder or model id to score instead of this version's")


@versioned(
    group_name="training",
    description="The policy scored on fixed suites, the same for every version: a frozen held-out suite (live, "
    "the programmatic reward) and BFCL v4 multi-turn (BFCL's classes and checker); numbers for the Plots.",
)
def policy_eval(
    context: AssetExecutionContext, config: PolicyEvalSettings, settings: ProveSettings, grpo_policy: str
) -> str:
    # deferred: torch, transformers and bfcl_eval load only when a policy is scored
    from training.policies import open_policy
    from training.suites.heldout import open_suite
    from training.suites.results import headline_numbers
    from training.suites.run import default_heldout, evals_root, evaluate_policy, suites_root

    cfg = settings.build_config()
    spec = config.policy or (str(Path(grpo_policy) / "checkpoint") if grpo_policy else None)
    if not spec:
        context.log.info("no policy to score (training disabled and no policy configured)")
        return ""
    heldout = None
    if "heldout" in config.suites:
        named = suites_root(cfg.data_path) / config.heldout
        if config.heldout == "default" and not named.exists():
            corpus = Path(grpo_policy).name if grpo_policy else None
            src = cfg.data_path / "corpus" / corpus if corpus else None
            named = default_heldout(cfg.data_path, src if src and src.exists() else None)
        heldout = open_suite(named if named.exists() else Path(config.heldout))
    policy = open_policy(spec)
    name = (Path(grpo_policy).name if grpo_policy and not config.policy else policy.name).replace("/", "-")
    out = evals_root(cfg.data_path) / f"{name}-{context.run_id[:8]}"
    log = progress.report if progress.active() else _log_progress(context)
    summary = evaluate_policy(
        policy,
        list(config.suites),
        out,
        heldout=heldout,
        categories=list(config.bfcl_categories),
        limit=config.heldout_limit,
        bfcl_limit=config.bfcl_limit,
        seed=config.seed,
        progress=lambda suite, done, total: log(f"suite_{suite}", done, total),
    )
    meta: dict[str, Any] = {
        "out_dir": MetadataValue.path(str(out.resolve())),
        "policy": MetadataValue.json(summary["policy"]),
        "suites": MetadataValue.json(summary["suites"]),
        "summary": MetadataValue.json(summary["summary"]),
    }
    meta.update(headline_numbers(summary["summary"]))
    context.add_output_metadata(meta)
    return str(out)
