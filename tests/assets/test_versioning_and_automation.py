"""Dagster as a data product: code versions from source, data versions from schema and content hashes,
staleness limited to what changed, the schema-change sensor, the regeneration schedule, and the
metadata the corpus and rejections assets attach."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster._core.definitions.data_version import StaleStatus
from dagster._utils.test.data_versions import get_stale_status_resolver

from assets import automation as A
from assets import code_versions as CV
from assets import definitions as D
from assets import resources as R
from assets import synthesis as S
from assets import training as T
from assets.automated_build import AutomatedBuild
from pipeline.core.config import BuildConfig, DeploymentConfig, ServerConfig
from tests.builds import build_run

SERVERS = ["banking", "crm"]


def _cfg(data: Path, **kw) -> BuildConfig:
    return BuildConfig(examples=30, servers=SERVERS, data_dir=str(data), **kw)


def _data_version(instance: dg.DagsterInstance, asset: str, partition: str | None = None) -> str | None:
    rec = instance.get_latest_data_version_record(dg.AssetKey(asset), partition_key=partition)
    return rec.asset_materialization.tags.get("dagster/data_version") if rec else None


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One real build through Dagster (per-server partitions, then dedup -> corpus; no training)."""
    data = tmp_path_factory.mktemp("dagster") / "data"
    cfg = _cfg(data)
    b = build_run(cfg)
    return cfg, D.resources(build_config=cfg, train=False), b.instance


# ----------------------------------------------------------------------------- code versions
def _fn(asset: dg.AssetsDefinition):
    return asset.op.compute_fn.decorated_fn


def _versions() -> dict[str, str]:
    return {k.to_user_string(): v for a in D.ALL_ASSETS for k, v in a.code_versions_by_key.items()}


def test_every_asset_has_a_code_version_computed_from_its_source_and_import_closure():
    versions = _versions()
    assert set(versions) == {a.key.to_user_string() for a in D.ALL_ASSETS}
    for a in D.ALL_ASSETS:
        v = versions[a.key.to_user_string()]
        assert v == CV.code_version(_fn(a)) and v.startswith(f"{CV.CODE_VERSION}-") and len(v.split("-")[1]) == 12
    assert len(set(versions.values())) == len(versions), "each stage runs different code"
    # the closures are read from the code: the modules the hand-kept map once missed are in them
    assert {"pipeline.discovery.chains", "pipeline.core.similarity"} <= CV.import_closure(
        CV.function_modules(_fn(S.tool_chains))
    )
    assert "pipeline.language.values" in CV.import_closure(CV.function_modules(_fn(S.dependency_graphs)))
    assert "training.grpo" in CV.import_closure(CV.function_modules(_fn(T.grpo_policy)))


def test_the_statement_walk_finds_every_import_a_full_walk_finds_in_every_project_module():
    """Code versions read imports from statements only (cheaper as a process starts): the same imports as
    walking every node."""
    import ast

    def imports(nodes) -> list[str]:
        return sorted(ast.dump(n) for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom)))

    nested = ast.parse(
        "import a\nclass C:\n    def f(self):\n        try:\n            import b\n"
        "        except E:\n            import c\n"
        "        else:\n            import d\n        finally:\n            import e\n"
        "with x:\n    for i in y:\n        while z:\n            if w:\n                pass\n"
        "            else:\n                from . import f\n"
        "match v:\n    case 1:\n        import g\nasync def h():\n    async with q:\n        import i\n"
    )
    assert imports(CV.statements(nested)) == imports(ast.walk(nested))
    assert len(imports(ast.walk(nested))) == 8  # a to g, and i
    files = [p for pkg in CV.project_packages(CV.ROOT) for p in (CV.ROOT / pkg).rglob("*.py")]
    assert len(files) > 100
    for f in files:
        tree = ast.parse(f.read_bytes(), filename=str(f))
        assert imports(CV.statements(tree)) == imports(ast.walk(tree)), f


