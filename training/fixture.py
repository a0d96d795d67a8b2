"""A small, real corpus in the corpus format, made by executing calls on the live banking server.

For tests, the benchmark and offline demos until ``pipeline/corpus/store.py`` writes real corpora. Every call in a
conversation is executed on ``Environment("banking").session(env_seed)`` and its result becomes the tool
message, so the references are replayable. Columns as in the corpus: example_id, kind, servers, env_seed,
messages (JSON), tools (JSON), reference (JSON, per user turn), augmentations, split.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from pipeline.env import Environment

SYSTEM = "You are a banking assistant. Call the tools when they are needed; otherwise answer briefly."
NO_TOOL = "Sorry, none of the available tools can help with that."
IRRELEVANT = [
    "What will the weather be in {city} tomorrow?",
    "Translate 'good morning' into French.",
    "Recommend a good restaurant in {city}.",
    "What is the capital of Australia?",
    "Write a short poem about the sea.",
]


def _tc(i: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _conversation(session, turns: list[tuple[str, list[tuple[str, dict[str, Any], list[int]]]]]):
    """Run the turns live; (messages, reference per turn). Raises if a reference call fails."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    reference: list[list[dict[str, Any]]] = []
    k = 0
    for user, steps in turns:
        msgs.append({"role": "user", "content": user})
        ref_turn = []
        for name, args, deps in steps:
            r = session.call(name, args)
            if not r.ok:
                raise RuntimeError(f"fixture call {name}({args}) failed: {r.error}")
            msgs.append({"role": "assistant", "content": "", "tool_calls": [_tc(k, name, args)]})
            msgs.append({"role": "tool", "tool_call_id": f"call_{k}", "content": r.as_tool_content()[:400]})
            ref_turn.append({"name": name, "arguments": args, "depends_on": deps})
            k += 1
        msgs.append({"role": "assistant", "content": "Done." if steps else NO_TOOL})
        reference.append(ref_turn)
    return msgs, reference


def _probe_world(env, n_seeds: int) -> dict[int, dict[str, Any]]:
    """Per env seed: the active accounts with a positive balance, and the customers."""
    world: dict[int, dict[str, Any]] = {}
    for s in range(n_seeds):
        with env.session(s) as probe:
            accts = [
                a
                for a in probe.call("list_accounts", {}).data["accounts"]
                if a["status"] == "active" and a["balance"] > 0
            ]
            custs = probe.call("list_customers", {}).data["customers"]
        world[s] = {"accounts": accts, "customers": custs}
    return world


def _example_turns(i: int, rng: random.Random, w: dict[str, Any]) -> tuple[str, list]:
    """The kind and the turns of example ``i`` (its pattern is ``i % 8``), drawn from ``rng`` on world ``w``."""
    a = rng.choice(w["accounts"])
    c = rng.choice(w["customers"])
    kind = "multi_turn"
    pattern = i % 8
    amt = float(rng.choice([10, 25, 40, 75, 120]))
    if pattern == 0:
        turns = [
            (
                f"What is the balance of account {a['account_id']}?",
                [("get_balance", {"account_id": a["account_id"]}, [])],
            )
        ]
    elif pattern == 1:
        turns = [
            (
                f"List the accounts of customer {a['customer_id']}, then give me the balance of {a['account_id']}.",
                [
                    ("list_accounts", {"customer_id": a["customer_id"]}, []),
                    ("get_balance", {"account_id": a["account_id"]}, [0]),
                ],
            )
        ]
    elif pattern == 2:
        turns = [
            (
                f"Please deposit {amt:g} into account {a['account_id']}.",
                [("deposit", {"account_id": a["account_id"], "amount": amt}, [])],
            )
        ]
    elif pattern == 3:
        lim = rng.choice([3, 5, 10])
        turns = [
            (
                f"Show the last {lim} transactions of account {a['account_id']}.",
                [("list_transactions", {"account_id": a["account_id"], "limit": lim}, [])],
            )
        ]
    elif pattern == 4:
        turns = [(f"Who is customer {c['customer_id']}?", [("get_customer", {"customer_id": c["customer_id"]}, [])])]
    elif pattern == 5:
        turns = [(f"Which customers live in {c['city']}?", [("list_customers", {"city": c["city"]}, [])])]
    elif pattern == 6:
        turns = [
            (
                f"What is the balance of account {a['account_id']}?",
                [("get_balance", {"account_id": a["account_id"]}, [])],
            ),
            (
                f"Now deposit {amt:g} into it.",
                [("deposit", {"account_id": a["account_id"], "amount": amt}, [])],
            ),
        ]
    else:
        kind = "irrelevance"
        turns = [(rng.choice(IRRELEVANT).format(city=c["city"]), [])]
    return kind, turns


def _assign_splits(rows: list[dict[str, Any]], seed: int, eval_share: float) -> None:
    """Mark a seeded random ``eval_share`` of the rows (at least one) ``eval``, the rest ``train``."""
    order = list(range(len(rows)))
    random.Random(seed + 1).shuffle(order)
    n_eval = max(1, int(round(len(rows) * eval_share)))
    eval_ids = set(order[:n_eval])
    for j, r in enumerate(rows):
        r["split"] = "eval" if j in eval_ids else "train"


def _write_splits(rows: list[dict[str, Any]], out: Path) -> None:
    """``train.parquet`` and ``eval.parquet`` under ``out``, in the corpus's columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            ("example_id", pa.string()),
            ("kind", pa.string()),
            ("servers", pa.list_(pa.string())),
            ("env_seed", pa.int64()),
            ("messages", pa.string()),
            ("tools", pa.string()),
            ("reference", pa.string()),
            ("augmentations", pa.list_(pa.string())),
            ("split", pa.string()),
        ]
    )
    for split in ("train", "eval"):
        pq.write_table(
            pa.Table.from_pylist([r for r in rows if r["split"] == split], schema=schema), out / f"{split}.parquet"
        )


def build_fixture_corpus(
    out_dir: str | Path, n: int = 200, seed: int = 0, eval_share: float = 0.2, n_seeds: int = 4
) -> Path:
    """Write ``train.parquet`` and ``eval.parquet`` with ``n`` examples in all; returns ``out_dir``."""
    rng = random.Random(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    with Environment("banking") as env:
        tools = [t.to_openai() for t in env.tools()]
        tools_json = json.dumps(tools)
        world = _probe_world(env, n_seeds)
        i = 0
        while len(rows) < n:
            s = i % n_seeds
            kind, turns = _example_turns(i, rng, world[s])
            with env.session(s) as sess:
                msgs, reference = _conversation(sess, turns)
            rows.append(
                {
                    "example_id": f"fx-{i:05d}",
                    "kind": kind,
                    "servers": ["banking"],
                    "env_seed": s,
                    "messages": json.dumps(msgs),
                    "tools": tools_json,
                    "reference": json.dumps(reference),
                    "augmentations": [],
                }
            )
            i += 1
    _assign_splits(rows, seed, eval_share)
    _write_splits(rows, out)
    return out
