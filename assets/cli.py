"""The ``prove`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str))


# ----------------------------------------------------------------------------- servers
def cmd_servers_list(a: argparse.Namespace) -> int:
    from servers.registry import CATALOGUE, available, build

    present = set(available())
    rows = []
    for e in CATALOGUE:
        if e.name not in present:
            continue
        srv = build(e.name)
        import anyio

        from mcp import Client

        async def count() -> int:
            async with Client(srv) as c:
                return len((await c.list_tools()).tools)

        rows.append({"name": e.name, "category": e.category, "tools": anyio.run(count), "paper_tools": e.tools, "description": srv.summary})
    if a.json:
        _print_json({"servers": rows, "total_tools": sum(r["tools"] for r in rows)})
    else:
        for r in rows:
            print(f"{r['name']:<16} {r['category']:<16} {r['tools']:>3} tools  {r['description']}")
        print(f"{len(rows)} servers, {sum(r['tools'] for r in rows)} tools")
    return 0


def cmd_servers_serve(a: argparse.Namespace) -> int:
    from servers.registry import build

    build(a.name).serve(a.transport, host=a.host, port=a.port)
    return 0


def cmd_servers_check(a: argparse.Namespace) -> int:
    from pipeline.serverfile import ConfigFileError, check_server, load_servers_file

    try:
        configs = load_servers_file(a.config)
    except ConfigFileError as exc:
        print(f"prove: {exc}", file=sys.stderr)
        return 2
    reports = [check_server(c) for c in configs]
    if a.json:
        _print_json(reports)
    else:
        for r in reports:
            print(f"{r['name']} ({r['kind']}, isolation {r['isolation']})")
            print(f"  tools: {len(r.get('tools', []))}, read-only: {len(r.get('read_only_tools', []))}, entities: {r.get('entities', 0)}")
            for e in r.get("edges", []):
                print(f"  edge {e}")
            for t, why in (r.get("unchainable") or {}).items():
                print(f"  cannot chain {t}: {why}")
            for t, why in (r.get("excluded_tools") or {}).items():
                print(f"  excluded {t}: {why}")
            for prob in r["problems"]:
                print(f"  problem: {prob}")
    return 1 if any(r["problems"] and "could not use" in " ".join(r["problems"]) for r in reports) else 0


def cmd_servers_catalog(a: argparse.Namespace) -> int:
    from servers.catalog import write_catalog

    path = write_catalog(a.out)
    print(f"wrote {path}")
    return 0


# ----------------------------------------------------------------------------- build
def _build_config(a: argparse.Namespace):
    from pipeline.config import BuildConfig

    base: dict[str, Any] = {}
    if a.config:
        import yaml

        p = Path(a.config)
        try:
            base = yaml.safe_load(p.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise SystemExit(f"prove: cannot read config {p}: {exc}")
        if not isinstance(base, dict):
            raise SystemExit(f"prove: config {p} must be a mapping at the top level")
    if a.examples is not None:
        base["examples"] = a.examples
    if a.servers_file:
        from pipeline.serverfile import ConfigFileError, load_servers_file

        try:
            extra = load_servers_file(a.servers_file)
        except ConfigFileError as exc:
            raise SystemExit(f"prove: {exc}")
        base["server_configs"] = [c.model_dump(mode="json") for c in extra] + list(base.get("server_configs", []))
        if not a.servers:
            base["servers"] = [c.name for c in extra]
    if a.servers:
        base["servers"] = [s.strip() for s in a.servers.split(",") if s.strip()]
    if a.data_dir is not None:  # the flag wins over the file; without either, the default "data"
        base["data_dir"] = a.data_dir
    from pydantic import ValidationError

    try:
        return BuildConfig.model_validate(base)
    except ValidationError as exc:
        raise SystemExit(f"prove: invalid build configuration:\n{exc}")


QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def _materialize_partition(server: str, build_config_json: str, dagster_home: str) -> tuple[str, bool, str]:
    """One server's partition of the per-server assets, in a worker process of ``prove build --parallel``."""
    os.environ["DAGSTER_HOME"] = dagster_home
    import dagster as dg

    from assets import definitions as D
    from pipeline.config import BuildConfig

    cfg = BuildConfig.model_validate_json(build_config_json)
    instance = dg.DagsterInstance.get()
    r = dg.materialize(D.ALL_ASSETS, selection=D.PER_SERVER, partition_key=server, instance=instance,
                       resources=D.resources(build_config=cfg, train=False), run_config=QUIET,
                       tags={"prove/build": "cli", "prove/parallel": "true"}, raise_on_error=False)
    return server, r.success, r.run_id


