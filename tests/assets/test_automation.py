"""Dagster as the control room: the automation runs the build the team chose (``$PROVE_AUTOMATION``), and a changed
tool schema reaches a new corpus version with no one launching anything.

The daemon's part is played here tick by tick: each schedule or sensor tick is evaluated as the daemon evaluates it,
and each run it asks for is executed with the config and tags it asked for, on one instance whose run records the
next tick reads."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sys
from contextlib import ExitStack
from pathlib import Path
from types import SimpleNamespace

import dagster as dg
import pytest
import yaml

from assets import automation as A
from assets.automated_build import AutomatedBuild, automated_build
from assets.definitions import make_definitions, resources
from assets.resources import ensure_partitions
from pipeline.corpus.store import list_versions

ROOT = Path(__file__).resolve().parents[2]
# 8 tool chains per server (the default plans 60 whatever the size): nothing asserted here depends on it
BUILD = {"servers": ["banking", "crm", "calendar"], "examples": 40, "chains": {"per_server": 8}}


def _automation(tmp_path: Path, **extra) -> Path:
    (tmp_path / "build.yaml").write_text(yaml.safe_dump({**BUILD, "seed": 7}))
    f = tmp_path / "automation.yaml"
    f.write_text(yaml.safe_dump({"build": "build.yaml", "train": False, "data_dir": "data", **extra}))
    return f


def _context_resources(build: AutomatedBuild) -> dict:
    res = resources(build_config=build.config, train=build.train)
    return {"settings": res["settings"], "training": res["training"]}


def _tick(
    schedule_or_sensor, instance: dg.DagsterInstance, build: AutomatedBuild, cursor: str | None = None, when=None
):
    """One tick, as the daemon evaluates it: the run requests (and a sensor's cursor)."""
    res = _context_resources(build)
    if isinstance(schedule_or_sensor, dg.ScheduleDefinition):
        ctx = dg.build_schedule_context(instance=instance, scheduled_execution_time=when, resources=res)
        return SimpleNamespace(run_requests=list(schedule_or_sensor(ctx)), cursor=None)
    out = schedule_or_sensor(dg.build_sensor_context(instance=instance, cursor=cursor, resources=res))
    if isinstance(out, dg.SensorResult):
        return SimpleNamespace(run_requests=list(out.run_requests or []), cursor=out.cursor)
    return SimpleNamespace(run_requests=[r for r in out if isinstance(r, dg.RunRequest)], cursor=cursor)


def _launchpad(job) -> dict:
    """The config a job's launchpad starts from (a partitioned job's: its first server's)."""
    if job.partitioned_config is not None:
        return job.partitioned_config.get_run_config_for_partition_key("banking")
    return job.config_mapping.config_schema.as_field().default_value


def _run(defs: dg.Definitions, job: str, request: dg.RunRequest, instance: dg.DagsterInstance):
    """What the daemon does with a run request: a run of ``job`` with the request's config and tags."""
    tags = dict(request.tags)
    return defs.resolve_job_def(job).execute_in_process(
        run_config=request.run_config, tags=tags, partition_key=request.partition_key, instance=instance
    )


def test_the_automation_file_is_the_build_of_every_launchpad_schedule_tick_and_sensor_tick(tmp_path, monkeypatch):
    with ExitStack() as stack:
        _launchpads_and_ticks(tmp_path, monkeypatch, stack)


def _launchpads_and_ticks(tmp_path, monkeypatch, stack):
    monkeypatch.setenv("PROVE_AUTOMATION", str(_automation(tmp_path)))
    build = automated_build()
    assert build.config.servers == BUILD["servers"] and build.config.examples == 40 and build.config.seed == 7
    assert build.config.data_dir == str(tmp_path / "data") and build.train is False
    defs = make_definitions(build=build)
    expected = build.run_config()
    # the launchpads of both jobs start from that build, typed
    for job in ("server_job", "corpus_job"):
        shown = _launchpad(defs.resolve_job_def(job))["resources"]
        assert shown["settings"] == expected["resources"]["settings"], job
        assert shown["training"]["config"]["train"] is False, job
    instance = stack.enter_context(dg.instance_for_test())
    # a schedule tick: every server of the build re-probed, each run with exactly that configuration
    sched = A.regeneration_schedule()
    result = _tick(sched, instance, build, when=dt.datetime(2026, 11, 30, 3, 0))
    assert sorted(r.partition_key for r in result.run_requests) == sorted(BUILD["servers"])
    assert all(r.run_config == expected for r in result.run_requests)
    assert set(instance.get_dynamic_partitions("servers")) == set(BUILD["servers"])
    # a sensor tick on an instance that has seen none of them: the same build
    sensed = _tick(A.schema_change_sensor, stack.enter_context(dg.instance_for_test()), build)
    assert sorted(r.partition_key for r in sensed.run_requests) == sorted(BUILD["servers"])
    assert all(r.run_config == expected for r in sensed.run_requests)
    # the instance's run record of a launched run keeps that configuration
    first = next(r for r in result.run_requests if r.partition_key == "banking")
    assert _run(defs, "server_job", first, instance).success
    (record,) = instance.get_run_records(filters=dg.RunsFilter(job_name="server_job"))
    assert record.dagster_run.run_config["resources"] == expected["resources"]
    assert record.dagster_run.tags["prove/trigger"] == "regeneration" and record.dagster_run.tags["prove/batch"]


def test_a_bad_automation_file_is_named_with_its_problem(tmp_path):
    bad = tmp_path / "automation.yaml"
    bad.write_text("train: perhaps\nservers: banking\n")
    with pytest.raises(ValueError, match=r"(?s)PROVE_AUTOMATION: .*automation.yaml:\n  servers: .*\n  train: "):
        automated_build(bad)


def test_a_changed_tool_schema_reaches_a_new_corpus_version_with_no_one_launching_anything(tmp_path):
    """A stdio server of the build gains a tool; the sensor sees it, re-runs that server, and the corpus follows."""
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    for script in ("shelf_server.py", "prefork.py"):  # the fixture, and the suite's quick start it imports
        shutil.copy(ROOT / "tests" / "thirdparty" / script, shelf)
    (tmp_path / "servers.yaml").write_text(
        yaml.safe_dump(
            {
                "servers": [
                    {
                        "name": "shelf",
                        "kind": "stdio",
                        "command": sys.executable,
                        "args": ["shelf_server.py"],
                        "cwd": str(shelf),
                        "isolation": "none",
                        "reset_tool": "reset_shelf",
                    }
                ]
            }
        )
    )
    build = automated_build(
        _automation(tmp_path, servers_file="servers.yaml", servers=["banking", "shelf"], examples=12)
    )
    defs = make_definitions(build=build)
    with dg.instance_for_test() as instance:
        ensure_partitions(instance, ["banking", "shelf"])
        _change_reaches_the_corpus(shelf, build, defs, instance)


def _change_reaches_the_corpus(shelf: Path, build: AutomatedBuild, defs: dg.Definitions, instance) -> None:

    def follow() -> Path:
        """The follow-up sensor's tick and the corpus run it asks for; the version that run wrote."""
        (req,) = _tick(A.corpus_after_changes, instance, build).run_requests
        assert req.run_config["resources"]["training"]["config"]["train"] is False
        r = _run(defs, "corpus_job", req, instance)
        assert r.success, [e.message for e in r.all_events if e.is_failure]
        return Path(list_versions(build.config.data_dir)[-1]["path"])

    # the weekly regeneration: both servers, then the corpus from them
    for req in _tick(A.regeneration_schedule(), instance, build, when=dt.datetime(2026, 11, 30, 3, 0)).run_requests:
        assert _run(defs, "server_job", req, instance).success
    v1 = follow()
    assert not _tick(A.corpus_after_changes, instance, build).run_requests, "a batch is followed once"
    quiet = _tick(A.schema_change_sensor, instance, build)
    assert not quiet.run_requests, "nothing changed since the build"

    (shelf / "FEATURES").write_text("labels\n")  # the server now offers label_book
    changed = _tick(A.schema_change_sensor, instance, build, cursor=quiet.cursor)
    assert [r.partition_key for r in changed.run_requests] == ["shelf"]
    assert _run(defs, "server_job", changed.run_requests[0], instance).success
    v2 = follow()
    m1, m2 = (json.loads((v / "manifest.json").read_text()) for v in (v1, v2))
    assert v2 != v1 and m2["schema_hashes"]["shelf"] != m1["schema_hashes"]["shelf"]
    assert m2["schema_hashes"]["banking"] == m1["schema_hashes"]["banking"]
    assert m2["tool_coverage"]["shelf"]["tools"] == m1["tool_coverage"]["shelf"]["tools"] + 1  # label_book
