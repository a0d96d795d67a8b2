"""`prove build --config FILE`: what the file can say, what wins over it, and clear errors for bad files."""

from __future__ import annotations

import argparse

import pytest

from assets.cli import _build_config


def _args(**kw) -> argparse.Namespace:
    base = {"config": None, "examples": None, "servers": None, "servers_file": None, "data_dir": None}
    base.update(kw)
    return argparse.Namespace(**base)


def test_the_config_file_sets_the_stage_parameters_and_its_data_dir(tmp_path):
    f = tmp_path / "build.yaml"
    f.write_text(
        f"examples: 300\ndata_dir: {tmp_path / 'elsewhere'}\n"
        "probe:\n  refresh_every: 50\nsimulate:\n  recovery_rate: 0.0\n"
    )
    cfg = _build_config(_args(config=str(f)))
    assert cfg.examples == 300 and cfg.probe.refresh_every == 50 and cfg.simulate.recovery_rate == 0.0
    assert cfg.data_dir == str(tmp_path / "elsewhere"), "without --data-dir the file's data_dir is used"
    cfg = _build_config(_args(config=str(f), data_dir="flagged", examples=40))
    assert cfg.data_dir == "flagged" and cfg.examples == 40, "flags win over the file"
    assert _build_config(_args()).data_dir == "data"


@pytest.mark.parametrize(
    "text, named",
    [
        ("exampels: 300\n", "exampels"),
        ("probe:\n  refresh_evry: 10\n", "refresh_evry"),
        ("chains:\n  min_len: 4\n  max_len: 3\n", "max_len"),
        ("simulate:\n  recovery_rate: 2\n", "recovery_rate"),
    ],
)
def test_a_bad_config_file_is_refused_with_the_offending_key_named(tmp_path, text, named):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(SystemExit) as exc:
        _build_config(_args(config=str(f)))
    assert "invalid build configuration" in str(exc.value) and named in str(exc.value)
