"""The ``prove`` command line.

One module per command group; each has ``register(sub)`` that adds its parsers to the top-level
subparsers and points them at their handlers with ``set_defaults(fn=...)``. To add a command group,
write a module with a ``register`` function and list it in ``GROUPS`` (the order is the order of
``prove --help``).
"""

from __future__ import annotations

import argparse
import sys

from assets.cli import build, corpus, eval, export, lineage, reward, servers, sql, train, ui
from assets.cli.build import build_config as _build_config  # noqa: F401  (kept for callers of the old module)

GROUPS = (servers, build, corpus, export, lineage, sql, reward, train, eval, ui)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="prove", description="Live MCP servers -> verified tool-use corpus -> GRPO.")
    sub = p.add_subparsers(dest="cmd", required=True)
    for group in GROUPS:
        group.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    try:
        return int(a.fn(a) or 0)
    except FileNotFoundError as exc:
        print(f"prove: {exc}", file=sys.stderr)
        return 2
