"""The automation as a user drives it in the UI, against the test webserver and its real daemon.

A schedule tick launched from the schedule's page ("Preview tick result", then "Launch all & commit tick result")
re-probes the servers of the automated build (``$PROVE_AUTOMATION``: banking and crm, 30 examples, no training) in
``server_job`` runs carrying exactly that build. Switching ``corpus_after_changes`` on in the UI lets the daemon's
own tick follow that batch with a ``corpus_job`` run, the same build again: a second corpus version. The assets'
Plots then show the corpus counts over the two versions, and the policy's eval rewards over two trained versions.
Last, a ``server_job`` partition launched from its launchpad's "Launch run" button completes.

This file runs after ``test_browser.py`` and ``test_webserver.py`` on the same webserver (``tests/conftest.py``):
it adds runs and versions those files' "latest" assertions must not see. With PROVE_UPDATE_SCREENSHOT=1 the Plots
test refreshes ``docs/dagster-plots.png``.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass

import pytest
import yaml

from assets.automated_build import automated_build
from tests.assets.conftest import (
    FINISHED,
    LOCATION,
    REPOSITORY,
    ROOT,
    SERVERS,
    DagsterUI,
    launch,
    run_failure_messages,
    wait_for_runs,
)
from tests.builds import TINY_TRAINING

pytestmark = pytest.mark.timeout(1800)

RUNS = """
query($tags: [ExecutionTag!]) {
  runsOrError(filter: {tags: $tags}) {
    ... on Runs { results { runId jobName status runConfigYaml tags { key value } } }
  }
}"""
MATERIALIZATIONS = """
query($key: AssetKeyInput!) {
  assetOrError(assetKey: $key) {
    ... on Asset { assetMaterializations(limit: 5) { runId metadataEntries { label __typename
      ... on IntMetadataEntry { intValue } ... on FloatMetadataEntry { floatValue }
      ... on JsonMetadataEntry { jsonString } } } }
  }
}"""
SENSOR_TIMEOUT_S = 600  # a loaded machine; on an idle one each wait takes seconds
DOCS_PLOTS = "docs/dagster-plots.png"


def _runs(ui: DagsterUI, **tags: str) -> list[dict]:
    found = ui.graphql(RUNS, {"tags": [{"key": k, "value": v} for k, v in tags.items()]})["runsOrError"]["results"]
    for r in found:
        r["tags"] = {t["key"]: t["value"] for t in r["tags"]}
        # as JSON has it (YAML reads an unquoted 2026-03-02 as a date)
        r["config"] = json.loads(json.dumps(yaml.safe_load(r["runConfigYaml"]) or {}, default=str))
    return found


def _expected_config(ui: DagsterUI) -> dict:
    """The run config of the test webserver's automated build, as the automation computes it."""
    return automated_build(ui.home.parent / "automation.yaml").run_config()


@dataclass
class Tick:
    batch: str
    runs: list[dict]


