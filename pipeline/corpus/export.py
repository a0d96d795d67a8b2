"""``prove export``: a corpus version as a folder to push to the Hugging Face Hub, or as OpenAI fine-tuning JSONL.

* ``hf``: the version's files (``train.parquet``, ``eval.parquet``, the dataset card ``README.md`` with its YAML
  metadata, ``manifest.json``, the gates, the rejections), the card rewritten from the gates recorded now;
  ``huggingface-cli upload <repo> <out> --repo-type dataset`` pushes it as it is.
* ``openai``: ``train.jsonl`` and ``eval.jsonl``, one example a line in the OpenAI chat fine-tuning format:
  ``messages`` (assistant tool calls as ``tool_calls`` with ``function.arguments`` JSON text, results as ``tool``
  messages), ``tools``, and a ``weight`` on every assistant message (``0`` where the corpus marks a message no
  loss should go on, else ``1``).

Either is written into a hidden staging folder beside ``out`` and renamed into place when complete; ``out`` must
not exist or be an empty folder.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pipeline.corpus.card import SPLITS, write_card
from pipeline.corpus.columns import messages_of, tools_of
from pipeline.corpus.store import gate_results

FORMATS = ("hf", "openai")


class ExportError(ValueError):
    """An export that cannot be written as asked (the message says why)."""


def openai_message(m: dict[str, Any]) -> dict[str, Any]:
    """One corpus message as the OpenAI fine-tuning format has it (``weight`` on assistant messages only)."""
    if m["role"] == "tool":
        return {"role": "tool", "tool_call_id": m["tool_call_id"], "content": m.get("content") or ""}
    out: dict[str, Any] = {"role": m["role"]}
    if m.get("content") is not None or not m.get("tool_calls"):
        out["content"] = m.get("content") or ""
    if m.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]},
            }
            for c in m["tool_calls"]
        ]
    if m["role"] == "assistant":
        out["weight"] = 0 if m.get("weight") == 0 else 1
    return out


def openai_line(row: dict[str, Any]) -> dict[str, Any]:
    """One corpus row (its ``messages`` and ``tools`` columns, as stored or decoded) as one JSONL record."""
    return {
        "messages": [openai_message(m) for m in messages_of(row["messages"])],
        "tools": tools_of(row["tools"]),
        "parallel_tool_calls": False,  # the corpus makes one call per assistant message
    }


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"{out} already exists and is not an empty folder; name a new one")


def _write_openai(version: Path, stage: Path) -> dict[str, int]:
    counts = {}
    for split in SPLITS:
        f = version / f"{split}.parquet"
        rows = pq.read_table(f, columns=["messages", "tools"]).to_pylist() if f.exists() else []
        with open(stage / f"{split}.jsonl", "w") as fh:
            for row in rows:
                fh.write(json.dumps(openai_line(row), ensure_ascii=False) + "\n")
        counts[f"{split}.jsonl"] = len(rows)
    return counts


def _write_hf(version: Path, stage: Path) -> dict[str, int]:
    for item in sorted(version.iterdir()):
        if item.name.startswith("."):
            continue
        if item.is_dir():
            shutil.copytree(item, stage / item.name, ignore=shutil.ignore_patterns(".*"))
        else:
            shutil.copy2(item, stage / item.name)
    manifest = json.loads((version / "manifest.json").read_text())
    write_card(stage, manifest, gate_results(version))
    counts = manifest.get("counts") or {}
    return {f"{s}.parquet": int(counts.get(f"{s}.parquet") or 0) for s in SPLITS}


WRITERS: dict[str, Callable[[Path, Path], dict[str, int]]] = {"hf": _write_hf, "openai": _write_openai}


def export_version(version: str | Path, fmt: str, out: str | Path) -> dict[str, Any]:
    """Write ``version`` (a version folder) as ``fmt`` into ``out``; returns what was written."""
    if fmt not in WRITERS:
        raise ExportError(f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}")
    version, out = Path(version), Path(out)
    if not (version / "manifest.json").exists():
        raise ExportError(f"{version} is not a corpus version (no manifest.json)")
    _check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.export-", dir=out.parent))
    try:
        counts = WRITERS[fmt](version, stage)
        os.chmod(stage, 0o755)
        _check_out(out)
        if out.exists():
            out.rmdir()
        os.rename(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return {"version": version.name, "format": fmt, "out": str(out), "files": counts}