def _run_partitions_parallel(cfg: Any, workers: int, bar: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """Every server's partition as its own Dagster run, ``workers`` at a time, each in its own process."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    runs, failed = [], []
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(_materialize_partition, s, cfg.model_dump_json(), os.environ["DAGSTER_HOME"]) for s in cfg.servers]
        for f in as_completed(futures):
            server, ok, run_id = f.result()
            runs.append(run_id)
            if not ok:
                failed.append((server, run_id))
            bar.set_postfix_str(f"{server} done")
            bar.update(1)
    return runs, failed


def _run_error(result) -> str:
    """The first step failure of a Dagster run result, in one line."""
    for ev in result.all_events:
        if ev.is_step_failure and ev.step_failure_data and ev.step_failure_data.error:
            return ev.step_failure_data.error.message.strip().splitlines()[-1][:300]
    return "unknown error"


def cmd_build(a: argparse.Namespace) -> int:
    import dagster as dg
    from tqdm import tqdm

    from assets import definitions as D
    from servers.registry import available

    cfg = _build_config(a)
    unknown = [s for s in cfg.servers if s not in available() and not any(c.name == s for c in cfg.server_configs)]
    if unknown:
        raise SystemExit(f"prove: unknown server(s) {unknown}; built-in servers: {', '.join(available())}")
    os.environ.setdefault("DAGSTER_HOME", str(Path(cfg.data_dir).resolve() / "dagster_home"))
    home = Path(os.environ["DAGSTER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    yaml_src = Path(__file__).resolve().parent.parent / "dagster.yaml"
    if yaml_src.exists() and not (home / "dagster.yaml").exists():
        (home / "dagster.yaml").write_text(yaml_src.read_text())
    instance = dg.DagsterInstance.get()
    D.ensure_partitions(instance, cfg.servers)
    train_json = json.dumps({"grpo_steps": a.grpo_steps} if a.grpo_steps else {})
    if a.train_config:  # the asset reads the file itself (per-model defaults, as prove train --config)
        train_json = json.dumps({"config_file": str(Path(a.train_config).resolve()), **json.loads(train_json)})
    res = D.resources(build_config=cfg, train=not a.no_train, train_config_json=train_json)
    unavailable: dict[str, str] = {}
    t0 = time.time()
    steps = len(cfg.servers) + 1
    bar = tqdm(total=steps, desc="prove build", unit="stage-run")
    runs = []
    if a.parallel > 1 and len(cfg.servers) > 1:
        bar.set_postfix_str(f"{len(cfg.servers)} servers, {a.parallel} at a time: probe → replay")
        runs, failed = _run_partitions_parallel(cfg, a.parallel, bar)
        for server, run_id in failed:
            unavailable[server] = f"the per-server run failed (Dagster run {run_id})"
    for server in ([] if a.parallel > 1 and len(cfg.servers) > 1 else cfg.servers):
        bar.set_postfix_str(f"{server}: probe → replay")
        r = dg.materialize(D.ALL_ASSETS, selection=D.PER_SERVER, partition_key=server, instance=instance, resources=res, run_config=QUIET,
                           tags={"prove/build": "cli"}, raise_on_error=False)
        runs.append(r.run_id)
        if not r.success:
            unavailable[server] = f"the per-server run failed (Dagster run {r.run_id}): {_run_error(r)}"
        bar.update(1)
    if unavailable:
        for server, why in unavailable.items():
            tqdm.write(f"prove: {server} is left out: {why}", file=sys.stderr)
        kept = [s for s in cfg.servers if s not in unavailable]
        if not kept:
            bar.close()
            print("prove: every server failed; no corpus written", file=sys.stderr)
            return 1
        cfg = cfg.model_copy(update={"servers": kept, "unavailable_servers": unavailable})
        res = D.resources(build_config=cfg, train=not a.no_train, train_config_json=train_json)
    bar.set_postfix_str("dedup → corpus" + ("" if a.no_train else " → grpo"))
    cross = D.CROSS if not a.no_train else [x for x in D.CROSS if x is not D.grpo_policy]
    r = dg.materialize(D.ALL_ASSETS + D.CHECKS, selection=dg.AssetSelection.assets(*cross) | dg.AssetSelection.checks(*D.CHECKS),
                       instance=instance, resources=res, tags={"prove/build": "cli"}, raise_on_error=False, run_config=QUIET)
    runs.append(r.run_id)
    bar.update(1)
    bar.close()
    from pipeline.corpus import list_versions

    versions = list_versions(cfg.data_dir)
    latest = versions[-1] if versions else None
    checks = {}
    for ev in r.get_asset_check_evaluations():
        checks[ev.check_name] = ev.passed
    if latest:
        m = json.loads((Path(latest["path"]) / "manifest.json").read_text())
        from pipeline.report import show_text

        print(show_text(m))
        print(f"\ncorpus:  {latest['path']}")
    if checks:
        print("quality gates: " + ", ".join(f"{k}={'pass' if v else 'FAIL'}" for k, v in checks.items()))
    if not a.no_train:
        run_dir = Path(cfg.data_dir) / "runs" / (latest["version"] if latest else "")
        if (run_dir / "metrics.jsonl").exists():
            print(f"policy:  {run_dir}/checkpoint  metrics: {run_dir}/metrics.jsonl  curve: {run_dir}/reward_curve.png")
    print(f"dagster: {len(runs)} runs recorded in {os.environ['DAGSTER_HOME']} — open the UI with: "
          f"DAGSTER_HOME={os.environ['DAGSTER_HOME']} .venv/bin/dagster dev -m assets.definitions")
    print(f"took {time.time() - t0:.1f}s")
    if not r.success:
        print("prove: the corpus run did not finish (a quality gate or a stage failed); see the Dagster UI", file=sys.stderr)
        return 1
    return 0


# ----------------------------------------------------------------------------- corpus
def cmd_corpus_list(a: argparse.Namespace) -> int:
    from pipeline.corpus import list_versions

    vs = list_versions(a.data_dir)
    if a.json:
        _print_json(vs)
    else:
        if not vs:
            print(f"no corpus versions under {a.data_dir}/corpus")
        for v in vs:
            print(f"{v['version']}  {v['examples']:>6} examples  {v['rejections']:>5} rejections  {', '.join(v['servers'])}")
    return 0


def cmd_corpus_show(a: argparse.Namespace) -> int:
    from pipeline.corpus import resolve_version
    from pipeline.report import show_text

    p = resolve_version(a.data_dir, a.version)
    m = json.loads((p / "manifest.json").read_text())
    if a.json:
        _print_json(m)
    else:
        print(show_text(m))
        if (p / "composition.png").exists():
            print(f"picture: {p / 'composition.png'}")
    return 0


def _count_table(title: str, counts: dict[str, list[int]], a: str, b: str) -> list[str]:
    if not counts:
        return [f"{title}: (none)"]
    w = max(len(title), *(len(k) for k in counts))
    lines = [f"{title:<{w}}  {'A':>7}  {'B':>7}  {'B-A':>7}"]
    for k, (x, y) in counts.items():
        lines.append(f"{k:<{w}}  {x:>7}  {y:>7}  {y - x:>+7}")
    return lines


def cmd_corpus_diff(a: argparse.Namespace) -> int:
    from pipeline.corpus import diff_versions, resolve_version

    d = diff_versions(resolve_version(a.data_dir, a.a), resolve_version(a.data_dir, a.b), limit=a.limit)
    if a.json:
        _print_json(d)
        return 0
    print(f"A = {d['a']}\nB = {d['b']}")
    print(f"examples: {d['examples'][0]} -> {d['examples'][1]}  (+{d['added']} added, -{d['removed']} removed, {d['unchanged']} in both)")
    if d["content_hash"][0] == d["content_hash"][1]:
        print("content: identical (same content hash)")
    if d["config_changed"]:
        print(f"config changed: {', '.join(d['config_changed'])}")
    for key, title in (("by_kind", "kind"), ("by_server", "server"), ("by_augmentation", "augmentation")):
        print()
        print("\n".join(_count_table(title, d[key], d["a"], d["b"])))
    if d["rejections"]["by_reason"]:
        print()
        print("\n".join(_count_table("rejection reason", d["rejections"]["by_reason"], d["a"], d["b"])))
    for label, rows, total in (("added", d["added_examples"], d["added"]), ("removed", d["removed_examples"], d["removed"])):
        if not total:
            continue
        print(f"\n{label} ({total}{', first ' + str(len(rows)) if len(rows) < total else ''}):")
        for r in rows:
            augs = f"  [{', '.join(r['augmentations'])}]" if r["augmentations"] else ""
            print(f"  {'+' if label == 'added' else '-'} {r['example_id']}  {r['kind']:<13} {r['server']}{augs}")
    return 0


def cmd_rejected(a: argparse.Namespace) -> int:
    import polars as pl

    from pipeline.corpus import resolve_version

    p = resolve_version(a.data_dir, a.version)
    df = pl.read_parquet(p / "rejections.parquet")
    if a.reason:
        df = df.filter(pl.col("reason") == a.reason)
    if a.stage:
        df = df.filter(pl.col("stage") == a.stage)
    if a.json:
        _print_json(df.drop("payload").to_dicts())
        return 0
    print(f"{df.height} rejections in {p.name}")
    for row in df.head(a.limit).iter_rows(named=True):
        print(f"{row['rejection_id']}  {row['stage']}/{row['reason']}  [{row['server']}]  {row['detail'][:160]}")
    return 0


def _short(obj: Any, n: int = 160) -> str:
    text = obj if isinstance(obj, str) else json.dumps(obj, default=str, sort_keys=True)
    return text if len(text) <= n else text[: n - 1] + "…"


def _print_calls(calls: list[dict[str, Any]], width: int, source: str | None = None) -> None:
    if not calls:
        print("  calls: none (this record made no tool call)")
        return
    how = ("the dry run that resolved the chain's values, on a scratch session" if source == "dry_run"
           else "as executed and replayed on a fresh session")
    print(f"  calls ({len(calls)}, {how}):")
    for c in calls:
        turn = f"turn {c['turn']}" if c.get("turn") is not None else "turn ?"
        head = f"    {c['index'] + 1}. [{turn}] {c['name']}({_short(c['arguments'], 120)})"
        if c["ok"]:
            print(f"{head}\n         -> ok: {_short(c.get('result'), width)}")
        else:
            note = "" if c.get("reference", True) else "  (a deliberate wrong first attempt, recovered by the next call)"
            print(f"{head}\n         -> ERROR {c.get('error_code')}: {_short(c.get('error') or '', width)}{note}")


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
            print(f"            step {i}: {st['name']}({_short(st['args'], 100)})" + (f" after {st['depends_on']}" if st["depends_on"] else ""))
    q = d.get("query")
    if q and (q.get("query_id") or q.get("turns")):
        print(f"  query     {q.get('query_id')}  (information level {q.get('info_level')}, persona {q.get('persona')})")
        for i, t in enumerate(q.get("turns") or []):
            print(f"            user turn {i}: {_short(t, width)}")
        if q.get("withheld"):
            print(f"            withheld until asked: {_short(q['withheld'], width)}")
    conv = d.get("conversation")
    if conv:
        extra = f", derived from {conv['parent_id']}" if conv.get("parent_id") else ""
        print(f"  conversation {conv.get('conversation_id')}  outcomes {conv.get('outcomes') or []}{extra}")
        if conv.get("final_state_hash"):
            print(f"            final state hash {conv['final_state_hash'][:16]} (as simulated)")
    if "calls" in d:
        _print_calls(d["calls"], width, d.get("calls_from"))


def cmd_lineage(a: argparse.Namespace) -> int:
    from pipeline.corpus import lineage

    d = lineage(a.data_dir, a.id, None if a.version == "latest" else a.version)
    if d is None:
        print(f"prove: no example or rejection with id {a.id!r} in any corpus version under {a.data_dir}/corpus", file=sys.stderr)
        return 1
    if a.json:
        _print_json(d)
        return 0
    if d["type"] == "rejection":
        rule = d["rule"]
        print(f"rejection {d['id']}  (version {d['version']})")
        print(f"  rule      {rule['stage']}/{rule['reason']}  (stage {rule['stage']}, reason {rule['reason']})")
        print(f"  detail    {rule['detail']}")
        print(f"  upstream  {json.dumps(d['upstream'])}")
        print(f"  record    the rejected {d['record']}")
        _print_path(d, a.width)
        if d.get("failing_calls"):
            print(f"  failing calls: {', '.join(str(i + 1) for i in d['failing_calls'])}")
        return 0
    print(f"example {d['id']}  (version {d['version']}, {d['kind']}, {d['split']} split, servers {', '.join(d['servers'])})")
    if d["augmentations"]:
        print(f"  augmentations {', '.join(d['augmentations'])}")
    _print_path(d, a.width)
    ref = d.get("reference") or []
    if any(ref):
        print("  reference (what a policy is rewarded for, per user turn):")
        for i, turn in enumerate(ref):
            print(f"    turn {i}: " + ("; ".join(f"{c['name']}({_short(c['arguments'], 80)})" for c in turn) or "(no call: answer or ask)"))
    if d["kind"] == "multi_turn":
        print("  accepted: replayed on a fresh session to the same results and final state; passed the error-rate, "
              "sensitive-provenance and near-duplicate rules")
    else:
        print(f"  accepted: a {d['kind']} example built by augmentation (no tool call to replay)")
    if d.get("related_rejections"):
        print(f"  rejections on the same chain ({len(d['related_rejections'])}):")
        for r in d["related_rejections"][:10]:
            print(f"    {r['rejection_id']}  {r['stage']}/{r['reason']}")
    return 0


# ----------------------------------------------------------------------------- sql
def cmd_sql(a: argparse.Namespace) -> int:
    import duckdb

    from pipeline import sql

    if not a.query:
        path = sql.refresh(a.data_dir)
        names = sql.view_names(a.data_dir, refresh_first=False)
        counts = {n: sql.query(a.data_dir, f"SELECT count(*) FROM {n}", refresh_first=False)[1][0][0] for n in names}
        if a.json:
            _print_json({"database": str(path), "views": counts})
            return 0
        print(f"{path}")
        for n in names:
            print(f"  {n:<12} {counts[n]:>7} rows")
        print(f"query with: prove sql \"select kind, count(*) from examples group by all\"  (or open {path.name} read-only in duckdb)")
        return 0
    try:
        cols, rows = sql.query(a.data_dir, a.query)
    except duckdb.Error as exc:
        print(f"prove sql: {exc}", file=sys.stderr)
        return 2
    if a.json:
        _print_json([dict(zip(cols, r)) for r in rows])
        return 0
    print(_table(cols, rows, a.width))
    return 0


def _table(cols: list[str], rows: list[tuple[Any, ...]], width: int = 60) -> str:
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


# ----------------------------------------------------------------------------- reward / train
def cmd_reward(a: argparse.Namespace) -> int:
    from pipeline.reward import score_jsonl

    try:
        rows = score_jsonl(a.file, server=a.server)
    except (ValueError, FileNotFoundError) as exc:
        print(f"prove reward: {exc}", file=sys.stderr)
        return 2
    for r in rows:
        print(json.dumps(r))
    return 0


def cmd_train(a: argparse.Namespace) -> int:
    from pipeline.corpus import resolve_version
    from training.config import load_train_config
    from training.train import train

    try:
        cfg = load_train_config(a.config, {"grpo_steps": a.grpo_steps, "model": a.model})
    except ValueError as exc:
        print(f"prove train: {exc}", file=sys.stderr)
        return 2
    corpus_dir = Path(a.corpus) if a.corpus else resolve_version(a.data_dir, None)
    out = a.out or str(Path(a.data_dir) / "runs" / corpus_dir.name)
    result = train(str(corpus_dir), out, cfg)
    _print_json(result)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="prove", description="Live MCP servers -> verified tool-use corpus -> GRPO.")
    sub = p.add_subparsers(dest="cmd", required=True)

    sv = sub.add_parser("servers", help="the built-in environment library").add_subparsers(dest="sub", required=True)
    x = sv.add_parser("list")
    x.add_argument("--json", action="store_true")
    x.set_defaults(fn=cmd_servers_list)
    x = sv.add_parser("serve")
    x.add_argument("name")
    x.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    x.add_argument("--host", default="127.0.0.1")
    x.add_argument("--port", type=int, default=8000)
    x.set_defaults(fn=cmd_servers_serve)
    x = sv.add_parser("check")
    x.add_argument("config", help="YAML/TOML servers file")
    x.add_argument("--json", action="store_true")
    x.set_defaults(fn=cmd_servers_check)
    x = sv.add_parser("catalog")
    x.add_argument("--out", default="docs/catalog.md")
    x.set_defaults(fn=cmd_servers_catalog)

    x = sub.add_parser("build", help="materialize the corpus (and the policy) through Dagster")
    x.add_argument("--examples", type=int)
    x.add_argument("--servers")
    x.add_argument("--config", help="YAML file with a BuildConfig")
    x.add_argument("--servers-file", help="YAML/TOML file registering servers (built-in, stdio, http)")
    x.add_argument("--data-dir", default=None, help="where corpus versions, caches and the Dagster instance go "
                   "(default: the config file's data_dir, else data)")
    x.add_argument("--no-train", action="store_true")
    x.add_argument("--grpo-steps", type=int)
    x.add_argument("--train-config", help="train.yaml for the grpo_policy asset (as prove train --config)")
    x.add_argument("--parallel", type=int, default=min(2, os.cpu_count() or 1), metavar="N",
                   help="run N servers' partitions at once, each its own Dagster run in its own worker process "
                        "(default: 2 where there are 2 or more cores; 1 runs them one after another in this process)")
    x.set_defaults(fn=cmd_build)

    cp = sub.add_parser("corpus", help="corpus versions").add_subparsers(dest="sub", required=True)
    x = cp.add_parser("list")
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_corpus_list)
    x = cp.add_parser("show")
    x.add_argument("version", nargs="?", default="latest")
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_corpus_show)
    x = cp.add_parser("diff", help="what changed between two versions (names, unique prefixes or 'latest')")
    x.add_argument("a")
    x.add_argument("b")
    x.add_argument("--limit", type=int, default=20, help="examples added/removed to list")
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_corpus_diff)

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

    x = sub.add_parser("sql", help="SQL over every corpus version (DuckDB views: examples, rejections, versions)")
    x.add_argument("query", nargs="?", help="a SQL query; without one, the views and their row counts")
    x.add_argument("--width", type=int, default=60, help="characters per cell")
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_sql)

    x = sub.add_parser("reward", help="score trajectories with the programmatic reward")
    x.add_argument("file")
    x.add_argument("--server")
    x.set_defaults(fn=cmd_reward)

    x = sub.add_parser("train", help="SFT warm start + GRPO on a corpus version")
    x.add_argument("--corpus")
    x.add_argument("--out")
    x.add_argument("--config", help="train.yaml (TrainConfig fields; per-model defaults fill the rest, docs/training.md)")
    x.add_argument("--model")
    x.add_argument("--grpo-steps", type=int)
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_train)

    a = p.parse_args(argv)
    try:
        return int(a.fn(a) or 0)
    except FileNotFoundError as exc:
        print(f"prove: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
