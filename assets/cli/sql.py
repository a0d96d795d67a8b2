"""``prove sql``: SQL over every corpus version (DuckDB views)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from assets.cli.common import print_json, table


def _views(a: argparse.Namespace) -> int:
    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.corpus import sql

    path = sql.refresh(a.data_dir)
    names = sql.view_names(a.data_dir, refresh_first=False)
    counts = {n: sql.query(a.data_dir, f"SELECT count(*) FROM {n}", refresh_first=False)[1][0][0] for n in names}
    if a.json:
        print_json({"database": str(path), "views": counts})
        return 0
    print(f"{path}")
    for n in names:
        print(f"  {n:<12} {counts[n]:>7} rows")
    print(
        'query with: prove sql "select kind, count(*) from examples group by all"  '
        f"(or open {path.name} read-only in duckdb)"
    )
    return 0


def cmd_sql(a: argparse.Namespace) -> int:
    import duckdb

    # deferred: the pipeline, Dagster and their libraries load only when a command that needs them runs
    # (prove --help stays fast)
    from pipeline.corpus import sql

    if not a.query:
        return _views(a)
    try:
        cols, rows = sql.query(a.data_dir, a.query, include_failed=a.include_failed)
    except duckdb.Error as exc:
        print(f"prove sql: {exc}", file=sys.stderr)
        return 2
    if a.json:
        print_json([dict(zip(cols, r)) for r in rows])
        return 0
    print(table(cols, rows, a.width))
    return 0


def register(sub: Any) -> None:
    x = sub.add_parser(
        "sql",
        help="SQL over every corpus version (DuckDB views: examples, rejections, versions); "
        "versions that failed their quality gates are left out of examples and rejections unless --include-failed",
    )
    x.add_argument("query", nargs="?", help="a SQL query; without one, the views and their row counts")
    x.add_argument("--width", type=int, default=60, help="characters per cell")
    x.add_argument(
        "--include-failed",
        action="store_true",
        help="let the examples and rejections views read versions that failed their quality gates too",
    )
    x.add_argument("--json", action="store_true")
    x.add_argument("--data-dir", default="data")
    x.set_defaults(fn=cmd_sql)
