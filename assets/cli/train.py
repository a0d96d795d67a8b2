"""``prove train``: SFT warm start + GRPO on a corpus version."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from assets.cli.common import print_json


def cmd_train(a: argparse.Namespace) -> int:
    from pipeline.corpus import resolve_version
    from training.train import TrainConfig, train

    corpus_dir = Path(a.corpus) if a.corpus else resolve_version(a.data_dir, None)
    cfg = TrainConfig(**({"grpo_steps": a.grpo_steps} if a.grpo_steps else {}), **({"model": a.model} if a.model else {}))
    out = a.out or str(Path(a.data_dir) / "runs" / corpus_dir.name)
    result = train(str(corpus_dir), out, cfg)
    print_json(result)
    return 0


def register(sub: Any) -> None:
    x = sub.add_parser("train", help="SFT warm start + GRPO on a corpus version")
    x.add_argument("--corpus")
    x.add_argument("--out")
    x.add_argument("--model")
    x.add_argument("--grpo-steps", type=int)
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_train)