@pytest.fixture(scope="module")
def schedule_tick(chromium, browser, dagster_ui) -> Tick:
    """weekly_regeneration's tick, previewed and launched from its page in the UI; its runs waited for."""
    ui = dagster_ui
    ui.graphql("mutation { setNuxSeen }")
    ctx = browser.new_context(viewport={"width": 1600, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(60_000)
    try:
        pg.goto(f"{ui.url}/locations/{REPOSITORY}@{LOCATION}/schedules/weekly_regeneration")
        pg.get_by_text("Preview tick result").first.click()
        dialog = pg.get_by_role("dialog")
        dialog.get_by_role("button", name="Continue").click()
        dialog.get_by_text(f"{len(SERVERS)} run requests").wait_for()
        # each request's config and tags, as the dialog shows them: the automated build's, and the request's partition
        # (Dagster's table lists the requests by job name alone)
        partitions = []
        for i in range(len(SERVERS)):
            dialog.locator("tbody tr").nth(i).get_by_role("button").click()
            shown = pg.get_by_role("dialog").filter(has_text="Run configuration")
            shown.get_by_text("examples: 30").wait_for()
            # the whole config (CodeMirror draws only the lines in view)
            text = shown.inner_text() + shown.locator(".CodeMirror").first.evaluate("e => e.CodeMirror.getValue()")
            for said in ("prove/trigger: regeneration", "examples: 30", "- banking", "- crm", "train: false"):
                assert said in text, f"{said!r} not in the previewed request:\n{text[:3000]}"
            part = re.search(r"(?:dagster/)?partition: ?(\w+)", text)  # the dialog drops the dagster/ prefix
            assert part and re.search(f"prove/server: ?{part.group(1)}", text), (
                f"the previewed request does not name its partition:\n{text[:3000]}"
            )
            partitions.append(part.group(1))
            shown.get_by_role("button", name="OK").click()
        assert sorted(partitions) == sorted(SERVERS), partitions
        pg.get_by_role("button", name="Launch all & commit tick result").click()
        pg.get_by_text(f"Launched {len(SERVERS)} runs").first.wait_for()
    finally:
        ctx.close()
    runs = _runs(ui, **{"prove/trigger": "regeneration"})
    assert len(runs) == len(SERVERS), [(r["jobName"], r["tags"]) for r in runs]
    status = wait_for_runs(ui, [r["runId"] for r in runs], timeout=SENSOR_TIMEOUT_S)
    for r in runs:
        assert status[r["runId"]] == "SUCCESS", f"{r['runId']}:\n{run_failure_messages(ui, r['runId'])}"
    return Tick(batch=runs[0]["tags"]["prove/batch"], runs=runs)


def test_a_schedule_tick_launched_in_the_ui_reprobes_the_automated_builds_servers(dagster_ui, schedule_tick):
    """Each server of the automated build gets a server_job run whose recorded config is exactly that build."""
    expected = _expected_config(dagster_ui)
    assert expected["resources"]["settings"]["config"]["build"]["examples"] == 30
    assert sorted(r["tags"]["dagster/partition"] for r in schedule_tick.runs) == sorted(SERVERS)
    for r in schedule_tick.runs:
        assert r["jobName"] == "server_job", r["jobName"]
        assert r["config"] == expected, f"run {r['runId']} ran another build:\n{json.dumps(r['config'])[:2000]}"
        assert r["tags"]["dagster/schedule_name"] == "weekly_regeneration"
        assert r["tags"]["prove/batch"] == schedule_tick.batch


@pytest.fixture(scope="module")
def followed(chromium, browser, dagster_ui, materialized_through_ui, schedule_tick) -> dict:
    """corpus_after_changes switched on from its page; the corpus_job run the daemon's tick launched, finished.
    The sensor is switched off again afterwards."""
    ui = dagster_ui
    ctx = browser.new_context(viewport={"width": 1600, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(60_000)
    try:
        pg.goto(f"{ui.url}/locations/{REPOSITORY}@{LOCATION}/sensors/corpus_after_changes")
        row = pg.locator("tr").filter(has_text="Running")
        row.locator("label").first.click()  # the switch
        assert row.locator("input[type=checkbox]").first.is_checked(), "the sensor's switch did not turn on"
        deadline = time.monotonic() + SENSOR_TIMEOUT_S
        runs: list[dict] = []
        while time.monotonic() < deadline:
            runs = _runs(ui, **{"prove/batch": schedule_tick.batch, "prove/automation": "true"})
            runs = [r for r in runs if r["jobName"] == "corpus_job"]
            if runs and runs[0]["status"] in FINISHED:
                break
            time.sleep(1)
        assert runs, f"no corpus_job run for {schedule_tick.batch} within {SENSOR_TIMEOUT_S}s\n{ui.logs_tail()}"
        row.locator("label").first.click()
    finally:
        ctx.close()
    run = runs[0]
    assert run["status"] == "SUCCESS", f"{run['runId']} {run['status']}:\n{run_failure_messages(ui, run['runId'])}"
    return run


def test_the_sensor_switched_on_in_the_ui_makes_the_corpus_from_that_batch(dagster_ui, followed):
    """The daemon's tick launches one corpus_job run for the batch, with the same build, and a new version."""
    ui = dagster_ui
    assert len(_runs(ui, **{"prove/batch": followed["tags"]["prove/batch"]})) == len(SERVERS) + 1
    assert followed["config"] == _expected_config(ui), json.dumps(followed["config"])[:2000]
    assert followed["tags"]["prove/trigger"] == "regeneration"
    assert "dagster/sensor_name" in followed["tags"] and followed["tags"]["dagster/sensor_name"] == (
        "corpus_after_changes"
    )
    mats = ui.graphql(MATERIALIZATIONS, {"key": {"path": ["corpus"]}})["assetOrError"]["assetMaterializations"]
    assert mats[0]["runId"] == followed["runId"], "the latest corpus is not the sensor run's"
    versions = [p for p in (ui.data_dir / "corpus").iterdir() if p.is_dir()]
    assert len(versions) >= 2, versions


def _numbers(entries: list[dict]) -> dict[str, float]:
    return {
        e["label"]: e.get("intValue", e.get("floatValue"))
        for e in entries
        if e["__typename"] in ("IntMetadataEntry", "FloatMetadataEntry")
    }


def _plot_titles(pg, ui: DagsterUI, asset: str) -> str:
    pg.goto(f"{ui.url}/assets/{asset}")
    pg.get_by_text("Plots", exact=True).first.click()
    pg.locator("canvas").first.wait_for(timeout=120_000)  # a chart: the plots are drawn
    return pg.inner_text("body")


def test_plots_show_corpus_counts_and_eval_rewards_across_versions(page, dagster_ui, followed, tmp_path):
    """Two corpus versions (the UI's materialization and the sensor's) and two trained policies: their counts and
    eval rewards are numeric metadata, so the assets' Plots draw them over the versions."""
    ui, pg = dagster_ui, page
    trained = []
    params = {**TINY_TRAINING, "grpo_steps": 1, "eval_limit": 2}  # each phase's reward, not a larger sample of it
    for seed in (0, 1):  # two policy versions, trained on the latest corpus
        config = {
            "resources": {"training": {"config": {"train": True, "params": {**params, "seed": seed}}}},
            # two held-out items and one BFCL entry: the plots need each number, not a larger sample of it
            "ops": {"policy_eval": {"config": {"bfcl_categories": ["base"], "bfcl_limit": 1, "heldout_limit": 2}}},
        }
        rid = launch(ui, ["grpo_policy", "policy_eval"], config, {"prove/build": "plots-test"})
        status = wait_for_runs(ui, [rid], timeout=SENSOR_TIMEOUT_S)
        assert status[rid] == "SUCCESS", run_failure_messages(ui, rid)
        trained.append(rid)

    corpus = ui.graphql(MATERIALIZATIONS, {"key": {"path": ["corpus"]}})["assetOrError"]["assetMaterializations"]
    policy = ui.graphql(MATERIALIZATIONS, {"key": {"path": ["grpo_policy"]}})["assetOrError"]["assetMaterializations"]
    assert len(corpus) >= 2 and [m["runId"] for m in policy[:2]] == trained[::-1]
    for m in corpus[:2]:
        nums = _numbers(m["metadataEntries"])
        assert nums.get("examples", 0) > 0 and "rejections" in nums, sorted(nums)
    for m in policy[:2]:
        nums = _numbers(m["metadataEntries"])
        for phase in ("before", "after_sft", "after_grpo"):
            assert f"eval_{phase}_reward" in nums, sorted(nums)

    # each policy scored by policy_eval on the same suites: the same frozen held-out items, the same BFCL entries
    scored = ui.graphql(MATERIALIZATIONS, {"key": {"path": ["policy_eval"]}})["assetOrError"]["assetMaterializations"]
    assert [m["runId"] for m in scored[:2]] == trained[::-1]
    suites = [
        json.loads(next(e["jsonString"] for e in m["metadataEntries"] if e["label"] == "suites")) for m in scored[:2]
    ]
    assert suites[0]["heldout"]["items_hash"] == suites[1]["heldout"]["items_hash"]
    assert suites[0]["bfcl-multi-turn"]["items"] == suites[1]["bfcl-multi-turn"]["items"]
    for m in scored[:2]:
        nums = _numbers(m["metadataEntries"])
        for key in ("heldout_reward", "heldout_validity", "heldout_abstention_accuracy", "bfcl_overall"):
            assert key in nums, sorted(nums)

    text = _plot_titles(pg, ui, "corpus")
    for title in ("examples", "rejections", "kind_multi_turn"):
        assert title in text, f"no {title!r} plot on the corpus page:\n{text[:3000]}"
    text = _plot_titles(pg, ui, "grpo_policy")
    for title in ("eval_before_reward", "eval_after_sft_reward", "eval_after_grpo_reward"):
        assert title in text, f"no {title!r} plot on the grpo_policy page:\n{text[:3000]}"
    text = _plot_titles(pg, ui, "policy_eval")
    for title in ("heldout_reward", "heldout_validity", "bfcl_overall", "bfcl_multi_turn_base"):
        assert title in text, f"no {title!r} plot on the policy_eval page:\n{text[:3000]}"
    _plot_titles(pg, ui, "grpo_policy")
    shot = ui.home.parent / "plots.png"
    if os.environ.get("PROVE_UPDATE_SCREENSHOT") == "1":
        shot = ROOT / DOCS_PLOTS
    pg.get_by_text("eval_after_grpo_reward", exact=True).first.scroll_into_view_if_needed()
    pg.screenshot(path=str(shot), animations="disabled")
    assert shot.stat().st_size < 300_000, f"{shot} is {shot.stat().st_size} bytes; keep it under 300 KB"


def test_a_server_job_partition_launched_from_its_launchpad_completes(
    chromium, page, dagster_ui, materialized_through_ui, tmp_path
):
    """server_job's launchpad, a partition chosen, "Launch run" clicked: the run completes (in process, seconds) with
    that partition and the automated build. Last in the file: its partition run leaves the other tests' latest alone."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # loaded already: the page fixture's browser

    ui, pg, shot = dagster_ui, page, tmp_path / "server-job-launchpad.png"
    t0 = time.monotonic()
    pg.goto(f"{ui.url}/locations/{REPOSITORY}@{LOCATION}/jobs/server_job/playground")
    whole = "document.querySelector('.CodeMirror').CodeMirror.getValue()"
    try:
        pg.locator(".CodeMirror").first.wait_for()
        pg.wait_for_function(f"{whole}.includes('examples: 30')")
        # the partition picker above the config: typed into, then its suggestion chosen
        picker = pg.get_by_placeholder("Partition")
        suggestion = pg.get_by_role("menuitem").filter(has_text=SERVERS[0]).first
        # typed again where its suggestion does not show: under load the picker was seen empty after the typing (the
        # job's partitions coming in re-rendered it, what was typed gone) with no menu open
        for attempt in range(3):
            picker.click()
            picker.fill(SERVERS[0])
            try:
                suggestion.wait_for(timeout=10_000)
                break
            except PlaywrightTimeout:
                if attempt == 2:
                    raise
        suggestion.click()
        launch_button = pg.get_by_role("button", name="Launch run")
        pg.wait_for_function(
            "() => [...document.querySelectorAll('button')].some(b => /launch run/i.test(b.textContent) && !b.disabled)"
        )
        launch_button.click()
        pg.wait_for_url(re.compile(r"/runs/[0-9a-f-]{36}"))
    except Exception as exc:
        pg.screenshot(path=str(shot), animations="disabled")
        raise AssertionError(
            f"server_job's launchpad did not launch ({exc}); screenshot: {shot}\n{pg.inner_text('body')[:3000]}\n"
            f"{ui.logs_tail()}"
        ) from exc
    rid = re.search(r"/runs/([0-9a-f-]{36})", pg.url).group(1)
    status = wait_for_runs(ui, [rid], timeout=SENSOR_TIMEOUT_S)
    assert status[rid] == "SUCCESS", f"{rid} {status[rid]}:\n{run_failure_messages(ui, rid)}\n{ui.logs_tail()}"
    (run,) = [r for r in _runs(ui, **{"dagster/partition": SERVERS[0]}) if r["runId"] == rid] or [None]
    assert run is not None and run["jobName"] == "server_job", f"{rid} is not a server_job run of {SERVERS[0]}"
    assert run["config"] == _expected_config(ui), json.dumps(run["config"])[:2000]
    print(f"server_job partition run from the launchpad in {time.monotonic() - t0:.1f}s")
