"""How varied the corpus's user turns are, against BFCL v4 multi_turn_base's user turns. Prints JSON.

Both sides are cut to the same budget of whitespace tokens (12,000 by default), taken deterministically:
BFCL's user turns in the file's order; the corpus's distinct user turns in the order of its examples'
ids (ids are content hashes, so the order mixes servers and kinds, and the same corpus gives the same
cut). A turn is taken whole while it fits, and the last one is cut at the budget. On each side:

* ``distinct_trigram_ratio``: distinct word trigrams / all word trigrams (trigrams inside a turn,
  words lower-cased with their punctuation stripped);
* ``top20_trigram_share``: the share of all trigrams held by the 20 most frequent ones;
* ``words_per_turn``: whitespace tokens per turn taken;

with the corpus's figures as ratios of BFCL's, measured in the same run (the baseline), the 20 most
frequent trigrams of each side, and the targets of issue 42 (distinct trigrams >= 0.80, top-20 share
<= 0.03).

Where the data comes from (nothing is downloaded at run time):

* the corpus: ``--corpus`` names a corpus version folder or a data directory (its ``corpus/LATEST``);
  without it, the default build of ``--examples`` examples (1,500) is built here, offline, through
  Dagster as ``prove build --no-train`` builds it, in a temporary directory;
* BFCL: ``--bfcl`` names ``BFCL_v4_multi_turn_base.json`` (the file the ``bfcl-eval`` wheel ships under
  ``bfcl_eval/data/``) or an extract in the format of ``bench/data/``; without it, the installed
  ``bfcl_eval`` package's file if there is one, else the extract vendored in
  ``bench/data/bfcl_v4_multi_turn_base_user_turns.jsonl`` (Apache 2.0; ``bench/data/README.md``).

    PYTHONPATH=. .venv/bin/python bench/language_vs_bfcl.py [--corpus DIR] [--bfcl FILE] [--budget 12000]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import string
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any
from unittest import mock

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

VENDORED = ROOT / "bench" / "data" / "bfcl_v4_multi_turn_base_user_turns.jsonl"
BFCL_FILE = "BFCL_v4_multi_turn_base.json"
TARGETS = {"distinct_trigram_ratio": 0.80, "top20_trigram_share": 0.03}


def bfcl_path(given: str | None) -> Path:
    """The BFCL file to read: the one given, the installed package's, else the vendored extract."""
    if given:
        p = Path(given)
        if not p.is_file():
            raise SystemExit(f"--bfcl {given}: no such file")
        return p
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is not None and spec.origin:
        p = Path(spec.origin).parent / "data" / BFCL_FILE
        if p.is_file():
            return p
    return VENDORED


def bfcl_turns(path: Path) -> list[str]:
    """The user turns of BFCL's file (or of the extract), in file order; empty turns left out."""
    out: list[str] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise SystemExit(f"{path}:{n}: not a JSON line ({e})") from e
        if "user_turns" in row:
            texts = row["user_turns"]
        elif "question" in row:
            texts = [m["content"] for turn in row["question"] for m in turn if m.get("role") == "user"]
        else:
            raise SystemExit(f"{path}:{n}: neither a BFCL row (question) nor an extract row (user_turns)")
        out += [t for t in texts if isinstance(t, str) and t.strip()]
    if not out:
        raise SystemExit(f"{path}: no user turns")
    return out


def corpus_dir(given: Path) -> Path:
    """A corpus version folder: ``given`` itself, or the latest version under a data directory."""
    if list(given.glob("*.parquet")) or (given / "manifest.json").is_file():
        return given
    latest = given / "corpus" / "LATEST"
    if latest.is_file():
        return given / "corpus" / latest.read_text().strip()
    raise SystemExit(f"--corpus {given}: neither a corpus version folder nor a data directory with corpus/LATEST")


def _messages(value: Any) -> list[dict[str, Any]]:
    """A row's messages, stored as a JSON string or as a list of records."""
    return json.loads(value) if isinstance(value, str) else list(value or [])


def corpus_turns(version: Path) -> list[str]:
    """The distinct user turns of a corpus version, in the order of its examples' ids."""
    rows: list[tuple[str, list[dict[str, Any]]]] = []
    files = sorted(version.rglob("*.parquet"))
    for f in files:
        t = pq.read_table(f)
        if "messages" not in t.column_names or "example_id" not in t.column_names:
            continue
        for eid, msgs in zip(t.column("example_id").to_pylist(), t.column("messages").to_pylist()):
            rows.append((eid, _messages(msgs)))
    if not rows:
        raise SystemExit(f"{version}: no examples (Parquet files with example_id and messages)")
    seen: set[str] = set()
    out: list[str] = []
    for _, msgs in sorted(rows, key=lambda r: r[0]):
        for m in msgs:
            text = m.get("content") if m.get("role") == "user" else None
            if isinstance(text, str) and text.strip() and text not in seen:
                seen.add(text)
                out.append(text)
    return out


