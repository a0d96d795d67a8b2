"""Reading evaluation results: summaries as each suite reports them, paired comparisons, one item's story.

* held-out: mean reward with a 95% bootstrap interval, the components (validity, coverage, efficiency, name,
  args: means over tool tasks), exact success on tool tasks, abstention accuracy on items where no call is
  right, and the mean reward per kind;
* BFCL multi-turn: accuracy per category and overall, as BFCL reports them
  (:func:`training.suites.bfcl.summarize_bfcl`).

:func:`compare` pairs two runs item by item (the same suite items, checked by the held-out suite's hash and
BFCL's item ids): the mean difference B - A with its 95% bootstrap interval, per suite and per category.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from training.evaluate import bootstrap_ci, paired_delta

HELDOUT_COMPONENTS = ("validity", "coverage", "efficiency", "name", "args")


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _stat(xs: list[float], samples: int, seed: int) -> dict[str, Any]:
    return {"mean": _mean(xs), "ci95": bootstrap_ci(xs, samples, seed), "n": len(xs)}


def summarize_heldout(rows: list[dict[str, Any]], samples: int = 1000, seed: int = 0) -> dict[str, Any]:
    tool = [r for r in rows if not r["abstain_expected"]]
    abst = [r for r in rows if r["abstain_expected"]]
    kinds = sorted({r["category"] for r in rows})
    return {
        "n": len(rows),
        "reward": _stat([r["reward"] for r in rows], samples, seed),
        "components": {k: _mean([r[k] for r in tool]) for k in HELDOUT_COMPONENTS},
        "exact_success": _stat([1.0 if r["valid"] else 0.0 for r in tool], samples, seed),
        "abstention_accuracy": _stat([1.0 if r["abstained"] else 0.0 for r in abst], samples, seed),
        "by_kind": {
            k: {"n": len(v), "mean_reward": _mean([r["reward"] for r in v])}
            for k in kinds
            for v in [[r for r in rows if r["category"] == k]]
        },
        "mean_calls": _mean([r["n_calls"] for r in rows]),
    }


def summarize(records: list[dict[str, Any]], samples: int = 1000, seed: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    held = [r for r in records if r["suite"] == "heldout"]
    if held:
        out["heldout"] = summarize_heldout(held, samples, seed)
    bfcl = [r for r in records if r["suite"] == "bfcl-multi-turn"]
    if bfcl:
        from training.suites.bfcl import summarize_bfcl  # deferred: bfcl_eval loads only for BFCL results

        out["bfcl-multi-turn"] = summarize_bfcl(bfcl)
    return out


def headline_numbers(summary: dict[str, Any]) -> dict[str, float]:
    """A run's summary as flat numbers (Dagster's Plots draw each across materializations)."""
    out: dict[str, float] = {}
    h = summary.get("heldout")
    if h:
        for k in ("reward", "exact_success", "abstention_accuracy"):
            if h[k]["mean"] is not None:
                out[f"heldout_{k}"] = float(h[k]["mean"])
        for k, v in h["components"].items():
            if v is not None:
                out[f"heldout_{k}"] = float(v)
    b = summary.get("bfcl-multi-turn")
    if b:
        out["bfcl_overall"] = float(b["overall"])
        for cat, v in b["by_category"].items():
            out[f"bfcl_{cat}"] = float(v["accuracy"])
    return out


# ------------------------------------------------------------------------------------------------ reading runs


def load_run(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(summary.json, result rows) of an evaluation run folder (``FileNotFoundError`` naming it if absent)."""
    import pyarrow.parquet as pq

    p = Path(path)
    if not (p / "summary.json").exists() or not (p / "results.parquet").exists():
        raise FileNotFoundError(f"{p}: not an evaluation run (no summary.json / results.parquet)")
    return json.loads((p / "summary.json").read_text()), pq.read_table(p / "results.parquet").to_pylist()


def _score(r: dict[str, Any]) -> float:
    return float(r["reward"]) if r["suite"] == "heldout" else (1.0 if r["valid"] else 0.0)


def compare(a: str | Path, b: str | Path, samples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """B - A paired over the items both runs played, per suite (held-out: reward; BFCL: accuracy) and per
    category. Runs on different held-out suites are refused (their items differ)."""
    sa, ra = load_run(a)
    sb, rb = load_run(b)
    out: dict[str, Any] = {"a": str(a), "b": str(b), "suites": {}}
    for suite in sorted(set(sa["suites"]) & set(sb["suites"])):
        if suite == "heldout":
            ha, hb = sa["suites"][suite]["items_hash"], sb["suites"][suite]["items_hash"]
            if ha != hb:
                raise ValueError(
                    f"{a} and {b} played different held-out suites ({sa['suites'][suite]['name']} {ha}, "
                    f"{sb['suites'][suite]['name']} {hb}): their numbers are not paired"
                )
        ia = {r["item_id"]: r for r in ra if r["suite"] == suite}
        ib = {r["item_id"]: r for r in rb if r["suite"] == suite}
        both = sorted(set(ia) & set(ib))
        if not both:
            continue
        entry = {
            "n_paired": len(both),
            "a_mean": _mean([_score(ia[i]) for i in both]),
            "b_mean": _mean([_score(ib[i]) for i in both]),
            "delta": paired_delta([_score(ia[i]) for i in both], [_score(ib[i]) for i in both], samples, seed),
            "by_category": {},
        }
        for cat in sorted({ia[i]["category"] for i in both}):
            ids = [i for i in both if ia[i]["category"] == cat]
            entry["by_category"][cat] = {
                "n": len(ids),
                "delta": paired_delta([_score(ia[i]) for i in ids], [_score(ib[i]) for i in ids], samples, seed),
            }
        out["suites"][suite] = entry
    if not out["suites"]:
        raise ValueError(f"{a} and {b} share no suite item: nothing to compare")
    return out


def item_story(rows: list[dict[str, Any]], item_id: str, max_chars: int = 4000) -> str:
    """One item as a person reads it: the verdict, then each message of the policy's conversation."""
    match = [r for r in rows if r["item_id"] == item_id or r["item_id"].startswith(item_id)]
    if not match:
        raise KeyError(f"no item {item_id!r} in this run")
    r = match[0]
    head = f"{r['suite']} / {r['category']} / {r['item_id']}: " + ("PASS" if r["valid"] else "FAIL")
    if r.get("error_type"):
        head += f" ({r['error_type']})"
    lines = [head]
    if r.get("error_message"):
        lines.append(f"  checker: {r['error_message']}")
    if r["suite"] == "heldout":
        lines.append(
            f"  reward {r['reward']:.3f}: "
            + ", ".join(f"{k} {r[k]:.2f}" for k in HELDOUT_COMPONENTS)
            + f"; calls {r['n_calls']}"
        )
        if r.get("reference"):
            lines.append(f"  reference per turn: {r['reference'][:max_chars]}")
    for m in json.loads(r["messages"]):
        text = m.get("content") or ""
        if m.get("tool_calls"):
            text = " ".join(f"{c['function']['name']}({c['function']['arguments']})" for c in m["tool_calls"])
        if isinstance(text, list):
            text = json.dumps(text)
        more = len(text) - max_chars
        lines.append(f"  [{m.get('role')}] {text[:max_chars]}" + (f" ... ({more} more)" if more > 0 else ""))
    return "\n".join(lines)
