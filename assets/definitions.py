"""Dagster definitions: one thin asset per stage, partitioned by server where the stage is per server.

Assets call ``pipeline.stages`` / ``training.train`` and attach what people want to see:
counts, rejection reasons, previews and plots. Intermediate records are kept by
:class:`StageStore` (pickles under ``<data>/stages``, written atomically).

Versioning: every asset's ``code_version`` is a hash of the source it runs (``assets.code_versions``);
``server_snapshots`` reports the server's tool-schema hash as its data version and ``corpus`` its
content hash, so the UI marks exactly the partitions and assets whose inputs or code changed as
stale. ``schema_change_sensor`` re-runs a server's partition when its tools change.
"""


import json
import os
import pickle
import warnings
from pathlib import Path
from typing import Any

import dagster as dg
from dagster import AssetCheckResult, AssetCheckSeverity, AssetExecutionContext, MetadataValue

from assets import progress
from assets.code_versions import all_code_versions, asset_code_version
from pipeline.config import BuildConfig
from pipeline.corpus import off_target, read_examples, record_gate, refresh_latest
from pipeline.records import TOOL_KINDS, Rejection, rejection
from pipeline.redact import Redactor, redact_rejections
from pipeline.stages import (StageOutput, open_env, stage_augment, stage_chains, stage_conversations, stage_corpus, stage_dedup,
                             stage_graph, stage_queries, stage_snapshot, stage_validate)

# data versions on outputs are a beta parameter of dagster 1.13; we rely on them deliberately
warnings.filterwarnings("ignore", category=dg.BetaWarning, message=".*data_version.*")

CODE_VERSION = "1"  # bumped by hand only for changes the source hashes cannot see (a changed output contract)


def _cv(asset: str) -> str:
    return f"{CODE_VERSION}-{asset_code_version(asset)}"

# one partition per server: built-in or registered in a servers file; `prove build` adds the ones it runs
server_partitions = dg.DynamicPartitionsDefinition(name="servers")


def ensure_partitions(instance: dg.DagsterInstance, servers: list[str]) -> None:
    have = set(instance.get_dynamic_partitions("servers"))
    missing = [s for s in servers if s not in have]
    if missing:
        instance.add_dynamic_partitions("servers", missing)


class ProveSettings(dg.ConfigurableResource):
    """The build configuration: a JSON of ``pipeline.config.BuildConfig`` (examples, servers, data dir, stage knobs)."""

    build_config_json: str = "{}"
    train: bool = True
    train_config_json: str = "{}"

    def build_config(self) -> BuildConfig:
        return BuildConfig.model_validate_json(self.build_config_json or "{}")


