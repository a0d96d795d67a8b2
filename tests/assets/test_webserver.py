"""The UI path: the assets materialized through the Dagster webserver's GraphQL API, by the daemon's run queue."""

import json

from tests.assets.conftest import CHECKS, CROSS, PER_SERVER, SERVERS, run_failure_messages

ENGINE_EVENTS = """
query($id: ID!) {
  logsForRun(runId: $id, limit: 5000) {
    __typename
    ... on EventConnection { events { __typename ... on MessageEvent { message } } }
  }
}"""

ASSET = """
query($key: AssetKeyInput!) {
  assetOrError(assetKey: $key) {
    __typename
    ... on Asset {
      assetMaterializations(limit: 1) {
        runId partition
        metadataEntries {
          label __typename
          ... on IntMetadataEntry { intValue }
          ... on FloatMetadataEntry { floatValue }
          ... on TextMetadataEntry { text }
          ... on JsonMetadataEntry { jsonString }
          ... on MarkdownMetadataEntry { mdStr }
          ... on PathMetadataEntry { path }
        }
      }
    }
  }
}"""

CHECK_STATUS = (
    """
query($key: AssetKeyInput!) {
  assetNodeOrError(assetKey: $key) {
    __typename
    ... on AssetNode {
      assetChecksOrError {
        __typename
        ... on AssetChecks { checks { name blocking executionForLatestMaterialization """
    """{ runId status evaluation { success } } } }
      }
    }
  }
}"""
)

PARTITIONS = (
    """
query($key: AssetKeyInput!) {
  assetNodeOrError(assetKey: $key) {
    ... on AssetNode { partitionKeys assetPartitionStatuses { __typename """
    """... on DefaultPartitionStatuses { materializedPartitions } } }
  }
}"""
)


def _latest(ui, asset: str) -> dict:
    res = ui.graphql(ASSET, {"key": {"path": [asset]}})["assetOrError"]
    assert res["__typename"] == "Asset", f"{asset}: {res}"
    mats = res["assetMaterializations"]
    assert mats, f"{asset} has no materialization recorded by the webserver's instance\n{ui.logs_tail()}"
    m = mats[0]
    meta = {}
    for e in m["metadataEntries"]:
        v = e.get("intValue", e.get("floatValue", e.get("text", e.get("path", e.get("mdStr")))))
        meta[e["label"]] = json.loads(e["jsonString"]) if "jsonString" in e else v
    return {"run_id": m["runId"], "partition": m["partition"], "meta": meta}


def test_assets_materialize_through_the_webserver(dagster_ui, materialized_through_ui):
    ui, mat = dagster_ui, materialized_through_ui
    for server, rid in mat.per_server.items():
        assert mat.status[rid] == "SUCCESS", (
            f"the per-server run for {server} ({rid}) ended {mat.status[rid]}:\n"
            f"{run_failure_messages(ui, rid)}\n{ui.logs_tail()}"
        )
    assert mat.cross, "the cross-server run was not launched"
    assert mat.status[mat.cross] == "SUCCESS", (
        f"the corpus run ({mat.cross}) ended {mat.status[mat.cross]}:\n"
        f"{run_failure_messages(ui, mat.cross)}\n{ui.logs_tail()}"
    )

    # every per-server asset has both partitions materialized
    for asset in PER_SERVER:
        node = ui.graphql(PARTITIONS, {"key": {"path": [asset]}})["assetNodeOrError"]
        assert sorted(node["partitionKeys"]) == sorted(SERVERS), f"{asset}: {node}"
        done = node["assetPartitionStatuses"]["materializedPartitions"]
        assert sorted(done) == sorted(SERVERS), f"{asset}: materialized partitions {done}"
    for asset in CROSS:
        assert _latest(ui, asset)["run_id"] == mat.cross, asset

    corpus = _latest(ui, "corpus")
    meta = corpus["meta"]
    for label in ("version", "examples", "by_server", "by_kind", "path", "tool_coverage"):
        assert label in meta, f"corpus materialization lacks metadata {label!r}: {sorted(meta)}"
    assert meta["examples"] > 0
    assert set(meta["by_server"]) == set(SERVERS), meta["by_server"]
    assert all(n > 0 for n in meta["by_server"].values()), meta["by_server"]
    assert meta["path"].startswith(str(ui.data_dir)), f"the corpus was written outside PROVE_DATA_DIR: {meta['path']}"
    assert (ui.data_dir / "corpus" / meta["version"] / "manifest.json").is_file()

    node = ui.graphql(CHECK_STATUS, {"key": {"path": ["corpus"]}})["assetNodeOrError"]
    checks = {c["name"]: c for c in node["assetChecksOrError"]["checks"]}
    assert set(checks) == set(CHECKS), checks
    for name, c in checks.items():
        ex = c["executionForLatestMaterialization"]
        assert c["blocking"], name
        assert ex is not None, f"check {name} has no execution for the latest corpus materialization"
        assert ex["runId"] == mat.cross and ex["status"] == "SUCCEEDED" and ex["evaluation"]["success"], (
            f"check {name}: {ex}"
        )

    rej = _latest(ui, "rejections")["meta"]
    assert "total" in rej and "by_stage_reason" in rej, f"rejections metadata: {sorted(rej)}"
    assert rej["total"] > 0, rej
    assert "| stage/reason | count |" in rej["by_stage_reason"], rej["by_stage_reason"]
    print(f"materialized through the webserver in {mat.seconds:.1f}s")


def test_the_runs_the_webserver_launches_run_their_steps_in_the_run_worker_as_prove_build_does(
    dagster_ui, materialized_through_ui
):
    """No process per step: the definitions' executor with the default deployment is Dagster's in-process one."""
    for rid in [*materialized_through_ui.per_server.values(), materialized_through_ui.cross]:
        events = dagster_ui.graphql(ENGINE_EVENTS, {"id": rid})["logsForRun"]["events"]
        engine = [e["message"] for e in events if e["__typename"] == "EngineEvent"]
        assert any(m.startswith("Executing steps in process") for m in engine), engine
        assert not any("multiprocess" in m.lower() or "forkserver" in m.lower() for m in engine), engine
