"""`prove reward FILE.jsonl` prints the values PAPER.md section 3's formulas give on worked cases."""

import json
from pathlib import Path

import pytest

from assets.cli import main

CASES = Path(__file__).resolve().parent.parent / "data" / "reward_cases.jsonl"
# (validity, coverage, efficiency, name, args, total), computed by hand from the formulas
EXPECTED = [
    (1.0, 1.0, 0.0, 1.0, 1.0, 0.5 + 0.5 + 0.2 + 0.1),  # all correct: maximum on the 4 positive terms
    (1 / 3, 0.0, 0.0, 1.0, 0.0, 0.5 / 3 + 0.2),  # name right, required param missing
    (2 / 3, 1.0, 0.0, 1.0, 1.0, 0.5 * 2 / 3 + 0.5 + 0.2 + 0.1),  # structure right, execution failed
    (1.0, 1.0, -0.5 * 2 / 6, 1.0, 1.0, 0.5 + 0.5 - 0.15 * 0.5 * 2 / 6 + 0.2 + 0.1),  # 8 calls, budget 6
    (None, None, None, None, None, 1.0),  # abstention
]


def test_prove_reward_prints_the_paper_values_for_worked_cases(capsys):
    assert main(["reward", str(CASES)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(rows) == len(EXPECTED)
    for row, exp in zip(rows, EXPECTED):
        for key, want in zip(["validity", "coverage", "efficiency", "name", "args", "total"], exp):
            if want is not None:
                assert row[key] == pytest.approx(want, abs=1e-9), (key, row)


def test_prove_reward_names_the_bad_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(CASES.read_text().splitlines()[0] + "\n" + '{"tools": [], "calls": []}\n')
    assert main(["reward", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "2" in err and "reference" in err