class StageStore(dg.ConfigurableIOManager):
    """Pickled stage outputs under ``<base_dir>/<asset>/<partition>.pkl``; fan-in loads the partitions that exist."""

    base_dir: str = "data/stages"

    def _path(self, asset_key: dg.AssetKey, partition: str | None) -> Path:
        return Path(self.base_dir) / "/".join(asset_key.path) / f"{partition or '_all'}.pkl"

    @staticmethod
    def _dump(obj: Any, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        partition = context.partition_key if context.has_partition_key else None
        path = self._path(context.asset_key, partition)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._dump(obj, path)
        if isinstance(obj, StageOutput):
            # the rejections alone, beside the full output (and written after it): the rejections asset
            # reads every stage's rejections without unpickling every conversation
            self._dump(StageOutput(rejections=obj.rejections, stats=obj.stats), path.with_suffix(".rejections.pkl"))

    def _load(self, path: Path, part: str | None) -> Any:
        side = path.with_suffix(".rejections.pkl")
        # a sidecar older than the full output belongs to an earlier materialization: read the full one
        if part == "rejections" and side.exists() and side.stat().st_mtime_ns >= path.stat().st_mtime_ns:
            path = side
        with open(path, "rb") as f:
            return pickle.load(f)

    def load_input(self, context: dg.InputContext) -> Any:
        key = context.asset_key
        part = (context.definition_metadata or {}).get("prove/part")
        if context.has_asset_partitions:
            keys = context.asset_partition_keys
            if context.has_partition_key:  # per-server asset reading the same server's upstream
                return self._load(self._path(key, keys[0]), part)
            out = {}
            for p in keys:  # fan-in: the partitions that were materialized
                path = self._path(key, p)
                if path.exists():
                    out[p] = self._load(path, part)
            return out
        return self._load(self._path(key, None), part)


def png_markdown(label: str, path: Path) -> MetadataValue:
    """A PNG inlined as markdown, so the Dagster UI shows the picture in the asset's metadata."""
    import base64

    return MetadataValue.md(f"![{label}](data:image/png;base64,{base64.b64encode(Path(path).read_bytes()).decode()})")


def _selected(settings: ProveSettings, by_server: dict[str, Any]) -> dict[str, Any]:
    servers = settings.build_config().servers
    return {s: v for s, v in by_server.items() if s in servers}


def _rej_meta(rejs: list[Rejection]) -> dict[str, Any]:
    from collections import Counter

    c = Counter(f"{r.stage}/{r.reason}" for r in rejs)
    return {"rejections": len(rejs), "rejection_reasons": MetadataValue.json(dict(c))}


@dg.asset(partitions_def=server_partitions, code_version=_cv("server_snapshots"), group_name="synthesis",
          description="Real entities sampled from the live server through its read-only tools only.")
def server_snapshots(context: AssetExecutionContext, settings: ProveSettings):
    cfg = settings.build_config()
    snap = stage_snapshot(cfg, context.partition_key)
    # the data version is the tool-schema hash: re-probing an unchanged server leaves its downstream
    # partitions fresh; a server whose tools changed makes only its own partitions stale
    return dg.Output(snap, data_version=dg.DataVersion(snap.schema_hash), metadata={
        "entities": len(snap.entities), "tools": len(snap.tools), "probe_calls": len(snap.probe_calls),
        "contexts": len(snap.contexts()), "context_seeds": MetadataValue.json([c.seed for c in snap.contexts()]),
        "schema_hash": snap.schema_hash, "skipped_tools": MetadataValue.json(snap.skipped_tools),
        "sample": MetadataValue.json(Redactor.for_snapshots([snap]).obj(dict(list(snap.entities.items())[:5]))),
    })


@dg.asset(partitions_def=server_partitions, code_version=_cv("dependency_graphs"), group_name="synthesis",
          description="Tool dependency graph: explicit and implicit edges confirmed by live execution; cached by schema hash.")
def dependency_graphs(context: AssetExecutionContext, settings: ProveSettings, server_snapshots):
    cfg = settings.build_config()
    graph, hit = stage_graph(cfg, server_snapshots)
    confirmed = [e for e in graph.edges if e.confirmed]
    context.add_output_metadata({
        "edges": len(confirmed), "explicit": sum(e.kind == "explicit" for e in confirmed),
        "implicit": sum(e.kind == "implicit" for e in confirmed), "cache_hit": hit,
        "unchainable": MetadataValue.json(graph.unchainable),
        "edge_list": MetadataValue.md("\n".join(f"- `{e.src}` → `{e.dst}` ({e.kind}, {e.source})" for e in confirmed[:60])),
    })
    return graph


@dg.asset(partitions_def=server_partitions, code_version=_cv("tool_chains"), group_name="synthesis",
          description="Tool chains of length 2-5 sampled along the dependency graph.")
def tool_chains(context: AssetExecutionContext, settings: ProveSettings, server_snapshots, dependency_graphs) -> StageOutput:
    out = stage_chains(settings.build_config(), server_snapshots, dependency_graphs)
    context.add_output_metadata({"chains": len(out.items), "tool_coverage": out.stats["tool_coverage"],
                                 "length_histogram": MetadataValue.json({str(k): v for k, v in out.stats["length_histogram"].items()}),
                                 **_rej_meta(out.rejections)})
    return out


@dg.asset(partitions_def=server_partitions, code_version=_cv("user_queries"), group_name="synthesis",
          description="Grounded user requests per turn (information level, persona), from the template or LLM backend.")
def user_queries(context: AssetExecutionContext, settings: ProveSettings, server_snapshots, tool_chains) -> StageOutput:
    chains = tool_chains.items
    red = Redactor.for_snapshots([server_snapshots])
    out = stage_queries(settings.build_config(), server_snapshots, chains,
                        progress=lambda i, n: context.log.info(f"queries {i}/{n}") if i % 50 == 0 or i == n else None)
    context.add_output_metadata({"queries": len(out.items), "info_levels": MetadataValue.json(out.stats.get("info_levels", {})),
                                 "preview": MetadataValue.md("\n".join(f"- {red.text(q.turns[0])}" for q in out.items[:8])),
                                 **_rej_meta(out.rejections)})
    return out


@dg.asset(partitions_def=server_partitions, code_version=_cv("conversations"), group_name="synthesis",
          description="Conversations simulated live by the state machine (calls, results, recovery, replies).")
def conversations(context: AssetExecutionContext, settings: ProveSettings, server_snapshots, tool_chains, user_queries) -> StageOutput:
    out = stage_conversations(settings.build_config(), server_snapshots, tool_chains.items, user_queries.items,
                              progress=lambda i, n: context.log.info(f"conversations {i}/{n}") if i % 50 == 0 or i == n else None)
    context.add_output_metadata({"conversations": len(out.items), "outcomes": MetadataValue.json(out.stats.get("outcomes", {})),
                                 **_rej_meta(out.rejections)})
    return out


@dg.asset(partitions_def=server_partitions, code_version=_cv("validated_conversations"), group_name="synthesis",
          description="Conversations that replay on a freshly reset session: error rate, sensitive provenance, determinism.")
def validated_conversations(context: AssetExecutionContext, settings: ProveSettings, conversations) -> StageOutput:
    out = stage_validate(settings.build_config(), conversations.items, context.partition_key)
    context.add_output_metadata({"validated": len(out.items), "pass_rate": out.stats["pass_rate"], **_rej_meta(out.rejections)})
    return out


@dg.asset(code_version=_cv("unique_conversations"), group_name="corpus",
          description="Near-duplicates removed across servers (MinHash LSH, Jaccard 0.70 on tool-call sequences).")
def unique_conversations(context: AssetExecutionContext, settings: ProveSettings, validated_conversations) -> StageOutput:
    per = _selected(settings, validated_conversations)
    convs = [c for out in per.values() for c in out.items]
    progress.report("dedup", 0, 1)
    out = stage_dedup(settings.build_config(), convs)
    progress.report("dedup", 1, 1, kept=len(out.items), of=len(convs))
    context.add_output_metadata({"input": len(convs), "kept": len(out.items), "recall_check": MetadataValue.json(out.stats["recall_check"]),
                                 **_rej_meta(out.rejections)})
    return out


@dg.asset(code_version=_cv("augmented_examples"), group_name="corpus",
          description="Examples with robustness augmentation: distractors, enum stripping, irrelevance, abstention, missing function.")
def augmented_examples(context: AssetExecutionContext, settings: ProveSettings, unique_conversations, server_snapshots) -> StageOutput:
    snaps = _selected(settings, server_snapshots)
    progress.report("corpus", 0, 3, stage="augment")
    out = stage_augment(settings.build_config(), unique_conversations.items, snaps)
    progress.report("corpus", 1, 3, stage="rejections")
    context.add_output_metadata({"examples": len(out.items), "kinds": MetadataValue.json(out.stats["kinds"]),
                                 "augmentations": MetadataValue.json(out.stats["augmentations"])})
    return out


@dg.asset(code_version=_cv("rejections"), group_name="corpus",
          description="Every rejection of every stage with its reason code, detail and upstream ids.",
          ins={k: dg.AssetIn(metadata={"prove/part": "rejections"})
               for k in ("tool_chains", "user_queries", "conversations", "validated_conversations", "unique_conversations",
                         "augmented_examples")})
def rejections(context: AssetExecutionContext, settings: ProveSettings, tool_chains, user_queries, conversations,
               validated_conversations, unique_conversations, augmented_examples, server_snapshots) -> list[Rejection]:
    out: list[Rejection] = []
    for per in (tool_chains, user_queries, conversations, validated_conversations):
        for o in _selected(settings, per).values():
            out.extend(o.rejections)
    out.extend(unique_conversations.rejections)
    out.extend(augmented_examples.rejections)
    for server, why in settings.build_config().unavailable_servers.items():
        out.append(rejection("probe", "server_unavailable", why, server, {"server": server}))
    red = Redactor.for_snapshots(_selected(settings, server_snapshots).values())
    out = redact_rejections(out, red)
    meta = _rejections_meta(out, red)
    try:
        from collections import Counter

        from pipeline.report import rejections_png

        cfg = settings.build_config()
        (cfg.data_path / "reports").mkdir(parents=True, exist_ok=True)
        png = rejections_png(dict(Counter(f"{r.stage}/{r.reason}" for r in out)), cfg.data_path / "reports" / "rejections.png")
        meta["chart"] = png_markdown("rejections", png)
    except Exception as exc:  # the chart is a nicety
        context.log.warning(f"rejection chart not drawn: {exc}")
    context.add_output_metadata(meta)
    return out


def _rejections_meta(out: list[Rejection], red: Redactor) -> dict[str, Any]:
    """Counts by stage/reason(/server), and a sample of each reason with its id, rule and failing call."""
    from collections import Counter

    from pipeline.report import rejection_samples, samples_markdown

    by = Counter(f"{r.stage}/{r.reason}" for r in out)
    table = "| stage/reason | count |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in by.most_common())
    triples = Counter((r.stage, r.reason, r.server or "") for r in out)
    samples = rejection_samples(out, per_reason=5, redactor=red)
    cols = ("rejection_id", "rule", "server", "failing_call", "detail")
    return {
        "total": len(out), "by_stage_reason": MetadataValue.md(table),
        "by_stage_reason_table": MetadataValue.table(
            records=[dg.TableRecord({"stage": st, "reason": rs, "server": sv, "count": n})
                     for (st, rs, sv), n in sorted(triples.items(), key=lambda kv: (-kv[1], kv[0]))],
            schema=dg.TableSchema(columns=[dg.TableColumn("stage", "string"), dg.TableColumn("reason", "string"),
                                           dg.TableColumn("server", "string"), dg.TableColumn("count", "int")])),
        "samples": MetadataValue.md(samples_markdown(samples, dict(by))),
        "samples_table": MetadataValue.table(records=[dg.TableRecord({c: r[c] for c in cols}) for r in samples],
                                             schema=dg.TableSchema(columns=[dg.TableColumn(c, "string") for c in cols])),
        "see_one": MetadataValue.text("prove lineage <rejection_id>  (the full path of any rejection; prove rejected --reason R lists them)"),
    }


@dg.asset(code_version=_cv("corpus"), group_name="corpus",
          description="A new immutable corpus version: Parquet train/eval splits, rejections and manifest.json.")
def corpus(context: AssetExecutionContext, settings: ProveSettings, augmented_examples, rejections, server_snapshots) -> dg.Output[str]:
    cfg = settings.build_config()
    snaps = _selected(settings, server_snapshots)
    progress.report("corpus", 2, 3, stage="write")
    path = stage_corpus(cfg, augmented_examples.items, rejections,
                        code_versions={"assets": CODE_VERSION, **{f"asset:{a}": v for a, v in all_code_versions().items()}},
                        tools_by_server={s: [t.name for t in snap.tools] for s, snap in snaps.items()},
                        extra={"schema_hashes": {s: snap.schema_hash for s, snap in sorted(snaps.items())},
                               "dagster": {"run_id": context.run_id}})
    m = json.loads((path / "manifest.json").read_text())
    comp = m["composition"]
    progress.report("corpus", 3, 3, stage="written", examples=comp["examples"])
    meta: dict[str, Any] = {
        "version": m["version"], "path": str(path), "examples": comp["examples"], "content_hash": m["content_hash"],
        "by_kind": MetadataValue.json(comp["by_kind"]), "by_server": MetadataValue.json(comp["by_server"]),
        "shares_vs_targets": MetadataValue.json({k: [comp["shares"][k], comp["targets"][k]] for k in comp["targets"]}),
        "tool_coverage": MetadataValue.json(m["tool_coverage"]),
    }
    png = path / "composition.png"
    if png.exists():
        meta["composition"] = png_markdown("composition", png)
    refresh_latest(cfg.data_dir)  # this version until a gate fails; then the newest good one
    try:  # SQL views over every version; a failure here must not cost the version just written
        from pipeline.sql import refresh

        meta["duckdb"] = MetadataValue.path(str(refresh(cfg.data_dir)))
    except Exception as exc:
        context.log.warning(f"DuckDB views not refreshed: {exc}")
    # the data version is the content hash: an identical rebuild leaves grpo_policy fresh
    return dg.Output(str(path), data_version=dg.DataVersion(m["content_hash"]), metadata=meta)


def _gate(settings: ProveSettings, corpus: str, name: str, passed: bool, metadata: dict[str, Any], **kw: Any) -> AssetCheckResult:
    """A blocking gate's result, recorded in the version too: a failed gate marks the version failed
    (kept, listed, never the default) and points LATEST and the SQL views back at the good versions."""
    record_gate(corpus, name, passed, metadata)
    if not passed:
        cfg = settings.build_config()
        refresh_latest(cfg.data_dir)
        from pipeline.sql import refresh

        refresh(cfg.data_dir)
    return AssetCheckResult(passed=passed, metadata=metadata, **kw)


@dg.asset_check(asset=corpus, blocking=True,
                description="Every selected server has accepted examples (as many servers as the multi-turn count can reach).")
def corpus_nonempty_per_server(settings: ProveSettings, corpus: str) -> AssetCheckResult:
    m = json.loads((Path(corpus) / "manifest.json").read_text())
    by = m["composition"]["by_server"]
    servers = settings.build_config().servers
    missing = [s for s in servers if not by.get(s)]
    # a request of fewer multi-turn examples than servers cannot reach them all: the gate asks for what it allows
    demanded = min(len(servers), int(m["composition"]["by_kind"].get("multi_turn", 0)) or len(servers))
    passed = len(servers) - len(missing) >= demanded
    return _gate(settings, corpus, "corpus_nonempty_per_server", passed,
                 {"missing": missing, "by_server": by, "servers_demanded": demanded}, severity=AssetCheckSeverity.ERROR)


@dg.asset_check(asset=corpus, blocking=True, description="No two multi-turn examples have Jaccard >= threshold on tool-call sequences.")
def corpus_no_near_duplicates(settings: ProveSettings, corpus: str) -> AssetCheckResult:
    from pipeline.dedup import shingles, similar_pairs

    cfg = settings.build_config()
    df = read_examples(corpus)
    mt = df.filter(df["kind"].is_in(list(TOOL_KINDS)))
    seen: dict[str, set[str]] = {}
    items = []
    for cid, ref in zip(mt["conversation_id"].to_list(), mt["reference"].to_list()):
        if cid in seen:
            continue
        sh = shingles([(c["name"], c["arguments"]) for turn in json.loads(ref) for c in turn], cfg.dedup.include_args)
        seen[cid] = sh
        items.append((cid, sh))
    pairs = similar_pairs(items, cfg.dedup.threshold)  # exact, by prefix filtering
    return _gate(settings, corpus, "corpus_no_near_duplicates", not pairs, {"pairs": len(pairs), "checked": len(items)})


@dg.asset_check(asset=corpus, blocking=True, description="Composition knobs within tolerance of their targets.")
def corpus_composition(settings: ProveSettings, corpus: str) -> AssetCheckResult:
    m = json.loads((Path(corpus) / "manifest.json").read_text())
    comp = m["composition"]
    tol = float(os.environ.get("PROVE_COMPOSITION_TOLERANCE", "0.02"))
    off = off_target(comp, tol)
    return _gate(settings, corpus, "corpus_composition", not off, {"off_target": off, "tolerance": tol})


@dg.asset_check(asset=corpus, blocking=True, description="The corpus linter (pipeline/lint.py) finds no defect: language, grounding, "
                "request variety; thresholds in the build config's lint section.")
def corpus_lint(settings: ProveSettings, corpus: str) -> AssetCheckResult:
    from pipeline.lint import lint_version

    rep = lint_version(corpus)
    return _gate(settings, corpus, "corpus_lint", rep.passed,
                 {"defects": {k: v for k, v in rep.counts.items() if v}, "samples": dict(rep.samples), "metrics": dict(rep.metrics)})


@dg.asset(code_version=_cv("grpo_policy"), group_name="training", deps=[],
          description="SFT on every turn, then GRPO on multi-step live rollouts with the programmatic reward; "
                      "evaluated before, after SFT and after GRPO.")
def grpo_policy(context: AssetExecutionContext, settings: ProveSettings, corpus: str) -> str:
    if not settings.train:
        context.log.info("training disabled (--no-train)")
        return ""
    from training.config import config_from_json
    from training.train import train

    cfg = settings.build_config()
    tcfg = config_from_json(settings.train_config_json)
    out_dir = cfg.data_path / "runs" / Path(corpus).name
    result = train(corpus, str(out_dir), tcfg, progress=progress.report if progress.active() else _log_progress(context))
    report = json.loads((out_dir / "eval_report.json").read_text())
    meta: dict[str, Any] = {"out_dir": str(out_dir), "result": MetadataValue.json(json.loads(json.dumps(result, default=str)))}
    for phase, ev in report["phases"].items():  # before / after_sft / after_grpo, 95% bootstrap intervals
        meta[f"eval_{phase}"] = MetadataValue.json({k: ev[k] for k in ("reward", "exact_success", "abstention_accuracy", "by_kind", "by_server")})
    meta["grpo_vs_sft"] = MetadataValue.json(report.get("grpo_vs_sft") or {})
    meta["frac_reward_zero_std_per_step"] = MetadataValue.json(report["frac_reward_zero_std_per_step"])
    meta["eval_report"] = MetadataValue.md((out_dir / "eval_report.md").read_text())
    curve = out_dir / "reward_curve.png"
    if curve.exists():
        meta["reward_curve"] = png_markdown("reward", curve)
    context.add_output_metadata(meta)
    return str(out_dir)


def _log_progress(context: AssetExecutionContext):
    """Training progress as log lines (a run launched from the UI, where no display listens): each phase's
    start and end, and every tenth step."""
    def log(phase: str, step: int, total: int, **metrics: Any) -> None:
        if step in (0, total) or step % 10 == 0:
            shown = ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in metrics.items())
            context.log.info(f"{phase} {step}/{total}" + (f": {shown}" if shown else ""))

    return log


