"""Atomic outputs: complete or absent, never half-written, never overwritten."""

from __future__ import annotations

import json

import pytest

from pipeline.core.storage import atomic_dir, atomic_write_json, atomic_write_text


def test_atomic_dir_publishes_only_a_completed_block(tmp_path):
    final = tmp_path / "corpus" / "v1"
    with atomic_dir(final) as stage:
        (stage / "a.txt").write_text("hello")
        assert not final.exists() and stage.name.startswith(".staging-")
    assert (final / "a.txt").read_text() == "hello"
    assert [p.name for p in final.parent.iterdir()] == ["v1"]


def test_atomic_dir_leaves_no_visible_version_when_the_block_raises(tmp_path):
    final = tmp_path / "corpus" / "v2"
    with pytest.raises(RuntimeError, match="boom"):
        with atomic_dir(final) as stage:
            (stage / "train.parquet").write_bytes(b"partial")
            raise RuntimeError("boom")
    assert not final.exists()
    assert list(final.parent.iterdir()) == []  # not even the staging directory


def test_atomic_dir_never_overwrites_an_existing_version(tmp_path):
    final = tmp_path / "v3"
    with atomic_dir(final) as stage:
        (stage / "x").write_text("first")
    with pytest.raises(FileExistsError):
        with atomic_dir(final) as stage:
            (stage / "x").write_text("second")
    assert (final / "x").read_text() == "first"


def test_atomic_write_replaces_whole_files_and_leaves_no_temp(tmp_path):
    p = tmp_path / "sub" / "m.json"
    atomic_write_json(p, {"b": 1, "a": [1, 2]})
    atomic_write_text(p, json.dumps({"c": 3}))
    assert json.loads(p.read_text()) == {"c": 3}
    assert [x.name for x in p.parent.iterdir()] == ["m.json"]
