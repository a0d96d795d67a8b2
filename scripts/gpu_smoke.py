"""GPU smoke run of the training path, offline: a small hub-format model, a small live corpus, SFT + GRPO on CUDA.

1. A fixture corpus executed on the live built-in banking server (``training.fixture``; one- and two-turn
   conversations, calls that depend on earlier results).
2. A Qwen2-architecture model built from its config (random weights, ~5M parameters) and the tiny byte-level
   tokenizer trained on the corpus, both saved with ``save_pretrained`` (hub format; nothing is downloaded).
3. ``training.train`` with ``scripts/gpu-smoke.yaml`` pointed at that directory: the hub-model path (per-model
   defaults, fp32 master weights + bf16 autocast, KL reference = the SFT policy, multi-step rollouts through
   TRL's ``rollout_func``), evaluation before / after SFT / after GRPO.

    python scripts/gpu_smoke.py --out data/runs/gpu-smoke [--config scripts/gpu-smoke.yaml]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def build_model(corpus: Path, dest: Path) -> Path:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from training.data import conversation_texts, load_tasks
    from training.tiny import train_tokenizer_on_conversations

    tok = train_tokenizer_on_conversations(conversation_texts(load_tasks(corpus, "train")), vocab_size=2048)
    cfg = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=256,
        intermediate_size=768,
        num_hidden_layers=6,
        num_attention_heads=8,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(cfg)
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    model.to(torch.bfloat16).save_pretrained(dest)  # stored in bf16 as hub checkpoints are; trained from fp32 masters
    tok.save_pretrained(dest)
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="data/runs/gpu-smoke")
    ap.add_argument("--config", default=str(Path(__file__).with_name("gpu-smoke.yaml")))
    ap.add_argument("--examples", type=int, default=240)
    a = ap.parse_args()
    import torch

    from training.config import load_train_config
    from training.fixture import build_fixture_corpus
    from training.train import train

    out = Path(a.out)
    t0 = time.perf_counter()
    corpus = build_fixture_corpus(out / "corpus", n=a.examples, seed=0)
    model_dir = build_model(corpus, out / "model")
    cfg = load_train_config(a.config, {"model": str(model_dir)})
    print(
        json.dumps(
            {
                "cuda": torch.cuda.is_available(),
                "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
                "torch": torch.__version__,
                "config": cfg.model_dump(mode="json"),
            },
            default=str,
        ),
        flush=True,
    )
    result = train(
        corpus,
        out / "run",
        cfg,
        progress=lambda ph, i, n, **m: print(json.dumps({"phase": ph, "step": i, "of": n, **m}), flush=True),
    )
    result["wall_s"] = time.perf_counter() - t0
    print(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
