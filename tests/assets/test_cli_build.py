"""`prove build` through Dagster goes on when one server cannot be used."""

import sys

import polars as pl

from assets.cli import main


def test_build_leaves_out_a_broken_server_and_records_why(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    servers = tmp_path / "servers.yaml"
    servers.write_text(
        "servers:\n"
        "  - name: banking\n"
        "  - name: garbage\n"
        "    kind: stdio\n"
        f"    command: {sys.executable}\n"
        "    args: ['-c', 'print(\"not json-rpc\"); import time; time.sleep(30)']\n"
        "    timeout_s: 3\n"
    )
    code = main(
        [
            "build",
            "--servers-file",
            str(servers),
            "--examples",
            "20",
            "--no-train",
            "--data-dir",
            str(tmp_path / "data"),
        ]
    )
    out = capsys.readouterr()
    assert code == 0, out.err[-2000:]
    assert "garbage is left out" in out.err
    version = next(p for p in (tmp_path / "data" / "corpus").iterdir() if p.is_dir() and not p.name.startswith("."))
    examples = pl.concat([pl.read_parquet(version / f) for f in ("train.parquet", "eval.parquet")])
    assert set(examples["server"].to_list()) == {"banking"}
    rej = pl.read_parquet(version / "rejections.parquet").filter(pl.col("server") == "garbage")
    assert rej["reason"].to_list() == ["server_unavailable"]
    assert "per-server run failed" in rej["detail"][0]


def test_a_small_build_over_all_builtin_servers_passes_its_gates_and_says_which_servers_got_what(
    tmp_path, monkeypatch, capsys
):
    from servers.registry import available

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    code = main(["build", "--examples", "40", "--no-train", "--data-dir", str(tmp_path / "data")])
    out = capsys.readouterr()
    assert code == 0, out.err[-2000:]
    assert "corpus_nonempty_per_server=pass" in out.out
    by_server = next(line for line in out.out.splitlines() if line.startswith("by server: "))
    assert all(f'"{s}"' in by_server for s in available()), by_server
