"""``prove train``: SFT warm start + GRPO on a corpus version."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from assets.cli.common import print_json


def cmd_train(a: argparse.Namespace) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.corpus.store import resolve_version
    from training.config import load_train_config
    from training.distributed import check_launch

    try:
        cfg = load_train_config(a.config, {"grpo_steps": a.grpo_steps, "model": a.model})
        check_launch(cfg)  # several processes (torchrun, accelerate launch): refused before torch loads if wrong
    except ValueError as exc:
        print(f"prove train: {exc}", file=sys.stderr)
        return 2
    from training.train import train  # deferred: torch and TRL load only once the configuration is accepted

    corpus_dir = Path(a.corpus) if a.corpus else resolve_version(a.data_dir, None)
    out = a.out or str(Path(a.data_dir) / "runs" / corpus_dir.name)
    result = train(str(corpus_dir), out, cfg)
    print_json(result)
    return 0


def register(sub: Any) -> None:
    x = sub.add_parser("train", help="SFT warm start + GRPO on a corpus version")
    x.add_argument("--corpus")
    x.add_argument("--out")
    x.add_argument(
        "--config", help="train.yaml (TrainConfig fields; per-model defaults fill the rest, docs/training.md)"
    )
    x.add_argument("--model")
    x.add_argument("--grpo-steps", type=int)
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_train)
