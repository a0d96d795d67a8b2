"""One evaluation run: a policy played on suites, written as one folder.

``evaluate_policy(policy, suites, out_dir, ...)`` writes, atomically (a run killed half-way leaves nothing):

* ``results.parquet``: one row per item: ``suite``, ``category``, ``item_id``, ``valid`` (BFCL: the checker's
  verdict; held-out: exact success), ``error_type``, ``error_message``, the policy's ``messages`` and its
  ``calls`` per turn (JSON texts), and for the held-out suite the reward, its components and abstention;
* ``summary.json``: the policy, each suite's identity (the held-out suite's items hash; BFCL's package version
  and the items played) and its summary (:mod:`training.suites.results`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.core.storage import atomic_dir, atomic_write_json
from training.suites import check_suites
from training.suites.heldout import freeze, run_heldout
from training.suites.results import summarize

Progress = Callable[[str, int, int], None]


def evaluate_policy(
    policy: Any,
    suites: list[str],
    out_dir: str | Path,
    heldout: Any = None,
    categories: list[str] | None = None,
    limit: int | None = None,
    seed: int = 0,
    bfcl_limit: int | None = None,
    progress: Progress | None = None,
    bootstrap_samples: int = 1000,
    env_pool: Any = None,
) -> dict[str, Any]:
    """Play ``suites`` with ``policy``; write ``out_dir`` (see the module docstring); return the summary.

    ``limit``: items of each suite (BFCL: per category); ``bfcl_limit`` overrides it for BFCL."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    check_suites(suites)
    if "heldout" in suites and heldout is None:
        raise ValueError("the heldout suite needs a frozen suite (prove eval freeze, or --heldout PATH)")
    bfcl_categories = None
    if "bfcl-multi-turn" in suites:
        from training.suites.bfcl import normalize_categories  # deferred: bfcl_eval loads only for BFCL

        bfcl_categories = normalize_categories(categories)  # refused before anything is played
    records: list[dict[str, Any]] = []
    identity: dict[str, Any] = {}
    timings: dict[str, float] = {}
    for suite in suites:
        t0 = time.perf_counter()
        cb = (lambda done, total, s=suite: progress(s, done, total)) if progress else None
        if suite == "heldout":
            records += run_heldout(policy, heldout, limit=limit, on_step=cb, pool=env_pool)
            identity[suite] = {k: heldout.meta[k] for k in ("name", "items_hash", "source_version", "n_items")}
            identity[suite]["limit"] = limit
        else:
            from training.suites.bfcl import bfcl_version, run_bfcl  # deferred: bfcl_eval loads only for BFCL

            blimit = bfcl_limit if bfcl_limit is not None else limit
            got = run_bfcl(policy, bfcl_categories, blimit, seed, on_step=cb)
            records += got
            identity[suite] = {
                "bfcl_eval": bfcl_version(),
                "categories": bfcl_categories,
                "limit": blimit,
                "seed": seed,
                "items": sorted(r["item_id"] for r in got),
            }
        timings[f"{suite}_s"] = round(time.perf_counter() - t0, 3)
    summary = {
        "policy": policy.describe(),
        "suites": identity,
        "summary": summarize(records, bootstrap_samples, seed),
        "timings": timings,
    }
    out = Path(out_dir)
    with atomic_dir(out) as tmp:
        pq.write_table(pa.Table.from_pylist(_uniform(records)), tmp / "results.parquet")
        atomic_write_json(tmp / "summary.json", summary)
    return summary


RESULT_COLUMNS = {
    "suite": None,
    "category": None,
    "item_id": None,
    "server": None,
    "valid": False,
    "reward": None,
    "validity": None,
    "coverage": None,
    "efficiency": None,
    "name": None,
    "args": None,
    "abstain_expected": None,
    "abstained": None,
    "n_calls": 0,
    "n_turns": 0,
    "error_type": None,
    "error_message": None,
    "messages": "[]",
    "calls": "[]",
    "reference": None,
}


def _uniform(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every row with every column (suites fill different ones), in one order."""
    return [{k: r.get(k, d) for k, d in RESULT_COLUMNS.items()} for r in records]


# ------------------------------------------------------------------------------------------------ where things go


def suites_root(data_dir: str | Path) -> Path:
    return Path(data_dir) / "suites"


def evals_root(data_dir: str | Path) -> Path:
    return Path(data_dir) / "evals"


DEFAULT_SUITE = "default"


def default_heldout(data_dir: str | Path, corpus_dir: str | Path | None = None, limit: int | None = None) -> Path:
    """The default frozen held-out suite (``<data>/suites/default``): frozen from ``corpus_dir`` (else the newest
    good corpus version) the first time it is asked for, then the same items for every later version."""
    root = suites_root(data_dir)
    if (root / DEFAULT_SUITE / "suite.json").exists():
        return root / DEFAULT_SUITE
    if corpus_dir is None:
        from pipeline.corpus.store import resolve_version  # deferred: the corpus store's readers (duckdb, polars)

        corpus_dir = resolve_version(data_dir, None)
    return freeze(corpus_dir, root, DEFAULT_SUITE, limit=limit)


def new_run_dir(data_dir: str | Path, policy_name: str) -> Path:
    """A fresh run folder under ``<data>/evals`` (runs are never overwritten)."""
    import re

    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = evals_root(data_dir) / f"{stamp}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', policy_name)[:60]}"
    out, n = base, 1
    while out.exists():
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out