@pytest.fixture(scope="module")
def tree_copy(tmp_path_factory):
    """A copy of the project's packages, to edit without touching the real tree."""
    import shutil

    root = tmp_path_factory.mktemp("tree")
    for pkg in CV.project_packages(CV.ROOT):
        shutil.copytree(CV.ROOT / pkg, root / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


def _edited(root: Path, module: str, fn) -> str:
    """The code version of ``fn`` with one comment line added to ``module`` in the tree at ``root``."""
    f = CV.module_file(module, root)
    before = f.read_bytes()
    f.write_bytes(before + b"\n# edited\n")
    try:
        return CV.code_version(fn, root)
    finally:
        f.write_bytes(before)


def test_editing_any_module_a_stage_imports_changes_its_code_version(tree_copy):
    for asset in (S.tool_chains, S.dependency_graphs, T.grpo_policy):
        fn = _fn(asset)
        base = CV.code_version(fn, tree_copy)
        assert base == CV.code_version(fn), "the copy hashes as the real tree"
        closure = CV.import_closure(CV.function_modules(fn), tree_copy)
        for module in sorted(closure):
            assert _edited(tree_copy, module, fn) != base, (asset.key, module)
        assert CV.code_version(fn, tree_copy) == base, "restoring the file restores the version"


def test_editing_a_module_outside_a_stages_closure_leaves_its_code_version(tree_copy):
    fn = _fn(S.tool_chains)
    base = CV.code_version(fn, tree_copy)
    closure = CV.import_closure(CV.function_modules(fn), tree_copy)
    assert "training.grpo" not in closure and "assets.training" not in closure
    for module in ("training.grpo", "training.train", "assets.training", "assets.cli.build"):
        assert _edited(tree_copy, module, fn) == base, module
    # and the training asset, which imports training.grpo, does change
    assert _edited(tree_copy, "training.grpo", _fn(T.grpo_policy)) != CV.code_version(_fn(T.grpo_policy), tree_copy)


def test_import_statements_are_kept_between_processes_while_each_file_is_unchanged(tree_copy):
    """What each file imports is read from <root>/.prove-cache while the file's time and size are those it was
    read with (a later process parses nothing); an edited file is parsed again."""
    import json

    def new_process() -> None:  # what a process that starts now knows: the cache file only
        CV._imports.cache_clear()
        CV.ImportsCache._open.clear()

    fn = _fn(S.tool_chains)
    new_process()
    closure = CV.import_closure(CV.function_modules(fn), tree_copy)
    cache = tree_copy / ".prove-cache" / "code-imports.json"
    entries = json.loads(cache.read_text())
    chains = str(CV.module_file("pipeline.discovery.chains", tree_copy))
    assert "training.grpo" not in closure and chains in entries
    entries[chains][2].append("training.grpo")  # as if chains.py imported it: read from here, not from the file
    cache.write_text(json.dumps(entries))
    new_process()
    assert "training.grpo" in CV.import_closure(CV.function_modules(fn), tree_copy)
    f = Path(chains)
    before = f.read_bytes()
    f.write_bytes(before + b"\n# edited\n")
    try:
        new_process()
        assert "training.grpo" not in CV.import_closure(CV.function_modules(fn), tree_copy)
    finally:
        f.write_bytes(before)


def test_the_manifest_records_every_assets_code_version(built):
    cfg, _, _ = built
    from pipeline.corpus.store import resolve_version

    m = json.loads((resolve_version(cfg.data_dir, "latest") / "manifest.json").read_text())
    # the code versions of every asset that made the version (the policy and its scores come after it)
    assert {k: v for k, v in m["code_versions"].items() if k.startswith("asset:")} == {
        f"asset:{k}": v for k, v in _versions().items() if k not in ("grpo_policy", "policy_eval")
    }
    assert m["code_versions"]["assets"] == CV.CODE_VERSION
    assert set(m["schema_hashes"]) == set(SERVERS)


# ----------------------------------------------------------------------------- data versions
def test_server_snapshots_report_the_schema_hash_as_their_data_version(built):
    cfg, _, instance = built
    for s in SERVERS:
        rec = instance.get_latest_data_version_record(dg.AssetKey("server_snapshots"), partition_key=s)
        dv = rec.asset_materialization.tags["dagster/data_version"]
        assert dv == A.server_schema_hash(cfg, s) == rec.asset_materialization.metadata["schema_hash"].value
        assert rec.asset_materialization.tags["dagster/data_version_is_user_provided"] == "true"
    assert _data_version(instance, "server_snapshots", "banking") != _data_version(instance, "server_snapshots", "crm")


def test_the_corpus_data_version_is_its_content_hash(built):
    cfg, _, instance = built
    ev = instance.get_latest_materialization_event(dg.AssetKey("corpus"))
    meta = ev.asset_materialization.metadata
    m = json.loads((Path(meta["path"].value) / "manifest.json").read_text())
    assert _data_version(instance, "corpus") == m["content_hash"] == meta["content_hash"].value
    assert meta["version"].value == m["version"]


def test_a_changed_stage_marks_that_asset_stale_then_its_dependents_but_never_its_upstream(built):
    cfg, res, instance = built
    resolver = get_stale_status_resolver(instance, D.ALL_ASSETS)
    for a in S.PER_SERVER:
        for s in SERVERS:
            assert resolver.get_status(a.key, s) == StaleStatus.FRESH, (a.key, s)
    for a in ("unique_conversations", "augmented_examples", "rejections", "corpus"):
        assert resolver.get_status(dg.AssetKey(a)) == StaleStatus.FRESH, a

    # tool_chains' code changed (its source hash is its code version)
    changed = S.tool_chains.map_asset_specs(lambda spec: spec.replace_attributes(code_version="edited"))
    assets = [changed if a is S.tool_chains else a for a in D.ALL_ASSETS]
    resolver = get_stale_status_resolver(instance, assets)
    for s in SERVERS:
        assert resolver.get_status(dg.AssetKey("tool_chains"), s) == StaleStatus.STALE
        assert [c.category.value for c in resolver.get_stale_root_causes(dg.AssetKey("tool_chains"), s)] == ["CODE"]
        assert resolver.get_status(dg.AssetKey("server_snapshots"), s) == StaleStatus.FRESH
        assert resolver.get_status(dg.AssetKey("dependency_graphs"), s) == StaleStatus.FRESH

    # re-materializing it with the new code gives it a new data version: its dependents in that partition go stale
    assert dg.materialize(assets, selection=[changed], partition_key="crm", resources=res, instance=instance).success
    resolver = get_stale_status_resolver(instance, assets)
    assert resolver.get_status(dg.AssetKey("tool_chains"), "crm") == StaleStatus.FRESH
    assert resolver.get_status(dg.AssetKey("user_queries"), "crm") == StaleStatus.STALE
    assert resolver.get_status(dg.AssetKey("conversations"), "crm") == StaleStatus.STALE
    assert resolver.get_status(dg.AssetKey("user_queries"), "banking") == StaleStatus.FRESH
    assert resolver.get_status(dg.AssetKey("dependency_graphs"), "crm") == StaleStatus.FRESH


def test_a_server_whose_tools_changed_makes_only_its_own_partitions_stale(tmp_path):
    cfg = _cfg(tmp_path / "data")
    res = D.resources(build_config=cfg, train=False)
    instance = dg.DagsterInstance.ephemeral()
    R.ensure_partitions(instance, SERVERS)
    first = [S.server_snapshots, S.dependency_graphs]
    for s in SERVERS:
        assert dg.materialize(D.ALL_ASSETS, selection=first, partition_key=s, resources=res, instance=instance).success
    old = {s: _data_version(instance, "server_snapshots", s) for s in SERVERS}

    # re-probing an unchanged server gives the same data version: its downstream stays fresh
    assert dg.materialize(
        D.ALL_ASSETS, selection=[S.server_snapshots], partition_key="crm", resources=res, instance=instance
    ).success
    # banking now offers one tool fewer (it is hidden as the server's state tool)
    from pipeline.env import Environment

    with Environment(cfg.server_config("banking")) as env:
        hidden = env.tools()[-1].name
    changed = cfg.model_copy(update={"server_configs": [ServerConfig(name="banking", state_tool=hidden)]})
    assert A.server_schema_hash(changed, "banking") != old["banking"]
    res2 = D.resources(build_config=changed, train=False)
    assert dg.materialize(
        D.ALL_ASSETS, selection=[S.server_snapshots], partition_key="banking", resources=res2, instance=instance
    ).success

    assert _data_version(instance, "server_snapshots", "crm") == old["crm"]
    assert _data_version(instance, "server_snapshots", "banking") == A.server_schema_hash(changed, "banking")
    resolver = get_stale_status_resolver(instance, D.ALL_ASSETS)
    assert resolver.get_status(dg.AssetKey("dependency_graphs"), "banking") == StaleStatus.STALE
    causes = resolver.get_stale_root_causes(dg.AssetKey("dependency_graphs"), "banking")
    assert [(c.key.asset_key.to_user_string(), c.key.partition_key, c.category.value) for c in causes] == [
        ("server_snapshots", "banking", "DATA")
    ]
    assert resolver.get_status(dg.AssetKey("dependency_graphs"), "crm") == StaleStatus.FRESH


# ----------------------------------------------------------------------------- sensor
def _sensor(cfg: BuildConfig, cursor: dict[str, str] | None, instance: dg.DagsterInstance):
    ctx = dg.build_sensor_context(
        cursor=json.dumps(cursor) if cursor is not None else None,
        instance=instance,
        resources={"settings": R.settings_for(cfg), "training": T.training_settings(False)},
    )
    return A.schema_change_sensor(ctx)


def test_schema_change_sensor_requests_a_run_for_the_server_whose_hash_changed(built):
    cfg, _, instance = built
    now = {s: A.server_schema_hash(cfg, s) for s in SERVERS}
    result = _sensor(cfg, {"banking": "0000stale0000000", "crm": now["crm"]}, instance)
    assert [r.partition_key for r in result.run_requests] == ["banking"]
    req = result.run_requests[0]
    assert req.tags["prove/schema_hash"] == now["banking"]
    assert A.schema_change_sensor.job_name == "server_job"
    assert json.loads(result.cursor) == now

    # with the cursor it left behind, nothing changed: a skip
    again = _sensor(cfg, json.loads(result.cursor), instance)
    assert not again.run_requests and again.skip_reason is not None
    assert "no server's tool schema changed" in again.skip_reason.skip_message
    assert json.loads(again.cursor) == now


def test_schema_change_sensor_without_a_cursor_compares_with_the_last_materialized_snapshot(built, tmp_path):
    cfg, _, instance = built
    # the build materialized both partitions with today's schemas: nothing to do
    result = _sensor(cfg, None, instance)
    assert not result.run_requests and result.skip_reason is not None
    # a fresh instance has never seen these servers: run both, and register their partitions
    fresh = dg.DagsterInstance.ephemeral()
    result = _sensor(cfg, None, fresh)
    assert sorted(r.partition_key for r in result.run_requests) == SERVERS
    adds = [p for req in result.dynamic_partitions_requests for p in req.partition_keys]
    assert sorted(adds) == SERVERS


def test_schema_change_sensor_keeps_the_last_hash_of_an_unreachable_server(built):
    cfg, _, instance = built
    bad = cfg.model_copy(
        update={
            "servers": SERVERS + ["gone"],
            "server_configs": [
                ServerConfig(
                    name="gone", kind="stdio", command="/nonexistent/mcp-server", isolation="none", timeout_s=2
                )
            ],
        }
    )
    now = {s: A.server_schema_hash(cfg, s) for s in SERVERS}
    result = _sensor(bad, {**now, "gone": "abc"}, instance)
    assert not result.run_requests
    assert "unreachable" in result.skip_reason.skip_message and "gone" in result.skip_reason.skip_message
    assert json.loads(result.cursor)["gone"] == "abc"


# ----------------------------------------------------------------------------- schedule and jobs
def test_the_weekly_schedule_reprobes_every_server_and_its_cron_is_configurable(monkeypatch):
    sched = D.defs.get_schedule_def("weekly_regeneration")
    assert sched.job_name == "server_job"  # then corpus_after_changes makes the corpus from the batch
    assert sched.default_status == dg.DefaultScheduleStatus.STOPPED
    assert A.weekly_regeneration.cron_schedule == (A.os.environ.get("PROVE_SCHEDULE_CRON") or A.DEFAULT_CRON)
    job_keys = A.corpus_job.selection.resolve(D.defs.resolve_asset_graph())
    assert dg.AssetKey("corpus") in job_keys and dg.AssetKey("grpo_policy") in job_keys
    assert dg.AssetKey("server_snapshots") not in job_keys

    monkeypatch.setenv("PROVE_SCHEDULE_CRON", "*/30 * * * *")
    assert A.regeneration_schedule().cron_schedule == "*/30 * * * *"
    assert A.regeneration_schedule().job_name == "server_job"
    monkeypatch.delenv("PROVE_SCHEDULE_CRON")
    assert A.regeneration_schedule().cron_schedule == A.DEFAULT_CRON == "0 3 * * 1"
    assert A.regeneration_schedule("15 4 * * *").cron_schedule == "15 4 * * *"


def test_the_schedules_and_sensors_run_requests_name_their_server_in_run_key_and_tags(tmp_path):
    """What a tick's preview shows: each request as Dagster resolves it for the preview (and the daemon for the run),
    its server in its run key, in the partition tag Dagster adds and in the project's own tag."""
    cfg = _cfg(tmp_path / "data")
    defs = D.make_definitions(build=AutomatedBuild(cfg, False, "test"))
    res = {"settings": R.settings_for(cfg), "training": T.training_settings(False)}
    repo = defs.get_repository_def()
    with dg.instance_for_test() as instance:
        when = dt.datetime(2026, 11, 30, 3, 0, tzinfo=dt.UTC)
        ctx = dg.build_schedule_context(
            instance=instance, resources=res, repository_def=repo, scheduled_execution_time=when
        )
        scheduled = defs.get_schedule_def("weekly_regeneration").evaluate_tick(ctx).run_requests
        ctx = dg.build_sensor_context(
            instance=instance, instance_ref=instance.get_ref(), resources=res, repository_def=repo
        )
        sensed = defs.get_sensor_def("schema_change_sensor").evaluate_tick(ctx).run_requests
    for requests in (scheduled, sensed):
        assert sorted(r.partition_key for r in requests) == sorted(SERVERS)
        for r in requests:
            assert r.tags["dagster/partition"] == r.tags["prove/server"] == r.partition_key, r.tags
            assert r.partition_key in r.run_key.split(":"), r.run_key


def test_a_builds_runs_are_listed_under_server_job_and_corpus_job(built):
    """prove build's runs are the project's jobs' runs (the UI's job pages and run filters find them)."""
    cfg, _, instance = built
    runs = [r for r in instance.get_runs() if "prove/build" in r.tags]  # other tests here materialize on their own
    assert {r.job_name for r in runs} == {"server_job", "corpus_job"}
    assert sorted(r.tags["dagster/partition"] for r in runs if r.job_name == "server_job") == sorted(cfg.servers)


def test_the_server_job_is_partitioned_by_server_over_the_per_server_assets():
    job = D.defs.resolve_job_def("server_job")
    assert job.partitions_def == R.server_partitions
    keys = A.server_job.selection.resolve(D.defs.resolve_asset_graph())
    assert keys == {a.key for a in S.PER_SERVER}
    assert D.defs.get_sensor_def("schema_change_sensor").job_name == "server_job"


def test_the_jobs_the_ui_and_the_automation_launch_run_their_steps_in_process_with_the_default_deployment():
    """As prove build runs them (deployment.executor in_process, the default): no process per step."""
    for job in ("server_job", "corpus_job", "lineage_job", "__ASSET_JOB"):
        assert D.defs.resolve_job_def(job).executor_def is dg.in_process_executor, job
    server_job = D.defs.resolve_job_def("server_job")
    launchpad = server_job.partitioned_config.get_run_config_for_partition_key("banking")
    assert "execution" not in launchpad
    assert dg.validate_run_config(server_job, launchpad)
    # a deployment that runs steps elsewhere gets its executor, configured in the run, as before
    many = BuildConfig(servers=SERVERS, deployment=DeploymentConfig(executor="multiprocess", max_concurrent=2))
    defs = D.make_definitions(build=AutomatedBuild(many, False, "test"))
    assert defs.resolve_job_def("server_job").executor_def is dg.multiprocess_executor
    assert AutomatedBuild(many, False, "test").run_config()["execution"]["config"]["max_concurrent"] == 2


# ----------------------------------------------------------------------------- metadata and SQL
def test_rejections_metadata_has_counts_by_stage_and_reason_as_a_table_and_markdown(built):
    cfg, _, instance = built
    ev = instance.get_latest_materialization_event(dg.AssetKey("rejections"))
    meta = ev.asset_materialization.metadata
    total = meta["total"].value
    assert total > 0
    table = meta["by_stage_reason_table"]
    assert isinstance(table, dg.TableMetadataValue)
    assert [c.name for c in table.schema.columns] == ["stage", "reason", "server", "count"]
    assert sum(r.data["count"] for r in table.records) == total
    assert {r.data["stage"] for r in table.records} >= {"query"}  # read from the per-stage rejection sidecars
    md = meta["by_stage_reason"].value
    assert md.startswith("| stage/reason | count |")
    for r in table.records:
        assert f"{r.data['stage']}/{r.data['reason']}" in md
    assert "chart" in meta  # the PNG (inline)
    # the table agrees with what the corpus version stores (before de-duplication of identical rejections)
    import polars as pl

    from pipeline.corpus.store import resolve_version

    stored = pl.read_parquet(resolve_version(cfg.data_dir, "latest") / "rejections.parquet")
    assert stored.height <= total and set(stored["reason"].to_list()) == {r.data["reason"] for r in table.records}


def test_the_corpus_asset_refreshes_the_duckdb_views(built):
    cfg, _, instance = built
    meta = instance.get_latest_materialization_event(dg.AssetKey("corpus")).asset_materialization.metadata
    db = Path(meta["duckdb"].value)
    assert db == Path(cfg.data_dir) / "corpus" / "prove.duckdb" and db.is_file()
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("select version, count(*) from examples group by 1").fetchall()
        assert rows == [(meta["version"].value, meta["examples"].value)]
        assert (
            con.execute("select count(*) from rejections where version = ?", [meta["version"].value]).fetchone()[0] > 0
        )
        assert con.execute("select content_hash from versions").fetchall() == [(meta["content_hash"].value,)]
    finally:
        con.close()
