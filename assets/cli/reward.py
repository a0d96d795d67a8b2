"""``prove reward``: score trajectories with the programmatic reward."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

FORMAT = """\
input: a JSONL file, one trajectory per line:
  {"tools":     [OpenAI function schemas]          (or the corpus's JSON string of them),
   "reference": [{"name", "arguments", "depends_on": [indices]}]   ([] = the model should abstain),
                or the corpus's per-turn layout [[turn 0 calls], [turn 1 calls], ...],
   "calls":     [{"name", "arguments", "ok": true|false}]   (the model's calls; flat or per turn),
   "seed":      0}                                  (or "env_seed"; the world seed, for --server)
  "ok" is the call's live outcome; calls without it are executed on a fresh session of --server.
  A corpus row (train.parquet) with a "calls" field added is a valid line.

output: one JSON object per line: validity, coverage, efficiency, name, args, total (and state with
--state-weight). Weights and formulas: PAPER.md section 3 and pipeline/reward/score.py.

example:
  echo '{"tools": [{"name": "get_balance", "parameters": {"type": "object", "properties":
        {"account_id": {"type": "string"}}, "required": ["account_id"]}}],
        "reference": [{"name": "get_balance", "arguments": {"account_id": "ACC-0001"}}],
        "calls": [{"name": "get_balance", "arguments": {"account_id": "ACC-0001"}, "ok": true}]}' > t.jsonl
  prove reward t.jsonl
"""


def cmd_reward(a: argparse.Namespace) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.reward.jsonl import score_jsonl
    from pipeline.reward.score import RewardConfig, RewardInputError

    if a.state_weight and not a.server:
        print("prove reward: --state-weight compares live states; pass --server NAME too", file=sys.stderr)
        return 2
    if a.server:
        # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
        # (prove --help stays fast)
        from servers.registry import available

        if a.server not in available():
            print(
                f"prove reward: unknown server {a.server!r}; built-in servers: {', '.join(available())}",
                file=sys.stderr,
            )
            return 2
    cfg = RewardConfig(w_state=a.state_weight or 0.0, per_turn=a.per_turn)
    try:
        rows = score_jsonl(a.file, server=a.server, config=cfg)
    except (RewardInputError, FileNotFoundError) as exc:
        print(f"prove reward: {exc}", file=sys.stderr)
        return 2
    for r in rows:
        print(json.dumps(r))
    return 0


def register(sub: Any) -> None:
    x = sub.add_parser(
        "reward",
        help="score trajectories with the programmatic reward",
        description="Score trajectories (JSONL) with the programmatic reward of PAPER.md section 3.",
        epilog=FORMAT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    x.add_argument("file", help="a JSONL file of trajectories (format below)")
    x.add_argument(
        "--server", help="a built-in server that executes calls without a recorded 'ok' (and for --state-weight)"
    )
    x.add_argument(
        "--state-weight",
        type=float,
        default=0.0,
        metavar="W",
        help="add the final-state match with weight W: the session's state after the calls equals the reference's "
        "replayed on a fresh session (per turn with per-turn calls); needs --server",
    )
    x.add_argument(
        "--per-turn",
        action="store_true",
        help="score a multi-turn trajectory turn by turn and average over user turns "
        "(needs 'reference' and 'calls' per turn); otherwise turns are flattened into one trajectory",
    )
    x.set_defaults(fn=cmd_reward)
