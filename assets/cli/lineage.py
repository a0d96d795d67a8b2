"""``prove rejected`` and ``prove lineage``: why trajectories were rejected, and the full path of any record."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from assets.cli.common import print_json, short


def cmd_rejected(a: argparse.Namespace) -> int:
    import polars as pl

    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.corpus.store import resolve_version

    p = resolve_version(a.data_dir, a.version)
    df = pl.read_parquet(p / "rejections.parquet")
    for col, wanted in (("reason", a.reason), ("stage", a.stage)):
        if not wanted:
            continue
        known = df[col].value_counts(sort=True)
        if wanted not in set(df[col].to_list()):
            listed = ", ".join(f"{k} ({n})" for k, n in known.iter_rows()) or "none: this version has no rejections"
            print(
                f"prove rejected: no rejection in {p.name} has {col} {wanted!r}; the {col}s there: {listed}",
                file=sys.stderr,
            )
            return 1
        df = df.filter(pl.col(col) == wanted)
    if a.json:
        print_json(df.drop("payload").to_dicts())
        return 0
    print(f"{df.height} rejections in {p.name}")
    for row in df.head(a.limit).iter_rows(named=True):
        print(f"{row['rejection_id']}  {row['stage']}/{row['reason']}  [{row['server']}]  {row['detail'][:160]}")
    return 0


def _print_calls(calls: list[dict[str, Any]], width: int, source: str | None = None) -> None:
    if not calls:
        print("  calls: none (this record made no tool call)")
        return
    how = {
        "dry_run": "the dry run that resolved the chain's values, on a scratch session",
        "probe": "the probe call the server failed, while sampling its world",
    }.get(source or "", "as executed and replayed on a fresh session")
    print(f"  calls ({len(calls)}, {how}):")
    for c in calls:
        turn = f"turn {c['turn']}" if c.get("turn") is not None else "turn ?"
        head = f"    {c['index'] + 1}. [{turn}] {c['name']}({short(c['arguments'], 120)})"
        if c["ok"]:
            print(f"{head}\n         -> ok: {short(c.get('result'), width)}")
        else:
            note = (
                "" if c.get("reference", True) else "  (a deliberate wrong first attempt, recovered by the next call)"
            )
            print(f"{head}\n         -> ERROR {c.get('error_code')}: {short(c.get('error') or '', width)}{note}")


def _print_path(d: dict[str, Any], width: int) -> None:
    snap = d.get("snapshot")
    if snap:
        print(f"  snapshot  {snap.get('snapshot_id')}  (server {d.get('server')}, seed {snap.get('seed')})")
    g = d.get("graph")
    if g:
        print(f"  graph     {g['graph_id']}  {g['tools']} tools, {g['confirmed_edges']} confirmed edges")
        for t, why in list(g["unchainable"].items())[:10]:
            print(f"            cannot chain {t}: {why}")
    ch = d.get("chain")
    if ch and (ch.get("chain_id") or ch.get("tools")):
        tools = " -> ".join(ch.get("tools") or []) or "(no calls)"
        print(f"  chain     {ch.get('chain_id')}  {tools}")
        for i, st in enumerate(ch.get("steps") or []):
            print(
                f"            step {i}: {st['name']}({short(st['args'], 100)})"
                + (f" after {st['depends_on']}" if st["depends_on"] else "")
            )
    q = d.get("query")
    if q and (q.get("query_id") or q.get("turns")):
        print(f"  query     {q.get('query_id')}  (information level {q.get('info_level')}, persona {q.get('persona')})")
        for i, t in enumerate(q.get("turns") or []):
            print(f"            user turn {i}: {short(t, width)}")
        if q.get("withheld"):
            print(f"            withheld until asked: {short(q['withheld'], width)}")
    elif q and q.get("asks"):
        print(
            f"  query     not written: the chain was rejected in its dry run (information level {q.get('info_level')}, "
            f"persona {q.get('persona')}); the user's values per step are the calls' arguments below"
        )
    conv = d.get("conversation")
    if conv:
        extra = f", derived from {conv['parent_id']}" if conv.get("parent_id") else ""
        print(f"  conversation {conv.get('conversation_id')}  outcomes {conv.get('outcomes') or []}{extra}")
        if conv.get("final_state_hash"):
            print(f"            final state hash {conv['final_state_hash'][:16]} (as simulated)")
    if "calls" in d:
        _print_calls(d["calls"], width, d.get("calls_from"))


def _print_rejection(d: dict[str, Any], width: int) -> None:
    rule = d["rule"]
    print(f"rejection {d['id']}  (version {d['version']})")
    print(f"  rule      {rule['stage']}/{rule['reason']}  (stage {rule['stage']}, reason {rule['reason']})")
    print(f"  detail    {rule['detail']}")
    print(f"  upstream  {json.dumps(d['upstream'])}")
    print(f"  record    the rejected {d['record']}")
    _print_path(d, width)
    if d.get("failing_calls"):
        print(f"  failing calls: {', '.join(str(i + 1) for i in d['failing_calls'])}")


def cmd_lineage(a: argparse.Namespace) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.corpus.lineage import lineage

    d = lineage(a.data_dir, a.id, None if a.version == "latest" else a.version)
    if d is None:
        print(
            f"prove: no example or rejection with id {a.id!r} in any corpus version under {a.data_dir}/corpus",
            file=sys.stderr,
        )
        return 1
    if a.json:
        print_json(d)
        return 0
    if d["type"] == "rejection":
        _print_rejection(d, a.width)
        return 0
    print(
        f"example {d['id']}  (version {d['version']}, {d['kind']}, {d['split']} split, "
        f"servers {', '.join(d['servers'])})"
    )
    if d["augmentations"]:
        print(f"  augmentations {', '.join(d['augmentations'])}")
    _print_path(d, a.width)
    ref = d.get("reference") or []
    if any(ref):
        print("  reference (what a policy is rewarded for, per user turn):")
        for i, turn in enumerate(ref):
            print(
                f"    turn {i}: "
                + ("; ".join(f"{c['name']}({short(c['arguments'], 80)})" for c in turn) or "(no call: answer or ask)")
            )
    if d["kind"] in ("multi_turn", "clarification"):
        print(
            "  accepted: replayed on a fresh session to the same results and final state; passed the error-rate, "
            "sensitive-provenance and near-duplicate rules"
        )
    else:
        print(f"  accepted: a {d['kind']} example built by augmentation (no tool call to replay)")
    if d.get("related_rejections"):
        print(f"  rejections on the same chain ({len(d['related_rejections'])}):")
        for r in d["related_rejections"][:10]:
            print(f"    {r['rejection_id']}  {r['stage']}/{r['reason']}")
    return 0


def register(sub: Any) -> None:
    x = sub.add_parser("rejected", help="why trajectories were rejected")
    x.add_argument("--reason")
    x.add_argument("--stage")
    x.add_argument("--version", default="latest")
    x.add_argument("--limit", type=int, default=50)
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_rejected)

    x = sub.add_parser("lineage", help="the full path of an example or rejection")
    x.add_argument("id", help="an example, conversation or rejection id")
    x.add_argument("--version", default="latest", help="where to look first (then every other version)")
    x.add_argument("--width", type=int, default=200, help="characters of each result or error to show")
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_lineage)