PER_SERVER = [server_snapshots, dependency_graphs, tool_chains, user_queries, conversations, validated_conversations]
CROSS = [unique_conversations, augmented_examples, rejections, corpus, grpo_policy]
CHECKS = [corpus_nonempty_per_server, corpus_no_near_duplicates, corpus_composition, corpus_lint]
ALL_ASSETS = PER_SERVER + CROSS

# Steps run in processes forked from one that has already imported this module (the multiprocess
# executor's forkserver start method with preloaded modules) instead of spawned processes that each
# import it again (about 1 s less for a server's run of six steps; bench/parallel.py configures its job the same way).
FORKED_STEPS = {"execution": {"config": {"multiprocess": {"start_method": {"forkserver": {"preload_modules": ["assets.definitions"]}}}}}}
corpus_job = dg.define_asset_job("corpus_job", selection=dg.AssetSelection.assets(*CROSS), config=FORKED_STEPS)
# one run per server partition: probe -> replay for that server
server_job = dg.define_asset_job("server_job", selection=dg.AssetSelection.assets(*PER_SERVER), partitions_def=server_partitions,
                                 config=FORKED_STEPS)

DEFAULT_CRON = "0 3 * * 1"  # Mondays 03:00


def regeneration_schedule(cron: str | None = None, timezone: str | None = None) -> dg.ScheduleDefinition:
    """The corpus regeneration schedule; cron from ``PROVE_SCHEDULE_CRON`` (default weekly), off until turned on."""
    return dg.ScheduleDefinition(name="weekly_regeneration", job=corpus_job,
                                 cron_schedule=cron or os.environ.get("PROVE_SCHEDULE_CRON") or DEFAULT_CRON,
                                 execution_timezone=timezone or os.environ.get("PROVE_SCHEDULE_TIMEZONE") or "UTC",
                                 default_status=dg.DefaultScheduleStatus.STOPPED,
                                 description="Regenerates the corpus from the latest per-server outputs.")


