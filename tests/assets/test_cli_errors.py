"""The CLI with bad or unusual input, as a new user drives it: one clear line, no traceback, and
`prove reward` reading the corpus's own layout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from assets.cli import main
from pipeline.core.config import BuildConfig
from pipeline.corpus.columns import reference_of, trace_of
from tests.builds import build_corpus

ROOT = Path(__file__).resolve().parents[2]


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_serving_an_unknown_server_is_one_line_exit_2_without_a_traceback():
    p = subprocess.run(
        [sys.executable, "-m", "assets.cli", "servers", "serve", "nosuch"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert "unknown server 'nosuch'" in p.stderr and "banking" in p.stderr


@pytest.fixture(scope="module")
def banking_version(tmp_path_factory):
    data = tmp_path_factory.mktemp("cli") / "data"
    path = build_corpus(BuildConfig(examples=20, servers=["banking"], data_dir=str(data)))
    return data, path


def test_rejected_with_an_unknown_reason_lists_the_reasons_that_exist(banking_version, capsys):
    data, path = banking_version
    reasons = pl.read_parquet(path / "rejections.parquet")["reason"].unique().to_list()
    rc, out, err = _run(capsys, "rejected", "--reason", "nosuch", "--data-dir", str(data))
    assert rc == 1 and "has reason 'nosuch'" in err
    assert reasons and all(r in err for r in reasons)


def _corpus_lines(path: Path, with_ok: bool) -> list[dict]:
    df = pl.read_parquet(path / "train.parquet").filter(pl.col("kind") == "multi_turn")
    # conversations whose reference calls all succeeded when replayed (a reference may end in a named failure)
    rows = [r for r in df.iter_rows(named=True) if all(t["ok"] for t in trace_of(r["trace"]) if t.get("reference"))][:3]
    assert len(rows) == 3
    lines = []
    for row in rows:
        ref = reference_of(row["reference"])
        calls = [
            [{"name": c["name"], "arguments": c["arguments"], **({"ok": True} if with_ok else {})} for c in turn]
            for turn in ref
        ]
        lines.append({**row, "calls": calls})  # a corpus row as it is, with the model's calls added
    return lines


def _write(tmp_path: Path, name: str, rows: list[dict]) -> str:
    p = tmp_path / name
    p.write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))
    return str(p)


def test_reward_scores_corpus_rows_in_their_per_turn_layout_flat_and_per_turn(banking_version, tmp_path, capsys):
    _, path = banking_version
    f = _write(tmp_path, "rows.jsonl", _corpus_lines(path, with_ok=True))
    for extra in ([], ["--per-turn"]):
        rc, out, err = _run(capsys, "reward", f, *extra)
        assert rc == 0, err
        rows = [json.loads(x) for x in out.splitlines()]
        assert len(rows) == 3 and all(r["total"] == pytest.approx(1.3) and r["coverage"] == 1.0 for r in rows), rows
        assert "-0.0" not in out


def test_reward_executes_calls_live_and_matches_the_state_per_turn(banking_version, tmp_path, capsys):
    _, path = banking_version
    f = _write(tmp_path, "live.jsonl", _corpus_lines(path, with_ok=False))
    rc, _, err = _run(capsys, "reward", f)
    assert rc == 2 and "pass --server NAME" in err and "calls[0][0].ok" in err
    rc, out, err = _run(capsys, "reward", f, "--server", "banking", "--state-weight", "0.5", "--per-turn")
    assert rc == 0, err
    rows = [json.loads(x) for x in out.splitlines()]
    assert all(r["state"] == 1.0 and r["total"] == pytest.approx(1.3 + 0.5) for r in rows), rows


def test_reward_on_an_empty_file_is_an_error(tmp_path, capsys):
    f = tmp_path / "empty.jsonl"
    f.write_text("\n")
    rc, out, err = _run(capsys, "reward", str(f))
    assert rc == 2 and out == "" and "no trajectories" in err


def test_reward_never_prints_a_negative_zero(tmp_path, capsys):
    tool = {"name": "get_balance", "parameters": {"type": "object", "properties": {"account_id": {"type": "string"}}}}
    f = _write(
        tmp_path,
        "z.jsonl",
        [
            {
                "tools": [tool],
                "reference": [{"name": "get_balance", "arguments": {"account_id": "A"}}],
                "calls": [{"name": "get_balance", "arguments": {"account_id": "A"}, "ok": True}],
            }
        ],
    )
    rc, out, _ = _run(capsys, "reward", f)
    assert rc == 0 and json.loads(out)["efficiency"] == 0.0 and "-0.0" not in out


def test_reward_help_documents_the_input_format(capsys):
    with pytest.raises(SystemExit):
        main(["reward", "--help"])
    out = capsys.readouterr().out
    for word in (
        '"tools"',
        '"reference"',
        '"calls"',
        '"ok"',
        "--server",
        "per-turn layout",
        "--state-weight",
        "--per-turn",
    ):
        assert word in out, word
