"""What writing the corpus's nested columns costs: one version's rows converted from the JSON texts the writer
holds (and hashes) to the nested Arrow table (``pipeline.corpus.columns.to_table``) and written, against writing
the flat JSON-text frame as versions did before. Prints JSON.

    .venv/bin/python bench/corpus_columns.py data/corpus/<version>
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from pipeline.corpus.columns import decode_row, to_table, tools_text
from pipeline.corpus.store import EXAMPLE_SCHEMA


def flat_rows(version: Path) -> list[dict]:
    """The version's rows as the writer holds them (nested columns as JSON text)."""
    rows = []
    for split in ("train", "eval"):
        for r in pq.read_table(version / f"{split}.parquet").to_pylist():
            d = decode_row(r)
            rows.append(
                {
                    **d,
                    "messages": json.dumps(d["messages"]),
                    "tools": tools_text(r["tools"]),
                    "reference": json.dumps(d["reference"]),
                    "trace": json.dumps(d["trace"]),
                    "setup": json.dumps(d["setup"]) if d["setup"] else None,
                }
            )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("version", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    df = pl.DataFrame(flat_rows(a.version), schema=EXAMPLE_SCHEMA)
    dicts = df.to_dicts()
    flat_s, nested_s = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.repeat):
            t = time.perf_counter()
            df.write_parquet(Path(tmp) / "flat.parquet")
            flat_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            pq.write_table(to_table(dicts), Path(tmp) / "nested.parquet", compression="zstd")
            nested_s.append(time.perf_counter() - t)
        sizes = {f: (Path(tmp) / f"{f}.parquet").stat().st_size for f in ("flat", "nested")}
    print(
        json.dumps(
            {
                "examples": df.height,
                "flat_write_s": round(min(flat_s), 3),
                "nested_convert_and_write_s": round(min(nested_s), 3),
                "flat_bytes": sizes["flat"],
                "nested_bytes": sizes["nested"],
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
