"""``lineage_job``: a rejection's whole lineage on request in Dagster, from its id given in the launchpad."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import polars as pl

from assets.definitions import defs, make_definitions
from assets.lineage import RECORD_ID
from pipeline.core.config import BuildConfig
from tests.builds import build_run


def test_the_lineage_job_writes_a_rejections_story_as_its_output_and_names_an_unknown_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a data dir relative to the working directory, as prove build's default is
    b = build_run(BuildConfig(examples=12, servers=["banking"], data_dir="data"), gates=False)
    rej = pl.read_parquet(b.corpus_path / "rejections.parquet").row(0, named=True)
    job = make_definitions(data_dir="data").resolve_job_def("lineage_job")
    instance = dg.DagsterInstance.ephemeral()

    def run(record_id: str):
        config = {"ops": {"look_up_lineage": {"config": {"record_id": record_id}}}}
        return job.execute_in_process(run_config=config, instance=instance, raise_on_error=False)

    r = run(rej["rejection_id"])
    assert r.success
    out = next(e for e in r.all_events if e.event_type_value == "STEP_OUTPUT")
    story = out.step_output_data.metadata["lineage"].value
    assert f"**{rej['rejection_id']}** on `banking`: rule `{rej['stage']}/{rej['reason']}`" in story
    assert "The same from the command line" in story
    missing = run("rej-nothing")
    assert not missing.success
    failure = next(e for e in missing.all_events if e.is_step_failure)
    assert "no rejection or example 'rej-nothing' in any corpus version under" in str(failure.event_specific_data)

    # every path in the build's asset metadata is absolute, though the build's data dir was relative
    paths = [
        (key.to_user_string(), label, value.value)
        for key in b.instance.get_asset_keys()
        for ev in [b.instance.get_latest_materialization_event(key)]
        if ev is not None
        for label, value in ev.asset_materialization.metadata.items()
        if isinstance(value, dg.PathMetadataValue)
    ]
    assert {(a, label) for a, label, _ in paths} >= {("corpus", "path"), ("corpus", "duckdb")}
    for asset, label, value in paths:
        assert Path(value).is_absolute() and Path(value).exists(), (asset, label, value)


def test_the_lineage_jobs_launchpad_opens_valid_and_a_run_without_an_id_says_what_to_enter():
    job = defs.resolve_job_def("lineage_job")
    shown = job.config_mapping.config_schema.as_field().default_value  # what the launchpad opens on
    assert shown["ops"]["look_up_lineage"]["config"]["record_id"] == ""
    assert dg.validate_run_config(job, shown) and dg.validate_run_config(job, {})  # nothing missing
    r = job.execute_in_process(instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    assert not r.success
    failure = next(e for e in r.all_events if e.is_step_failure)
    message = failure.step_failure_data.error.message
    assert f"no record id given: enter a rejection id (rej-...), an example id or a conversation id as {RECORD_ID}" in (
        message
    )
    assert RECORD_ID == "ops.look_up_lineage.config.record_id"
