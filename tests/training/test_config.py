"""train.yaml: per-model defaults, and a hub-model config that the installed TRL's GRPOConfig accepts."""

from __future__ import annotations

import json

import pytest
import torch
import yaml

from training.config import TrainConfig, family_lr, load_train_config
from training.tiny import load_policy, train_tokenizer_on_conversations

CONV = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "balance of ACC-1?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "get_balance", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c", "content": "{}"},
    {"role": "assistant", "content": "ok"},
]


@pytest.fixture(scope="module")
def hub_model(tmp_path_factory):
    """A Qwen2-architecture model built from its config and saved in hub format with its tokenizer (no download)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tok = train_tokenizer_on_conversations([{"messages": CONV}] * 4, vocab_size=400)
    cfg = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=512,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
    )
    path = tmp_path_factory.mktemp("hub") / "qwen2-tiny"
    Qwen2ForCausalLM(cfg).to(torch.bfloat16).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_hub_model_config_gets_the_paper_defaults_and_validates_against_grpo_config(hub_model, tmp_path):
    from trl import GRPOConfig

    from training.train import grpo_config

    f = tmp_path / "train.yaml"
    f.write_text(yaml.safe_dump({"model": str(hub_model), "grpo_steps": 3, "grpo_args": {"logging_steps": 1}}))
    cfg = load_train_config(f)
    assert cfg.sft_steps == 0 and cfg.num_generations == 16 and cfg.batch_size == 16 and cfg.kl_beta == 0.01
    assert cfg.grpo_steps == 3 and cfg.lr == 1e-6 and cfg.model_dtype == "float32" and not cfg.enable_thinking
    assert cfg.grpo_args["bf16"] is True and cfg.grpo_args["logging_steps"] == 1  # merged key by key
    args = grpo_config(cfg.model_copy(update={"use_cpu": True}), tmp_path)
    assert (
        isinstance(args, GRPOConfig) and args.bf16 and args.gradient_checkpointing
    )  # fp32 master weights, bf16 autocast
    assert (args.beta, args.num_generations, args.per_device_train_batch_size, args.max_steps) == (0.01, 16, 16, 3)
    assert args.learning_rate == 1e-6 and args.gradient_accumulation_steps == 16
    model, tok = load_policy(cfg.model, dtype=cfg.model_dtype)  # saved in bf16, loaded with fp32 master weights
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    assert tok.padding_side == "left" and tok.pad_token_id is not None


def test_tiny_defaults_stay_and_bad_configs_name_the_file_and_field(tmp_path):
    assert load_train_config(None) == TrainConfig()
    assert load_train_config(json.dumps({"grpo_steps": 3})).grpo_steps == 3
    long = json.dumps({"grpo_steps": 3, "grpo_args": {f"x{i}": "a long value" for i in range(20)}})
    assert len(long) > 255 and load_train_config(long).grpo_args["x19"] == "a long value"  # not taken for a path
    bad = tmp_path / "bad.yaml"
    bad.write_text("lr: fast\nbatch_sise: 8\n")
    with pytest.raises(ValueError, match=r"bad\.yaml: lr: .*number.*batch_sise: Extra inputs"):
        load_train_config(bad)
    with pytest.raises(ValueError, match="no such file"):
        load_train_config(tmp_path / "missing.yaml")
    with pytest.raises(ValueError, match="model_dtype 'float8'"):
        load_policy(str(tmp_path), dtype="float8")


def test_learning_rate_follows_the_papers_model_families():
    assert family_lr("Qwen/Qwen3-4B-Instruct-2507") == 1e-6
    assert family_lr("Qwen/Qwen3-8B") == 5e-8
    assert family_lr("Qwen/Qwen2.5-7B-Instruct") == 3e-7
    assert family_lr("ibm-granite/granite-4.1-8b") == 3e-7
    assert load_train_config({"model": "Qwen/Qwen3-8B", "lr": 2e-7}).lr == 2e-7  # an explicit value wins


def test_prove_train_rejects_a_bad_config_with_a_clear_error(tmp_path, capsys):
    from assets.cli import main

    bad = tmp_path / "train.yaml"
    bad.write_text("num_generations: 1\n")
    assert main(["train", "--config", str(bad), "--corpus", str(tmp_path)]) == 2
    assert "num_generations" in capsys.readouterr().err


def test_prompts_render_without_a_thinking_block_unless_asked():
    from training.chat import ChatFormat
    from training.data import Task
    from training.tiny import CHAT_TEMPLATE

    tok = train_tokenizer_on_conversations([{"messages": CONV}] * 4, vocab_size=400)
    tok.chat_template = (
        CHAT_TEMPLATE
        + "{%- if add_generation_prompt and (enable_thinking is not defined or enable_thinking) %}<think>{% endif %}"
    )
    task = Task(
        example_id="e",
        kind="multi_turn",
        server="banking",
        env_seed=0,
        messages=CONV,
        tools=[],
        tools_json="[]",
        reference=[[]],
        user_turns=["balance of ACC-1?"],
    )
    assert not ChatFormat(tok, TrainConfig().template_kwargs()).prompt_text(task).endswith("<think>")
    assert ChatFormat(tok, TrainConfig(enable_thinking=True).template_kwargs()).prompt_text(task).endswith("<think>")