def cut(turns: list[str], budget: int) -> list[list[str]]:
    """Turns as whitespace tokens, taken in order up to ``budget`` tokens (the last one cut at the budget)."""
    out: list[list[str]] = []
    left = budget
    for t in turns:
        toks = t.split()
        if left <= 0:
            break
        out.append(toks[:left])
        left -= len(out[-1])
    if left > 0:
        raise SystemExit(f"only {budget - left} tokens of user turns: fewer than the budget of {budget}")
    return out


def trigrams(turn: list[str]) -> list[tuple[str, ...]]:
    ws = [w for w in (t.strip(string.punctuation + "“”‘’").lower() for t in turn) if w]
    return [tuple(ws[i : i + 3]) for i in range(len(ws) - 2)]


def measure(turns: list[list[str]]) -> dict[str, Any]:
    grams = Counter(g for t in turns for g in trigrams(t))
    total = sum(grams.values())
    top = grams.most_common(20)
    return {
        "turns": len(turns),
        "tokens": sum(len(t) for t in turns),
        "words_per_turn": round(sum(len(t) for t in turns) / len(turns), 1),
        "trigrams": total,
        "distinct_trigram_ratio": round(len(grams) / total, 3),
        "top20_trigram_share": round(sum(c for _, c in top) / total, 4),
        "top20_trigrams": [[" ".join(g), c] for g, c in top],
    }


def build_corpus(examples: int, seed: int, data_dir: Path) -> Path:
    """The default offline build of ``examples`` examples (as ``prove build --no-train`` builds it)."""
    from assets import orchestrate  # deferred: Dagster only when the bench builds the corpus itself
    from pipeline.core.config import BuildConfig  # deferred: as above

    cfg = BuildConfig(examples=examples, data_dir=str(data_dir), seed=seed)
    with mock.patch.dict(os.environ, {"DAGSTER_HOME": str(data_dir / "dh")}):
        (data_dir / "dh").mkdir(parents=True, exist_ok=True)
        b = orchestrate.build(
            cfg, parallel=1, instance=orchestrate.prepare_instance(cfg), tags={"prove/build": "bench"}
        )
    if b.corpus_path is None:
        raise SystemExit(f"the build wrote no corpus: {b.error()}")
    return Path(b.corpus_path)


def run(corpus: Path, bfcl: Path, budget: int) -> dict[str, Any]:
    ours = measure(cut(corpus_turns(corpus), budget))
    theirs = measure(cut(bfcl_turns(bfcl), budget))
    manifest = corpus / "manifest.json"
    keys = ("distinct_trigram_ratio", "top20_trigram_share", "words_per_turn")
    return {
        "budget_tokens": budget,
        "corpus": str(corpus),
        "content_hash": json.loads(manifest.read_text()).get("content_hash") if manifest.is_file() else None,
        "bfcl_source": str(bfcl),
        "corpus_user_turns": ours,
        "bfcl_user_turns": theirs,
        "ratio_vs_bfcl": {k: round(ours[k] / theirs[k], 3) for k in keys},
        "targets": TARGETS,
        "met": {
            "distinct_trigram_ratio": ours["distinct_trigram_ratio"] >= TARGETS["distinct_trigram_ratio"],
            "top20_trigram_share": ours["top20_trigram_share"] <= TARGETS["top20_trigram_share"],
        },
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", help="a corpus version folder or a data directory (default: build one here)")
    ap.add_argument("--bfcl", help=f"{BFCL_FILE} or an extract (default: the installed bfcl_eval's, else bench/data)")
    ap.add_argument("--budget", type=int, default=12_000, help="whitespace tokens taken on each side")
    ap.add_argument("--examples", type=int, default=1_500, help="examples of the build made when --corpus is not given")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)
    bfcl = bfcl_path(a.bfcl)
    if a.corpus:
        out = run(corpus_dir(Path(a.corpus)), bfcl, a.budget)
    else:
        with tempfile.TemporaryDirectory(prefix="prove-bench-language-") as d:
            out = run(build_corpus(a.examples, a.seed, Path(d)), bfcl, a.budget) | {"built_examples": a.examples}
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
