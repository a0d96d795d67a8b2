"""Counts below one are refused, and a version whose blocking quality gates fail is kept but marked
failed: never the default of `corpus show`, `rejected` or `lineage`, flagged in `corpus list`, and
left out of the SQL views unless asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from assets.cli import main
from pipeline.core.config import BuildConfig
from pipeline.corpus.store import list_versions, resolve_version
from tests.builds import build_corpus


@pytest.mark.parametrize("count", ["-5", "0"])
def test_build_refuses_an_example_count_below_one_before_building(tmp_path, capsys, count):
    with pytest.raises(SystemExit) as exc:
        main(["build", "--examples", count, "--no-train", "--data-dir", str(tmp_path / "data")])
    assert exc.value.code == 2
    assert f"--examples: must be at least 1, got {int(count)}" in capsys.readouterr().err
    assert not (tmp_path / "data" / "corpus").exists()


def test_the_config_refuses_an_example_count_below_one_naming_the_field(tmp_path):
    with pytest.raises(ValidationError):
        BuildConfig(examples=0)
    f = tmp_path / "build.yaml"
    f.write_text("examples: -5\n")
    with pytest.raises(SystemExit) as exc:
        main(["build", "--config", str(f), "--no-train", "--data-dir", str(tmp_path / "data")])
    assert "examples: input should be greater than or equal to 1 (got -5)" in str(exc.value)
    assert not (tmp_path / "data" / "corpus").exists()


@pytest.fixture(scope="module")
def good_then_failed(tmp_path_factory):
    """A good version (built in process on an ephemeral Dagster instance), then `prove build` whose composition
    gate must fail."""
    root = tmp_path_factory.mktemp("gates")
    data = root / "data"
    good = build_corpus(BuildConfig(examples=20, servers=["banking"], data_dir=str(data)))
    mp = pytest.MonkeyPatch()
    mp.setenv("DAGSTER_HOME", str(root / "home"))
    mp.setenv("PROVE_COMPOSITION_TOLERANCE", "-1")
    try:
        rc = main(
            [
                "build",
                "--examples",
                "20",
                "--servers",
                "banking",
                "--no-train",
                "--parallel",
                "1",
                "--data-dir",
                str(data),
            ]
        )
    finally:
        mp.undo()
    failed = next(Path(v["path"]) for v in list_versions(data) if Path(v["path"]) != good)
    return data, good, failed, rc


def _run(capsys, *argv: str) -> tuple[int, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out + out.err


def test_a_version_that_fails_a_gate_is_kept_marked_failed_and_not_the_default(good_then_failed, capsys):
    data, good, failed, rc = good_then_failed
    assert rc == 1, "a build whose gate failed exits non-zero"
    assert failed.is_dir() and (failed / "train.parquet").exists(), "the failed version is kept"
    status = {v["version"]: (v["status"], v["failed_gates"]) for v in list_versions(data)}
    assert status == {good.name: ("ok", []), failed.name: ("failed", ["corpus_composition"])}
    assert resolve_version(data, None) == good and resolve_version(data, "latest") == good
    assert resolve_version(data, failed.name) == failed, "a failed version can still be read by name"
    assert (data / "corpus" / "LATEST").read_text() == good.name
    rc, out = _run(capsys, "corpus", "list", "--data-dir", str(data))
    line = next(x for x in out.splitlines() if x.startswith(failed.name))
    assert "FAILED gates: corpus_composition" in line
    assert "(latest)" in next(x for x in out.splitlines() if x.startswith(good.name))


def test_show_rejected_and_lineage_default_to_the_last_good_version(good_then_failed, capsys):
    data, good, failed, _ = good_then_failed
    rc, out = _run(capsys, "corpus", "show", "--json", "--data-dir", str(data))
    assert rc == 0 and json.loads(out)["version"] == good.name
    rc, out = _run(capsys, "rejected", "--data-dir", str(data))
    assert rc == 0 and f"rejections in {good.name}" in out
    import polars as pl

    shared = sorted(
        set(pl.read_parquet(good / "rejections.parquet")["rejection_id"])
        & set(pl.read_parquet(failed / "rejections.parquet")["rejection_id"])
    )
    assert shared, "the same config and seed reject the same records in both versions"
    rc, out = _run(capsys, "lineage", shared[0], "--json", "--data-dir", str(data))
    assert rc == 0 and json.loads(out)["version"] == good.name, (
        "an id in both versions resolves to the good one by default"
    )


def test_the_sql_views_leave_out_failed_versions_unless_asked(good_then_failed, capsys):
    data, good, failed, _ = good_then_failed
    rc, out = _run(capsys, "sql", "select distinct version from examples order by 1", "--json", "--data-dir", str(data))
    assert rc == 0 and [r["version"] for r in json.loads(out)] == [good.name]
    rc, out = _run(
        capsys,
        "sql",
        "select distinct version from examples order by 1",
        "--json",
        "--include-failed",
        "--data-dir",
        str(data),
    )
    assert rc == 0 and [r["version"] for r in json.loads(out)] == sorted([good.name, failed.name])
    rc, out = _run(
        capsys, "sql", "select version, status from versions order by created_at", "--json", "--data-dir", str(data)
    )
    assert json.loads(out) == [{"version": good.name, "status": "ok"}, {"version": failed.name, "status": "failed"}]
