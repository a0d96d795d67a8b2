"""`prove build` talks to a person: one progress bar per phase and a short summary on the terminal,
every library's own output (warnings, Dagster's logs, worker output) in a log file under the data dir."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_build_output_is_bars_and_a_short_summary_with_library_noise_in_a_log_file(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(tmp_path / "home"), "PYTHONWARNINGS": "always"}
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "assets.cli",
            "build",
            "--examples",
            "30",
            "--servers",
            "banking,crm",
            "--no-train",
            "--data-dir",
            str(tmp_path / "data"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    # the terminal shows little by design: a failed build's story is in its log file
    logs = "\n".join(log.read_text(errors="replace")[-3000:] for log in (tmp_path / "data" / "logs").glob("*.log"))
    assert p.returncode == 0, f"exit {p.returncode}; terminal:\n{(p.stdout + p.stderr)[-3000:]}\nlog file:\n{logs}"
    shown = p.stdout + p.stderr
    lines = [x for x in shown.splitlines() if x.strip()]
    bar_lines = [x for x in lines if re.match(r"^\s*\r?(synthesis|dedup|corpus)\s*:", x.split("\r")[-1])]
    assert len(lines) - len(bar_lines) < 25, shown
    for phase in ("synthesis", "dedup", "corpus"):
        assert any(x.split("\r")[-1].startswith(phase) for x in bar_lines), phase
    for noise in ("Warning", "DEBUG", "dagster - ", "Traceback"):
        assert noise not in shown, noise
    logs = list((tmp_path / "data" / "logs").glob("build-*.log"))
    assert len(logs) == 1 and logs[0].stat().st_size > 0, "library output is kept, in the log file"
    assert f"log:     {logs[0]}" in shown
    assert "quality gates: " in shown and "corpus v" in shown
