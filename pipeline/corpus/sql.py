"""SQL over every corpus version: a small DuckDB file ``<data>/corpus/prove.duckdb`` of views.

Views (nothing is copied; they read the Parquet files of the complete versions in place):

* ``examples``: every example of every good version, with a ``version`` column;
* ``rejections``: every rejection of every good version, with a ``version`` column;
* ``versions``: one row per version (created_at, content_hash, examples, rejections, status), failed ones included.

A version whose quality gates failed (``status = 'failed'``) is left out of ``examples`` and
``rejections``; ``query(..., include_failed=True)`` (``prove sql --include-failed``) reads it too,
through views built in memory, so the shared file always shows the good versions only.

The file is rebuilt after each corpus write (and by ``prove sql``) into a temporary file that is
renamed into place, so a reader holding the old file open is never disturbed and never sees a
half-built one. Half-written (``.staging-*``) versions are never listed.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa

from pipeline.corpus.columns import EXAMPLE_ARROW_SCHEMA
from pipeline.corpus.store import REJECTION_SCHEMA, corpus_root, list_versions

if TYPE_CHECKING:
    import duckdb

DB_NAME = "prove.duckdb"
VIEWS = ("examples", "rejections", "versions")

_DUCK_TYPES = {pl.Utf8: "VARCHAR", pl.Int64: "BIGINT"}


def db_path(data_dir: str | Path) -> Path:
    return corpus_root(data_dir) / DB_NAME


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


_ARROW_DUCK = {pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.bool_(): "BOOLEAN"}


def _duck_type(t: Any) -> str:
    """DuckDB's name for a polars or Arrow column type (what an empty view's columns are cast to)."""
    if isinstance(t, pl.List):
        return _duck_type(t.inner) + "[]"
    if isinstance(t, pa.DataType):
        if isinstance(t, pa.BaseExtensionType):
            return "JSON" if t.extension_name == "arrow.json" else _duck_type(t.storage_type)
        if pa.types.is_list(t):
            return _duck_type(t.value_type) + "[]"
        if pa.types.is_struct(t):
            return "STRUCT(" + ", ".join(f'"{f.name}" {_duck_type(f.type)}' for f in t) + ")"
        return _ARROW_DUCK.get(t, "VARCHAR")
    return _DUCK_TYPES.get(t, "VARCHAR")


def _empty(schema: dict[str, Any]) -> str:
    cols = ", ".join(f'CAST(NULL AS {_duck_type(t)}) AS "{c}"' for c, t in schema.items())
    return f"SELECT {cols}, CAST(NULL AS VARCHAR) AS version WHERE false"


def _union(files: list[tuple[str, Path]], schema: dict[str, Any]) -> str:
    if not files:
        return _empty(schema)
    # one read per version so the version column is a literal, not parsed from a path
    parts = [f"SELECT *, {_quote(v)} AS version FROM read_parquet({_quote(str(p.resolve()))})" for v, p in files]
    return "\nUNION ALL BY NAME\n".join(parts)


def view_sql(data_dir: str | Path, include_failed: bool = False) -> dict[str, str]:
    """The ``CREATE VIEW`` body of each view, over the complete versions under ``data_dir``
    (``examples`` and ``rejections`` leave out versions that failed their gates unless ``include_failed``)."""
    versions = list_versions(data_dir)
    read = [v for v in versions if include_failed or v["status"] != "failed"]
    ex = [
        (v["version"], Path(v["path"]) / f)
        for v in read
        for f in ("train.parquet", "eval.parquet")
        if (Path(v["path"]) / f).exists()
    ]
    rj = [
        (v["version"], Path(v["path"]) / "rejections.parquet")
        for v in read
        if (Path(v["path"]) / "rejections.parquet").exists()
    ]
    rows = []
    for v in versions:
        m = json.loads((Path(v["path"]) / "manifest.json").read_text())
        rows.append(
            f"({_quote(v['version'])}, {_quote(str(m.get('created_at') or ''))}, "
            f"{_quote(str(m.get('content_hash') or ''))}, "
            f"{int(v['examples'])}, {int(v['rejections'])}, {_quote(str(Path(v['path']).resolve()))}, "
            f"{_quote(v['status'])})"
        )
    cols = "version, created_at, content_hash, examples, rejections, path, status"
    if rows:
        versions_sql = f"SELECT * FROM (VALUES {', '.join(rows)}) AS t({cols})"
    else:
        versions_sql = (
            "SELECT CAST(NULL AS VARCHAR) AS version, CAST(NULL AS VARCHAR) AS created_at, CAST(NULL AS "
            "VARCHAR) AS content_hash, "
            "CAST(NULL AS BIGINT) AS examples, CAST(NULL AS BIGINT) AS rejections, CAST(NULL AS VARCHAR) AS path, "
            "CAST(NULL AS VARCHAR) AS status WHERE false"
        )
    return {
        "examples": _union(ex, {f.name: f.type for f in EXAMPLE_ARROW_SCHEMA}),
        "rejections": _union(rj, REJECTION_SCHEMA),
        "versions": versions_sql,
    }


def refresh(data_dir: str | Path) -> Path:
    """(Re)build ``<data>/corpus/prove.duckdb`` with the views over all complete versions; returns its path."""
    target = db_path(data_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{DB_NAME}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    os.unlink(tmp)  # duckdb creates the file itself
    import duckdb  # here, not at the top: every Dagster process imports this module with the definitions

    try:
        con = duckdb.connect(tmp)
        try:
            for name, body in view_sql(data_dir).items():
                con.execute(f"CREATE VIEW {name} AS {body}")
        finally:
            con.close()
        os.replace(tmp, target)
    finally:
        for leftover in (tmp, tmp + ".wal"):
            if os.path.exists(leftover):
                os.unlink(leftover)
    return target


def connect(
    data_dir: str | Path, refresh_first: bool = True, include_failed: bool = False
) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the views (rebuilt first unless ``refresh_first`` is false); with
    ``include_failed``, an in-memory database whose views also read the versions that failed their gates."""
    import duckdb

    if include_failed:
        con = duckdb.connect(":memory:")
        for name, body in view_sql(data_dir, include_failed=True).items():
            con.execute(f"CREATE VIEW {name} AS {body}")
        return con
    path = refresh(data_dir) if refresh_first or not db_path(data_dir).exists() else db_path(data_dir)
    return duckdb.connect(str(path), read_only=True)


def query(
    data_dir: str | Path, sql: str, refresh_first: bool = True, include_failed: bool = False
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of one query over the views."""
    con = connect(data_dir, refresh_first, include_failed)
    try:
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description or []]
        return cols, cur.fetchall()
    finally:
        con.close()


def view_names(data_dir: str | Path, refresh_first: bool = True) -> list[str]:
    con = connect(data_dir, refresh_first)
    try:
        return sorted(r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall())
    finally:
        con.close()
