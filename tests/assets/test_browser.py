"""The Dagster UI in a real browser: Debian's chromium driven by Playwright against the test webserver.

Playwright never downloads a browser here: it drives ``/usr/bin/chromium`` (``apt-get install -y chromium``;
``./test.sh`` installs it through ``scripts/setup-env.sh``). The asset graph screenshot is written to a
temporary file; with PROVE_UPDATE_SCREENSHOT=1 it refreshes ``docs/dagster-asset-graph.png``.
"""

from __future__ import annotations

import json
import os
import re
import time

import polars as pl

from tests.assets.conftest import (
    CROSS,
    LOCATION,
    PER_SERVER,
    REPOSITORY,
    ROOT,
    RUN_STATUS,
    VIEWPORT,
    run_failure_messages,
    wait_for_runs,
)

DOCS_SCREENSHOT = ROOT / "docs" / "dagster-asset-graph.png"


def _graph_labels(pg) -> set[str]:
    """Asset names as drawn on the graph; a name shortened with '…' is read from the node's tooltip."""
    names = set()
    texts = pg.locator("foreignObject div").evaluate_all(
        "els => els.filter(e => e.children.length === 0).map(e => e.textContent.trim()).filter(t => t)"
    )
    for text in texts:
        if "…" in text:  # a long name is shortened in the middle; its node has a tooltip with the whole name
            head, tail = text.split("…", 1)
            pg.locator("foreignObject").get_by_text(text, exact=True).first.hover()
            tip = pg.get_by_role("tooltip").filter(has_text=re.compile(f"^{re.escape(head)}.*{re.escape(tail)}$")).first
            tip.wait_for(timeout=5_000)
            text = tip.inner_text().strip()
            pg.mouse.move(5, VIEWPORT["height"] - 5)
        names.add(text)
    return names


def test_asset_graph_and_rejections_pages_show_the_assets(
    chromium, page, dagster_ui, materialized_through_ui, tmp_path
):
    SCREENSHOT = (
        DOCS_SCREENSHOT if os.environ.get("PROVE_UPDATE_SCREENSHOT") == "1" else tmp_path / "dagster-asset-graph.png"
    )
    ui, pg = dagster_ui, page
    expected = PER_SERVER + CROSS
    t0 = time.monotonic()

    pg.goto(f"{ui.url}/asset-groups")
    pg.get_by_text("Global asset lineage").first.wait_for()
    pg.get_by_text("6 assets").first.wait_for()  # the synthesis group node: the graph is laid out
    # more room for the graph: hide the navigation and the asset tree, then open the groups
    pg.get_by_text("Hide navigation").click()
    pg.locator('button:has([aria-label="panel_show_right"])').click()
    pg.mouse.click(VIEWPORT["width"] - 300, VIEWPORT["height"] - 150, button="right")  # the graph background's menu
    pg.get_by_role("menuitem", name="Expand all groups").click()
    pg.get_by_text("server_snapshots", exact=True).wait_for()
    pg.get_by_text("grpo_policy", exact=True).wait_for()
    pg.wait_for_load_state("networkidle")
    time.sleep(1)  # the zoom-to-fit animation
    SCREENSHOT.parent.mkdir(exist_ok=True)
    pg.screenshot(path=str(SCREENSHOT), animations="disabled")
    size = SCREENSHOT.stat().st_size
    assert size < 300_000, f"{SCREENSHOT} is {size} bytes; keep it under 300 KB"

    labels = _graph_labels(pg)
    missing = [a for a in expected if a not in labels]
    assert not missing, f"the asset graph lacks {missing}; it shows {sorted(labels)}\n{ui.logs_tail()}"
    for group in ("synthesis", "corpus", "training"):
        assert pg.get_by_text(group, exact=True).count() > 0, f"group {group} not on the graph"

    pg.goto(f"{ui.url}/assets/rejections")
    shot = ui.home.parent / "rejections-page.png"
    try:
        pg.get_by_text("The rejections of the corpus version just written").first.wait_for()  # its description
        pg.get_by_text("by_stage_reason", exact=True).first.wait_for()  # the latest materialization's metadata
    except Exception as exc:
        pg.screenshot(path=str(shot), animations="disabled")
        raise AssertionError(
            f"the rejections asset page is incomplete ({exc}); screenshot: {shot}\n"
            f"{pg.inner_text('body')[:2000]}\n{ui.logs_tail()}"
        ) from exc
    body = pg.inner_text("body")
    assert pg.get_by_text("rejections", exact=True).count() > 0, (
        f"the page does not name the rejections asset:\n{body[:2000]}"
    )
    assert "Never materialized" not in body, f"the rejections page says it was never materialized:\n{body[:2000]}"
    for label in ("total", "by_stage_reason"):
        assert label in body, f"metadata {label!r} not on the rejections page:\n{body[:2000]}"
    print(f"browser checks in {time.monotonic() - t0:.1f}s; screenshot {SCREENSHOT} ({size} bytes)")


