"""``prove servers``: list, serve, check and catalogue the environment library."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from assets.cli import servers_init
from assets.cli.common import print_json


def cmd_servers_list(a: argparse.Namespace) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
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

        rows.append(
            {
                "name": e.name,
                "category": e.category,
                "tools": anyio.run(count),
                "paper_tools": e.tools,
                "description": srv.summary,
            }
        )
    if a.json:
        print_json({"servers": rows, "total_tools": sum(r["tools"] for r in rows)})
    else:
        for r in rows:
            print(f"{r['name']:<16} {r['category']:<16} {r['tools']:>3} tools  {r['description']}")
        print(f"{len(rows)} servers, {sum(r['tools'] for r in rows)} tools")
    return 0


def cmd_servers_serve(a: argparse.Namespace) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from servers.registry import available, build

    if a.name not in available():
        print(
            f"prove servers serve: unknown server {a.name!r}; built-in servers: {', '.join(available())}",
            file=sys.stderr,
        )
        return 2
    build(a.name, seed=a.seed).serve(a.transport, host=a.host, port=a.port)
    return 0


def _print_check(r: dict) -> None:
    print(f"{r['name']} ({r['kind']}, isolation {r['isolation']})")
    print(
        f"  tools: {len(r.get('tools', []))}, read-only: {len(r.get('read_only_tools', []))}, "
        f"entities: {r.get('entities', 0)}"
    )
    kinds = r.get("entity_kinds") or {}
    if kinds:
        print("  entity kinds: " + ", ".join(f"{k} ({n})" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])))
    for kind, params in (r.get("feeds") or {}).items():
        print(f"  {kind} feeds: {', '.join(params)}")
    refs = r.get("references")
    if refs:  # a database's joins: its foreign keys as read, or guessed from column names
        read = refs["from"] == "catalog"
        said = "foreign keys read from the catalog" if read else "references guessed from column names"
        print(f"  {said}: {', '.join(refs['joins']) or 'none'}")
    for e in r.get("edges", []):
        print(f"  edge {e}")
    for t, info in (r.get("tool_report") or {}).items():
        print(f"  {'chainable' if info['chainable'] else 'cannot chain'} {t}: {info['why']}")
        if info.get("fix"):
            print(f"      fix: {info['fix']}")
            if info.get("also"):  # a line to add with it (a login's secrets), under it
                print(f"           {info['also']}")
    for prob in r["problems"]:
        print(f"  problem: {prob}")


def cmd_servers_check(a: argparse.Namespace) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.core.servers_file import ConfigFileError, load_servers_file
    from pipeline.discovery.check import check_servers

    try:
        configs = load_servers_file(a.config)
    except ConfigFileError as exc:
        print(f"prove: {exc}", file=sys.stderr)
        return 2
    log_dir = Path(a.data_dir) / "logs" / "servers"
    out_dir = Path(a.data_dir) / "checks"

    def done(r: dict) -> None:  # each server's report as soon as it is done (a slow server hides no other)
        if not a.json:
            _print_check(r)
        where = out_dir / f"{r['name']}.json"
        print(f"{r['name']}: checked in {r['duration_s']:g}s, report {where}", file=sys.stderr)
        sys.stdout.flush()

    reports = check_servers(configs, out_dir=out_dir, jobs=a.jobs, log_dir=log_dir, on_report=done)
    if a.json:
        print_json(reports)
    return 1 if any(r["problems"] and "could not use" in " ".join(r["problems"]) for r in reports) else 0


def cmd_servers_catalog(a: argparse.Namespace) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from servers.catalog import write_catalog

    path = write_catalog(a.out)
    print(f"wrote {path}")
    return 0


def register(sub: Any) -> None:
    sv = sub.add_parser("servers", help="the built-in environment library").add_subparsers(dest="sub", required=True)
    x = sv.add_parser("list")
    x.add_argument("--json", action="store_true")
    x.set_defaults(fn=cmd_servers_list)
    x = sv.add_parser("serve")
    x.add_argument("name")
    x.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    x.add_argument("--host", default="127.0.0.1")
    x.add_argument("--port", type=int, default=8000)
    x.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the world a request naming none gets (the corpus's env_seed; default 0)",
    )
    x.set_defaults(fn=cmd_servers_serve)
    x = sv.add_parser("check")
    x.add_argument("config", help="YAML/TOML servers file")
    x.add_argument("--json", action="store_true")
    x.add_argument("--jobs", type=int, default=4, help="servers checked at the same time (default 4)")
    x.add_argument(
        "--data-dir",
        default="data",
        help="each server's JSON report goes to <data-dir>/checks/<name>.json as it finishes, its stderr to "
        "<data-dir>/logs/servers/<name>.log",
    )
    x.set_defaults(fn=cmd_servers_check)
    servers_init.register(sv)
    x = sv.add_parser("catalog")
    x.add_argument("--out", default="docs/catalog.md")
    x.set_defaults(fn=cmd_servers_catalog)
