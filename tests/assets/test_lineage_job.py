"""``lineage_job``: a rejection's whole lineage on request in Dagster, from its id given in the launchpad."""

from __future__ import annotations

import dagster as dg
import polars as pl

from assets.definitions import make_definitions
from pipeline.core.config import BuildConfig
from tests.builds import build_run


def test_the_lineage_job_writes_a_rejections_story_as_its_output_and_names_an_unknown_id(tmp_path):
    data = tmp_path / "data"
    b = build_run(BuildConfig(examples=12, servers=["banking"], data_dir=str(data)), gates=False)
    rej = pl.read_parquet(b.corpus_path / "rejections.parquet").row(0, named=True)
    job = make_definitions(data_dir=str(data)).resolve_job_def("lineage_job")
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