LINEAGE_SCREENSHOT = ROOT / "docs" / "dagster-rejection-lineage.png"


def test_a_rejections_whole_lineage_is_read_in_the_ui(chromium, page, dagster_ui, materialized_through_ui, tmp_path):
    """From the rejections asset's page to one rejection's whole story (rule, upstream ids, request, every call with
    its result or error), in the UI alone. PROVE_UPDATE_SCREENSHOT=1 refreshes docs/dagster-rejection-lineage.png."""
    shot = LINEAGE_SCREENSHOT if os.environ.get("PROVE_UPDATE_SCREENSHOT") == "1" else tmp_path / "lineage.png"
    ui, pg = dagster_ui, page
    pg.goto(f"{ui.url}/assets/rejections")
    row = pg.locator("tr").filter(has_text=re.compile(r"lineage_\w+")).first
    try:
        row.wait_for()
    except Exception as exc:
        raise AssertionError(f"no lineage entry on the rejections page:\n{pg.inner_text('body')[:3000]}") from exc
    label = re.search(r"lineage_\w+", row.inner_text()).group(0)
    row.get_by_text("[Show Markdown]").click()
    dialog = pg.get_by_role("dialog")
    dialog.get_by_text("The same from the command line").wait_for()
    text = dialog.inner_text()
    stage, reason = label.removeprefix("lineage_").split("_", 1)
    assert f"rule {stage}/{reason}" in text and "upstream:" in text, text[:2000]
    assert re.search(r"rej-\w+ on \w+", text), text[:2000]
    if "calls (" in text:  # a record that carries calls shows each with its result or its error
        assert "✓" in text or "✗" in text, text[:2000]
    pg.wait_for_load_state("networkidle")
    shot.parent.mkdir(exist_ok=True)
    # animations run to their end first (every screenshot here): on a loaded machine one was taken while the dialog
    # was still fading in, the page showing through it (352 KB against 225 KB)
    pg.screenshot(path=str(shot), animations="disabled")
    assert shot.stat().st_size < 300_000, f"{shot} is {shot.stat().st_size} bytes; keep it under 300 KB"


def test_the_launchpad_starts_from_the_automated_build_typed(chromium, page, dagster_ui):
    """corpus_job's launchpad shows the build of $PROVE_AUTOMATION (the test webserver's: banking and crm, 30
    examples, no training) as its config, without scaffolding anything."""
    ui, pg = dagster_ui, page
    pg.goto(f"{ui.url}/locations/{REPOSITORY}@{LOCATION}/jobs/corpus_job/playground")
    editor = pg.locator(".CodeMirror").first
    # the whole config, once it holds the build (CodeMirror draws only the lines in view, so it is read, not seen)
    whole = "document.querySelector('.CodeMirror').CodeMirror.getValue()"
    try:
        editor.wait_for()
        pg.wait_for_function(f"{whole}.includes('examples: 30')")
    except Exception as exc:
        raise AssertionError(
            f"the launchpad does not show the automated build:\n{pg.inner_text('body')[:3000]}"
        ) from exc
    text = pg.evaluate(whole)
    for said in ("settings:", "build:", "examples: 30", "- banking", "- crm", "train: false", str(ui.data_dir)):
        assert said in text, f"{said!r} not in the launchpad's config:\n{text[:3000]}"


RUN_MESSAGES = """
query($id: ID!) {
  logsForRun(runId: $id, limit: 5000) {
    ... on EventConnection { events { __typename ... on MessageEvent { message level }
      ... on ExecutionStepFailureEvent { error { message } failureMetadata { description } } } }
  }
}"""
WHOLE_CONFIG = "document.querySelector('.CodeMirror').CodeMirror.getValue()"


def _lineage_launchpad(pg, ui, shot):
    """lineage_job's launchpad, once its config editor holds the job's default config."""
    pg.goto(f"{ui.url}/locations/{REPOSITORY}@{LOCATION}/jobs/lineage_job/playground")
    try:
        pg.locator(".CodeMirror").first.wait_for()
        pg.wait_for_function(f"{WHOLE_CONFIG}.includes('record_id')")
    except Exception as exc:
        pg.screenshot(path=str(shot), animations="disabled")
        raise AssertionError(
            f"lineage_job's launchpad did not open on its config ({exc}); screenshot: {shot}\n"
            f"{pg.inner_text('body')[:3000]}\n{ui.logs_tail()}"
        ) from exc


