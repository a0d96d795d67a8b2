"""A corpus version's dataset card: ``<version>/README.md``, Hugging Face metadata (YAML) and prose.

The YAML block names the data files per split (``configs``), the features (``dataset_info``, from
:data:`pipeline.corpus.columns.EXAMPLE_ARROW_SCHEMA`), the license (``corpus.license`` in the build config) and
the size category, so ``datasets.load_dataset(<version folder>)`` and the Hub read the folder as it is. The prose
says how the version was built (servers, configuration, teacher, seed), what it holds, its quality gates and its
content hash. It is written with the version and again each time a gate is recorded, so it stays true.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

from pipeline.core.storage import atomic_write_text
from pipeline.corpus.columns import hf_features

CARD = "README.md"
SPLITS = ("train", "eval")
# the Hub's size categories, by upper bound
_SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))

FIELDS = {
    "example_id": "a content hash of the conversation, its augmentations and its offered tools",
    "kind": "multi_turn, clarification, irrelevance, abstention or missing_function",
    "server / servers": "the MCP server the conversation ran on (servers[0]) and every server offered",
    "env_seed": "the seed of the server's world the conversation ran in (replay and rollouts use it)",
    "messages": "the conversation in the OpenAI chat format: role, content, tool_calls (function.arguments is "
    "JSON text), tool_call_id, and weight (0 on a message no loss should go on, else null)",
    "tools": "the tools offered, each an OpenAI function tool (JSON: type, function.name, description, parameters)",
    "reference": "per user turn, the calls that are right (name, arguments as JSON, depends_on)",
    "trace": "every call executed while the conversation was simulated, with its result or its error",
    "augmentations": "the robustness variants applied (distractors, enum_stripped, ...)",
    "info_level / persona": "how much the user says up front (complete, missing, minimal) and who speaks",
    "conversation_id, chain_id, snapshot_id, query_id, parent_id": "lineage: `prove lineage ID` tells the story",
    "outcomes / final_state_hash": "per turn SUCCESS, PARTIAL or FAILURE; the world's state hash at the end",
}


def size_category(n: int) -> str:
    return next((name for bound, name in _SIZES if n < bound), "n>1M")


def card_metadata(manifest: dict[str, Any], sizes: dict[str, int] | None = None) -> dict[str, Any]:
    """The card's YAML metadata (``sizes``: each split's data size in bytes, uncompressed)."""
    sizes = sizes or {}
    counts = manifest.get("counts") or {}
    cfg = manifest.get("config") or {}
    return {
        "license": (cfg.get("corpus") or {}).get("license") or "other",
        "pretty_name": f"prove tool-use corpus {manifest.get('version', '')}".strip(),
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["tool-use", "function-calling", "mcp", "synthetic", "multi-turn"],
        "size_categories": [size_category(int(counts.get("examples") or 0))],
        "configs": [
            {
                "config_name": "default",
                "default": True,
                "data_files": [{"split": s, "path": f"{s}.parquet"} for s in SPLITS],
            }
        ],
        "dataset_info": {
            "features": hf_features(),
            "splits": [
                {"name": s, "num_bytes": int(sizes.get(s, 0)), "num_examples": int(counts.get(f"{s}.parquet") or 0)}
                for s in SPLITS
            ],
        },
    }


def _table(head: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def _counts(title: str, d: dict[str, Any], what: str = "examples") -> list[str]:
    if not d:
        return []
    return ["", *_table((title, what), sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))]


def _built(manifest: dict[str, Any]) -> list[str]:
    cfg = manifest.get("config") or {}
    q = cfg.get("query") or {}
    teacher = (
        f"an OpenAI-compatible teacher, model `{q.get('llm_model')}`"
        if q.get("backend") == "llm"
        else "the offline template writer (no teacher model)"
    )
    code = manifest.get("code_versions") or {}
    unavailable = cfg.get("unavailable_servers") or {}
    lines = [
        "## How it was built",
        "",
        "prove probed each live MCP server, sampled tool chains from its dependency graph, "
        "wrote user requests, ran the conversations against the server and kept those whose calls replay "
        "to the same results; near-duplicates were removed and robustness variants added.",
        "",
        f"- servers: {', '.join(f'`{s}`' for s in cfg.get('servers') or []) or '(none)'}",
        f"- examples asked for: {cfg.get('examples')}; seed: {cfg.get('seed')}",
        f"- user requests written by {teacher}",
        f"- eval share: {(cfg.get('corpus') or {}).get('eval_fraction')} (no conversation, first request or "
        "reference is shared between the splits)",
        f"- code: git `{code.get('git')}`, Python {code.get('python')}",
        f"- created: {manifest.get('created_at')}",
    ]
    if unavailable:
        lines.append("- servers left out: " + "; ".join(f"`{k}` ({v})" for k, v in sorted(unavailable.items())))
    lines += ["", "The whole configuration is in `manifest.json` (`config`)."]
    return lines


def _composition(manifest: dict[str, Any]) -> list[str]:
    comp = manifest.get("composition") or {}
    lines = ["## Composition", "", f"{comp.get('examples', 0)} examples."]
    lines += _counts("kind", comp.get("by_kind") or {})
    lines += _counts("server", comp.get("by_server") or {})
    lines += _counts("split", comp.get("by_split") or {})
    lines += _counts("augmentation", comp.get("by_augmentation") or {})
    shares, targets = comp.get("shares") or {}, comp.get("targets") or {}
    if shares:
        lines += ["", *_table(("knob", "share", "target"), [(k, shares[k], targets.get(k)) for k in sorted(shares)])]
    capped = comp.get("capped") or {}
    if capped:  # a target this build could not reach, lowered to what it could (a server alone has no distractors)
        lines += ["", "Targets lowered to what these servers allow:"]
        lines += [f"- `{k}`: {why}, so its target is {targets.get(k, 0):.4f}." for k, why in sorted(capped.items())]
    rej = (manifest.get("rejections") or {}).get("by_stage") or {}
    if rej:
        lines += ["", f"{sum(rej.values())} candidates were rejected on the way (`rejections.parquet`):"]
        lines += _counts("stage", rej, "rejections")
    return lines


def _gates(gates: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["## Quality gates", ""]
    if not gates:
        return [*lines, "No gate has been recorded for this version yet."]
    rows = [(g, "passed" if r.get("passed") else "**failed**") for g, r in sorted(gates.items())]
    failed = [g for g, r in gates.items() if not r.get("passed")]
    verdict = (
        "Every recorded gate passed." if not failed else "This version failed a gate: it is kept, never the default."
    )
    return [*lines, *_table(("gate", "result"), rows), "", verdict, "Details: `gates/<gate>.json`."]


def _usage(version: str) -> list[str]:
    return [
        "## Use",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        'ds = load_dataset("parquet", data_files={"train": "train.parquet", "eval": "eval.parquet"})',
        "# ds['train'][0]['messages'], ds['train'][0]['tools']: lists of dicts; TRL's SFTTrainer takes the rows",
        "```",
        "",
        f"`prove export {version} --format openai` writes the OpenAI fine-tuning JSONL (tools and per-message "
        f"weights); `prove export {version} --format hf` a folder to push to the Hub.",
    ]


def card_text(manifest: dict[str, Any], gates: dict[str, dict[str, Any]], sizes: dict[str, int] | None = None) -> str:
    """The whole card: YAML metadata between ``---`` lines, then the prose."""
    meta = yaml.safe_dump(card_metadata(manifest, sizes), sort_keys=False, allow_unicode=True, width=120)
    version = str(manifest.get("version", ""))
    servers = sorted((manifest.get("composition") or {}).get("by_server") or {})
    lines = [
        f"# prove tool-use corpus `{version}`",
        "",
        f"Multi-turn tool-use conversations over {len(servers)} MCP server(s), every call executed against the "
        "live server and replayed. Content hash "
        f"`{manifest.get('content_hash')}` (a hash of the example ids, messages and tools).",
        "",
        *_built(manifest),
        "",
        *_composition(manifest),
        "",
        *_gates(gates),
        "",
        "## Fields",
        "",
        *_table(("column", "what it holds"), list(FIELDS.items())),
        "",
        *_usage(version),
    ]
    return f"---\n{meta}---\n\n" + "\n".join(lines) + "\n"


def _data_bytes(path: Path) -> int:
    """A split's data size uncompressed (the Parquet metadata's row-group sizes): the card's ``num_bytes``."""
    meta = pq.read_metadata(path)
    return sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))


def write_card(version_path: str | Path, manifest: dict[str, Any], gates: dict[str, dict[str, Any]]) -> Path:
    """Write ``README.md`` into a version folder (atomically; readable by everyone, like the rest of it)."""
    p = Path(version_path)
    sizes = {s: _data_bytes(p / f"{s}.parquet") for s in SPLITS if (p / f"{s}.parquet").exists()}
    path = atomic_write_text(p / CARD, card_text(manifest, gates, sizes))
    os.chmod(path, 0o644)
    return path
