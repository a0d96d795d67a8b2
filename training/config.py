"""The training configuration: :class:`TrainConfig`, per-model defaults, and ``train.yaml`` loading.

``load_train_config(path)`` reads a YAML or JSON file (or takes a dict) and fills every field the file does
not set from the defaults of its model: the class defaults are sized for the tiny offline policy on 2 CPU
cores; a hub model (any other ``model``) gets :data:`HUB_DEFAULTS` (no SFT, the paper's batch / group / KL,
fp32 master weights with bf16 autocast, a learning rate by model family from :func:`family_lr`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from pipeline.reward.score import RewardConfig
from training.multistep import RolloutLimits
from training.tiny import TinyConfig


class LoraSettings(BaseModel):
    """Optional LoRA through peft (``pip install prove[train]`` has it): GRPO trains adapters only; the KL
    reference is the model with the adapters disabled, i.e. the policy GRPO started from."""

    model_config = {"extra": "forbid"}

    r: int = Field(16, ge=1)
    alpha: int = 32
    dropout: float = 0.05
    target_modules: str | list[str] = "all-linear"


class TrainConfig(BaseModel):
    """Defaults are sized for the tiny policy on 2 CPU cores (a few minutes); see docs/training.md for the
    GPU recipe and :func:`load_train_config` for per-model defaults."""

    model_config = {"extra": "forbid"}

    model: str = Field("tiny", description="'tiny' (offline, built here) or a Hugging Face model id / local path")
    tiny: TinyConfig = TinyConfig()
    model_dtype: str = Field(
        "float32",
        description="weights as loaded (the optimizer's master copy): float32, or "
        "'auto'/'bfloat16' for pure low-precision training (not advised at lr 1e-6)",
    )
    enable_thinking: bool = Field(False, description="render prompts with a thinking model's thinking block")
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict, description="extra apply_chat_template kwargs")
    servers: list[str] | None = Field(None, description="train and evaluate on these servers' examples only")
    sft_steps: int = Field(300, ge=0)
    sft_batch_size: int = 8
    sft_lr: float = 3e-3
    sft_lr_scheduler: str = Field("cosine", description="SFT's learning-rate schedule (transformers' names)")
    sft_warmup_steps: int = Field(20, ge=0)
    sft_no_call_repeat: int = Field(
        2, ge=1, description="SFT sees each example where no call is right this many times (declining is rarer)"
    )
    grpo_steps: int = Field(8, ge=0)
    batch_size: int = Field(
        8, description="completions per device per GRPO step (prompts = batch_size / num_generations)"
    )
    num_generations: int = Field(4, ge=2, description="group size")
    lr: float = Field(5e-5, description="GRPO's learning rate (the tiny policy's SFT weights move little)")
    kl_beta: float = Field(
        0.01, ge=0, description="KL coefficient (paper: 0.01); the reference is the policy GRPO starts from"
    )
    temperature: float = Field(1.0, gt=0)
    max_prompt_length: int = Field(1024, description="tokens; longer prompts are skipped (counted in the report)")
    max_user_turns: int = Field(5, ge=1)
    max_assistant_turns: int = Field(10, ge=1)
    max_new_tokens: int = Field(48, ge=1, description="tokens per assistant message")
    max_completion_length: int = Field(192, ge=1, description="tokens of a whole rollout after the prompt")
    max_tool_chars: int = Field(400, ge=1, description="tool results are cut to this many characters")
    eval_limit: int | None = Field(64, ge=1, description="eval examples (a stable sample by example id); None: all")
    eval_batch_size: int = 16
    eval_max_new_tokens: int = Field(
        96, ge=1, description="tokens per assistant message in the evaluation phases (a whole call must fit)"
    )
    bootstrap_samples: int = Field(1000, ge=100)
    train_limit: int | None = None
    seed: int = 0
    reward: RewardConfig = RewardConfig(per_turn=True)
    rollout_timeout_s: float = 30.0
    torch_threads: int | None = None
    use_cpu: bool | None = Field(None, description="None: CPU unless CUDA is available")
    lora: LoraSettings | None = None
    sft_args: dict[str, Any] = Field(
        default_factory=dict, description="extra SFTConfig fields (e.g. bf16, gradient_checkpointing)"
    )
    grpo_args: dict[str, Any] = Field(
        default_factory=dict, description="extra GRPOConfig fields (e.g. bf16, gradient_checkpointing)"
    )

    def cpu(self) -> bool:
        if self.use_cpu is not None:
            return self.use_cpu
        import torch

        return not torch.cuda.is_available()

    def limits(self) -> RolloutLimits:
        return RolloutLimits(
            max_user_turns=self.max_user_turns,
            max_assistant_turns=self.max_assistant_turns,
            max_new_tokens=self.max_new_tokens,
            max_completion_length=self.max_completion_length,
        )

    def template_kwargs(self) -> dict[str, Any]:
        return {"enable_thinking": self.enable_thinking, **self.chat_template_kwargs}


# the paper: batch 16 prompts x group 16, 350 steps, KL 0.01, 5 user / 10 assistant turns; RL from the instruct model
HUB_DEFAULTS: dict[str, Any] = {
    "sft_steps": 0,
    "sft_lr": 1e-5,
    "sft_lr_scheduler": "constant",
    "sft_warmup_steps": 0,
    "sft_no_call_repeat": 1,
    "sft_batch_size": 8,
    "grpo_steps": 350,
    "batch_size": 16,
    "num_generations": 16,
    "kl_beta": 0.01,
    "temperature": 1.0,
    "max_prompt_length": 8192,
    "max_new_tokens": 1024,
    "max_completion_length": 4096,
    "max_tool_chars": 4000,
    "eval_batch_size": 32,
    "model_dtype": "float32",
    "grpo_args": {"bf16": True, "gradient_checkpointing": True, "gradient_accumulation_steps": 16},
    "sft_args": {"bf16": True, "gradient_checkpointing": True},
}

_FAMILY_LR = [  # the paper's learning rates by family (PAPER.md)
    (r"qwen3[-_.]?8b", 5e-8),
    (r"qwen3[-_.]?4b", 1e-6),
    (r"qwen2\.?5[-_.]?7b", 3e-7),
    (r"granite", 3e-7),
]


def family_lr(model: str) -> float:
    """The paper's GRPO learning rate for a model id (1e-6 when the family is not one of the paper's)."""
    low = model.lower()
    return next((lr for pat, lr in _FAMILY_LR if re.search(pat, low)), 1e-6)


def defaults_for(model: str) -> dict[str, Any]:
    if model == "tiny":
        return {}
    return {**json.loads(json.dumps(HUB_DEFAULTS)), "lr": family_lr(model)}


def with_defaults(values: dict[str, Any]) -> TrainConfig:
    """``values`` over the defaults of ``values['model']`` (dict fields such as ``grpo_args`` merge key by key)."""
    base = defaults_for(str(values.get("model", "tiny")))
    merged = dict(base)
    for k, v in values.items():
        merged[k] = {**base[k], **v} if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return TrainConfig.model_validate(merged)


def load_train_config(
    source: str | Path | dict[str, Any] | None, overrides: dict[str, Any] | None = None
) -> TrainConfig:
    """A :class:`TrainConfig` from a YAML/JSON file, a JSON string or a dict, with per-model defaults;
    ``overrides`` (e.g. command-line flags; ``None`` values ignored) win over the file.

    Raises ``ValueError`` naming the file and the offending fields."""
    import yaml

    where = "train config"
    if source is None:
        raw: Any = {}
    elif isinstance(source, dict):
        raw = source
    else:
        p = Path(source)
        text = str(source).lstrip()
        if not text.startswith("{") and p.is_file():  # (a JSON string longer than a file name is no path)
            where = str(p)
            try:
                raw = yaml.safe_load(p.read_text()) or {}
            except yaml.YAMLError as exc:
                raise ValueError(f"{where}: not valid YAML/JSON ({exc})") from None
        elif text.startswith("{"):
            try:
                raw = json.loads(str(source))
            except ValueError as exc:
                raise ValueError(f"{where}: not valid JSON ({exc})") from None
        else:
            raise ValueError(f"{where}: no such file {str(source)!r}")
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected a mapping of TrainConfig fields, got {type(raw).__name__}")
    raw = {**raw, **{k: v for k, v in (overrides or {}).items() if v is not None}}
    try:
        return with_defaults(raw)
    except ValidationError as exc:
        bad = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"{where}: {bad}") from None
