"""``prove export``: a corpus version as a Hugging Face dataset folder or as OpenAI fine-tuning JSONL."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from assets.cli.common import print_json


def cmd_export(a: argparse.Namespace) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.corpus.export import ExportError, export_version
    from pipeline.corpus.store import resolve_version

    try:
        done = export_version(resolve_version(a.data_dir, a.version), a.format, a.out)
    except ExportError as exc:
        print(f"prove export: {exc}", file=sys.stderr)
        return 2
    if a.json:
        print_json(done)
        return 0
    files = ", ".join(f"{f} ({n} examples)" for f, n in done["files"].items())
    print(f"{done['version']} -> {done['out']} ({done['format']}): {files}")
    if done["format"] == "hf":
        print(f"push with: huggingface-cli upload <user>/<name> {done['out']} --repo-type dataset")
    return 0


def register(sub: Any) -> None:
    x = sub.add_parser(
        "export",
        help="a corpus version as a folder to push to the Hugging Face Hub (hf) or OpenAI fine-tuning JSONL (openai)",
    )
    x.add_argument("version", nargs="?", default="latest", help="a version name, unique prefix or 'latest'")
    # no choices=: an unknown format gets the export's own one-line error, like every other bad input here
    x.add_argument("--format", required=True, help="hf or openai")
    x.add_argument("--out", required=True, help="a folder that does not exist yet (or an empty one)")
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_export)
