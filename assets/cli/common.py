"""Helpers shared by the command modules: JSON output, shortening, text tables."""

from __future__ import annotations

import argparse
import json
from typing import Any


def print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str))


def short(obj: Any, n: int = 160) -> str:
    text = obj if isinstance(obj, str) else json.dumps(obj, default=str, sort_keys=True)
    return text if len(text) <= n else text[: n - 1] + "…"


def table(cols: list[str], rows: list[tuple[Any, ...]], width: int = 60) -> str:
    def cell(v: Any) -> str:
        t = "NULL" if v is None else str(v)
        t = t.replace("\n", " ")
        return t if len(t) <= width else t[: width - 1] + "…"

    body = [[cell(v) for v in r] for r in rows]
    ws = [max([len(c)] + [len(r[i]) for r in body]) for i, c in enumerate(cols)]
    line = "+-" + "-+-".join("-" * w for w in ws) + "-+"
    out = [line, "| " + " | ".join(c.ljust(w) for c, w in zip(cols, ws)) + " |", line]
    out += ["| " + " | ".join(v.ljust(w) for v, w in zip(r, ws)) + " |" for r in body]
    out += [line, f"({len(rows)} row{'s' if len(rows) != 1 else ''})"]
    return "\n".join(out)


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a count of examples, steps or workers)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n
