"""`prove build` through Dagster, run as a person runs it, in one small build over every built-in server and a broken
third-party one: it passes its gates, says which servers got what, goes on without the server it cannot use (and
says why), and talks to the person with one progress bar per phase and a short summary on the terminal, every
library's own output (warnings, Dagster's logs, worker output) in a log file under the data dir."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from servers.registry import available

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """The build's terminal output and its data dir."""
    tmp = tmp_path_factory.mktemp("cli_build")
    servers = tmp / "servers.yaml"
    garbage = (
        "  - name: garbage\n"
        "    kind: stdio\n"
        f"    command: {sys.executable}\n"
        "    args: ['-c', 'print(\"not json-rpc\"); import time; time.sleep(30)']\n"
        "    timeout_s: 3\n"
    )
    servers.write_text("servers:\n" + "".join(f"  - name: {s}\n" for s in available()) + garbage)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(tmp / "home"), "PYTHONWARNINGS": "always"}
    # 8 tool chains per server (the default plans 60 whatever the size): what is asserted does not depend on it
    (tmp / "build.yaml").write_text("chains:\n  per_server: 8\n")
    argv = ["build", "--config", str(tmp / "build.yaml"), "--servers-file", str(servers), "--examples", "40"]
    argv += ["--no-train", "--data-dir", str(tmp / "data")]
    p = subprocess.run(
        [sys.executable, "-m", "assets.cli", *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    # the terminal shows little by design: a failed build's story is in its log file
    logs = "\n".join(log.read_text(errors="replace")[-3000:] for log in (tmp / "data" / "logs").glob("*.log"))
    assert p.returncode == 0, f"exit {p.returncode}; terminal:\n{(p.stdout + p.stderr)[-3000:]}\nlog file:\n{logs}"
    return p, tmp / "data"


def test_a_small_build_over_all_builtin_servers_passes_its_gates_and_says_which_servers_got_what(built):
    p, _ = built
    assert "corpus_nonempty_per_server=pass" in p.stdout
    by_server = next(line for line in p.stdout.splitlines() if line.startswith("by server: "))
    assert all(f'"{s}"' in by_server for s in available()), by_server
    assert '"garbage"' not in by_server, by_server


def test_build_leaves_out_a_broken_server_and_records_why(built):
    p, data = built
    assert "garbage is left out" in p.stderr
    version = next(v for v in (data / "corpus").iterdir() if v.is_dir() and not v.name.startswith("."))
    examples = pl.concat([pl.read_parquet(version / f) for f in ("train.parquet", "eval.parquet")])
    assert set(examples["server"].to_list()) == set(available())
    rej = pl.read_parquet(version / "rejections.parquet").filter(pl.col("server") == "garbage")
    assert rej["reason"].to_list() == ["server_unavailable"]
    assert "per-server run failed" in rej["detail"][0]


def test_build_output_is_bars_and_a_short_summary_with_library_noise_in_a_log_file(built):
    p, data = built
    shown = p.stdout + p.stderr
    lines = [x for x in shown.splitlines() if x.strip()]
    bar_lines = [x for x in lines if re.match(r"^\s*\r?(synthesis|dedup|corpus)\s*:", x.split("\r")[-1])]
    assert len(lines) - len(bar_lines) < 25, shown
    for phase in ("synthesis", "dedup", "corpus"):
        assert any(x.split("\r")[-1].startswith(phase) for x in bar_lines), phase
    for noise in ("Warning", "DEBUG", "dagster - ", "Traceback"):
        assert noise not in shown, noise
    logs = list((data / "logs").glob("build-*.log"))
    assert len(logs) == 1 and logs[0].stat().st_size > 0, "library output is kept, in the log file"
    assert f"log:     {logs[0]}" in shown
    assert "quality gates: " in shown and "corpus v" in shown
