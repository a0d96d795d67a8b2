"""`prove build --parallel N`: every server's partition is its own Dagster run, N at a time in worker processes."""

from __future__ import annotations

import json

import dagster as dg

from assets.cli import main
from pipeline.corpus.store import list_versions


def test_build_parallel_runs_each_server_partition_as_its_own_concurrent_run(tmp_path, monkeypatch, capsys):
    home = tmp_path / "dagster_home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    data = tmp_path / "data"
    rc = main(
        [
            "build",
            "--parallel",
            "2",
            "--examples",
            "30",
            "--servers",
            "banking,crm",
            "--no-train",
            "--data-dir",
            str(data),
        ]
    )
    out = capsys.readouterr()
    assert rc == 0, out.err

    versions = list_versions(data)
    assert len(versions) == 1 and versions[0]["servers"] == ["banking", "crm"]
    m = json.loads((data / "corpus" / versions[0]["version"] / "manifest.json").read_text())
    assert set(m["schema_hashes"]) == {"banking", "crm"}

    with dg.DagsterInstance.from_config(str(home)) as instance:
        records = instance.get_run_records()
        assert len(records) == 3 and all(r.dagster_run.status == dg.DagsterRunStatus.SUCCESS for r in records)
        par = [r for r in records if r.dagster_run.tags.get("prove/parallel") == "true"]
        assert sorted(r.dagster_run.tags["dagster/partition"] for r in par) == ["banking", "crm"]
        # the two partition runs were in flight at the same time
        (a, b) = sorted(par, key=lambda r: r.start_time)
        assert b.start_time < a.end_time
        # and each partition has its own materializations, with the schema hash as data version
        for s in ("banking", "crm"):
            rec = instance.get_latest_data_version_record(dg.AssetKey("server_snapshots"), partition_key=s)
            assert rec is not None and rec.asset_materialization.tags["dagster/data_version"] == m["schema_hashes"][s]
        assert instance.get_latest_materialization_event(dg.AssetKey("corpus")) is not None
