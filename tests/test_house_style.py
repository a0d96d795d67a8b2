"""The house style, checked by ruff as configured in pyproject.toml: the linter's rules and the formatter's layout."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).with_name("ruff")


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(RUFF), *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_check_finds_nothing():
    r = _ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]


def test_every_file_is_formatted_as_ruff_format_writes_it():
    r = _ruff("format", "--no-cache", "--check", ".")
    assert r.returncode == 0, "run `.venv/bin/ruff format .`:\n" + r.stdout[-4000:] + r.stderr[-2000:]


def test_the_style_check_sees_a_defect(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nx=1\n")
    r = subprocess.run(
        [str(RUFF), "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1 and "F401" in r.stdout
    r = subprocess.run(
        [str(RUFF), "format", "--no-cache", "--check", "--config", str(ROOT / "pyproject.toml"), str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1