weekly_regeneration = regeneration_schedule()


def server_schema_hash(cfg: BuildConfig, server: str) -> str:
    """The hash of the tools a server offers the pipeline now (what ``server_snapshots`` reports as its data version)."""
    from pipeline.env import Environment
    from pipeline.records import schema_hash
    from pipeline.serverfile import usable_tools

    sc = cfg.server_config(server)
    with Environment(sc) as env:
        tools, _ = usable_tools(sc, env.tools())
    return schema_hash(tools)


def _last_snapshot_hash(instance: dg.DagsterInstance, server: str) -> str | None:
    rec = instance.get_latest_data_version_record(dg.AssetKey("server_snapshots"), partition_key=server)
    mat = rec.asset_materialization if rec is not None else None
    return mat.tags.get("dagster/data_version") if mat is not None and mat.tags else None


@dg.sensor(job=server_job, minimum_interval_seconds=int(os.environ.get("PROVE_SENSOR_INTERVAL_S", "3600")),
           default_status=dg.DefaultSensorStatus.STOPPED,
           description="Connects to every configured server; when a server's tool schema hash changes, re-runs its partition.")
def schema_change_sensor(context: dg.SensorEvaluationContext, settings: ProveSettings):
    """Cursor: JSON ``{server: last seen schema hash}``. A server not in the cursor is compared with the
    data version of its latest ``server_snapshots`` materialization (requested when it has none)."""
    cfg = settings.build_config()
    try:
        seen: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    except ValueError:
        seen = {}
    current = dict(seen)
    requests: list[dg.RunRequest] = []
    unreachable: dict[str, str] = {}
    for server in cfg.servers:
        try:
            h = server_schema_hash(cfg, server)
        except Exception as exc:  # an unreachable server keeps its last hash and is tried again next tick
            unreachable[server] = f"{type(exc).__name__}: {exc}"
            continue
        last = seen.get(server) or (_last_snapshot_hash(context.instance, server) if _has_instance(context) else None)
        current[server] = h
        if h != last:
            context.log.info(f"{server}: schema hash {last} -> {h}")
            requests.append(dg.RunRequest(run_key=f"{server}:{last}->{h}", partition_key=server,
                                          tags={"prove/trigger": "schema_change", "prove/schema_hash": h}))
    have = set(context.instance.get_dynamic_partitions("servers")) if _has_instance(context) else set()
    missing = [r.partition_key for r in requests if r.partition_key not in have]
    cursor = json.dumps(current, sort_keys=True)
    if requests:
        return dg.SensorResult(run_requests=requests, cursor=cursor,
                               dynamic_partitions_requests=[server_partitions.build_add_request(missing)] if missing else None)
    why = "no server's tool schema changed" + (f"; unreachable: {unreachable}" if unreachable else "")
    return dg.SensorResult(skip_reason=dg.SkipReason(why), cursor=cursor)


def _has_instance(context: dg.SensorEvaluationContext) -> bool:
    try:
        return context.instance is not None
    except Exception:  # a context built without an instance raises on access
        return False


def resources(data_dir: str = "data", build_config: BuildConfig | None = None, train: bool = True, train_config_json: str = "{}") -> dict[str, Any]:
    cfg = build_config or BuildConfig(data_dir=data_dir)
    return {
        "settings": ProveSettings(build_config_json=cfg.model_dump_json(), train=train, train_config_json=train_config_json),
        "io_manager": StageStore(base_dir=str(Path(cfg.data_dir) / "stages")),
    }


defs = dg.Definitions(assets=ALL_ASSETS, asset_checks=CHECKS, jobs=[corpus_job, server_job], schedules=[weekly_regeneration],
                      sensors=[schema_change_sensor], resources=resources(os.environ.get("PROVE_DATA_DIR", "data")))
