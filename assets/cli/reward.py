"""``prove reward``: score trajectories with the programmatic reward."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def cmd_reward(a: argparse.Namespace) -> int:
    from pipeline.reward import score_jsonl

    try:
        rows = score_jsonl(a.file, server=a.server)
    except (ValueError, FileNotFoundError) as exc:
        print(f"prove reward: {exc}", file=sys.stderr)
        return 2
    for r in rows:
        print(json.dumps(r))
    return 0


def register(sub: Any) -> None:
    x = sub.add_parser("reward", help="score trajectories with the programmatic reward")
    x.add_argument("file")
    x.add_argument("--server")
    x.set_defaults(fn=cmd_reward)