def _launch_from_launchpad(pg, ui, shot) -> str:
    """Clicks the launchpad's "Launch run" and returns the id of the run the UI opens; its end waited for."""
    pg.get_by_role("button", name="Launch run").click()
    try:
        pg.wait_for_url(re.compile(r"/runs/[0-9a-f-]{36}"))
    except Exception as exc:
        pg.screenshot(path=str(shot), animations="disabled")
        raise AssertionError(
            f"no run opened after Launch run ({exc}); screenshot: {shot}\n{pg.inner_text('body')[:3000]}\n"
            f"{ui.logs_tail()}"
        ) from exc
    rid = re.search(r"/runs/([0-9a-f-]{36})", pg.url).group(1)
    wait_for_runs(ui, [rid], timeout=60)
    return rid


RUN_TIMES = "query($id: ID!) { runOrError(runId: $id) { ... on Run { creationTime startTime endTime } } }"


def _run_times(ui, rid: str) -> str:
    """Where a run's time went: queued and its worker starting, then its steps to the end (Dagster's own clocks)."""
    t = ui.graphql(RUN_TIMES, {"id": rid})["runOrError"]
    return f"queue and worker start {t['startTime'] - t['creationTime']:.1f}s, run {t['endTime'] - t['startTime']:.1f}s"


def _messages(ui, rid: str) -> str:
    events = ui.graphql(RUN_MESSAGES, {"id": rid})["logsForRun"]["events"]
    said = []
    for e in events:
        said.append(e.get("message") or "")
        said.append(((e.get("failureMetadata") or {}).get("description")) or "")
        said.append(((e.get("error") or {}).get("message")) or "")
    return "\n".join(s for s in said if s)


def test_lineage_job_launchpad_opens_valid_and_a_run_without_an_id_says_what_to_enter(
    chromium, page, dagster_ui, tmp_path
):
    """The launchpad opens on record_id (empty, the job's default) with no config error; launched as it is, the run
    fails saying what to enter and where."""
    ui, pg, shot = dagster_ui, page, tmp_path / "lineage-launchpad.png"
    t0 = time.monotonic()
    _lineage_launchpad(pg, ui, shot)
    text = pg.evaluate(WHOLE_CONFIG)
    assert "record_id: ''" in text or 'record_id: ""' in text, f"the launchpad's config:\n{text}"
    body = pg.inner_text("body")
    assert "Missing required config entry" not in body, f"the launchpad opens on a config error:\n{body[:3000]}"
    assert "No errors" in body or pg.get_by_role("button", name="Launch run").is_enabled(), body[:3000]
    rid = _launch_from_launchpad(pg, ui, shot)
    status = ui.graphql(RUN_STATUS, {"id": rid})["runOrError"]["status"]
    said = _messages(ui, rid)
    assert status == "FAILURE" and "no record id given" in said, f"{rid} {status}:\n{said[-3000:]}"
    assert "ops.look_up_lineage.config.record_id" in said and "prove rejected" in said, said
    print(f"lineage_job launchpad and empty-id run in {time.monotonic() - t0:.1f}s ({_run_times(ui, rid)})")


def test_a_run_launched_from_the_launchpad_completes_with_a_query_stage_rejections_story(
    chromium, page, dagster_ui, materialized_through_ui, tmp_path
):
    """A rejection id of the query stage typed into lineage_job's launchpad: the run the "Launch run" click starts
    succeeds (in process, seconds), and its output is the story, request included."""
    ui, pg, shot = dagster_ui, page, tmp_path / "lineage-run.png"
    t0 = time.monotonic()
    (version,) = sorted((ui.data_dir / "corpus").glob("v*/rejections.parquet"))[-1:]
    rej = pl.read_parquet(version).filter(pl.col("stage") == "query").sort("rejection_id")
    assert rej.height, "the UI's build rejected nothing at the query stage"
    rid_wanted = rej["rejection_id"][0]
    _lineage_launchpad(pg, ui, shot)
    config = f'ops:\n  look_up_lineage:\n    config:\n      record_id: "{rid_wanted}"\n'
    pg.evaluate(f"document.querySelector('.CodeMirror').CodeMirror.setValue({json.dumps(config)})")
    pg.wait_for_function(f"{WHOLE_CONFIG}.includes({json.dumps(rid_wanted)})")
    rid = _launch_from_launchpad(pg, ui, shot)
    status = ui.graphql(RUN_STATUS, {"id": rid})["runOrError"]["status"]
    assert status == "SUCCESS", f"{rid} {status}:\n{run_failure_messages(ui, rid)}\n{ui.logs_tail()}"
    story = _messages(ui, rid)
    assert f"**{rid_wanted}** on `" in story and "rule `query/" in story, story[:3000]
    assert "request (" in story and "what it was to ask for, step by step:" in story, story[:3000]
    try:
        pg.get_by_text("Success").first.wait_for(timeout=15_000)  # the run page says how it ended
    except Exception as exc:
        pg.screenshot(path=str(shot), animations="disabled")
        raise AssertionError(f"the run page does not show success; screenshot: {shot}") from exc
    print(f"lineage_job run from the launchpad in {time.monotonic() - t0:.1f}s ({_run_times(ui, rid)})")
