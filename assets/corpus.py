"""The cross-server assets: dedup -> augment -> rejections -> corpus, and the corpus's blocking quality gates."""

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg
from dagster import AssetCheckResult, AssetCheckSeverity, AssetExecutionContext, MetadataValue

from assets import progress
from assets.code_versions import CODE_VERSION, code_version, versioned
from assets.resources import ProveSettings, png_markdown, rejection_meta, selected
from assets.synthesis import PER_SERVER
from pipeline.core.config import BuildConfig
from pipeline.core.records import TOOL_KINDS, Rejection, rejection
from pipeline.core.redact import Redactor, redact_rejections
from pipeline.core.similarity import reference_shingles, similar_pairs
from pipeline.core.stage_names import StageName
from pipeline.corpus.columns import reference_of
from pipeline.corpus.lineage import rejection_samples, rejection_story, samples_markdown, story_markdown
from pipeline.corpus.lint import lint_version
from pipeline.corpus.report import rejections_png
from pipeline.corpus.sql import refresh
from pipeline.corpus.store import off_target, read_examples, record_gate, refresh_latest, rejections_of
from pipeline.language.teacher_client import usage_numbers, usage_summary
from pipeline.stages.assembly import stage_augment, stage_corpus, stage_dedup
from pipeline.stages.base import StageOutput
from pipeline.stages.discovery import probe_rejections
from pipeline.stages.registry import STAGES, Registry

GROUP = "corpus"


@versioned(group_name=GROUP, description=STAGES["unique_conversations"].description)
def unique_conversations(
    context: AssetExecutionContext, settings: ProveSettings, validated_conversations
) -> StageOutput:
    convs = [c for out in selected(settings, validated_conversations).values() for c in out.items]
    progress.report("dedup", 0, 1)
    out = stage_dedup(settings.build_config(), convs)
    progress.report("dedup", 1, 1, kept=len(out.items), of=len(convs))
    context.add_output_metadata({"input": len(convs), "kept": len(out.items), **rejection_meta(out.rejections)})
    return out


@versioned(group_name=GROUP, description=STAGES["augmented_examples"].description)
def augmented_examples(
    context: AssetExecutionContext, settings: ProveSettings, unique_conversations, server_snapshots
) -> StageOutput:
    progress.report("corpus", 0, 3, stage="augment")
    out = stage_augment(settings.build_config(), unique_conversations.items, selected(settings, server_snapshots))
    progress.report("corpus", 1, 3, stage="rejections")
    context.add_output_metadata(
        {
            "examples": len(out.items),
            "kinds": MetadataValue.json(out.stats["kinds"]),
            "augmentations": MetadataValue.json(out.stats["augmentations"]),
        }
    )
    return out


def unavailable_rejections(cfg: BuildConfig, snapshots: dict[str, Any]) -> list[Rejection]:
    """A server whose per-server run failed (crashed, hung, unreachable) is a rejection of the build, after
    the probe calls it failed on when it got as far as a snapshot."""
    out: list[Rejection] = []
    for server, why in cfg.unavailable_servers.items():
        if server in snapshots:
            out.extend(probe_rejections(snapshots[server]))
        out.append(rejection(StageName.PROBE, "server_unavailable", why, server, {"server": server}))
    return out


def gather_rejections(settings: ProveSettings, stages: Registry, inputs: dict[str, Any]) -> list[Rejection]:
    """Every rejecting stage's rejections (per-server stages over the build's servers, then the cross-server
    ones, in build order) and the unavailable servers', redacted: what the corpus version writes."""
    cfg = settings.build_config()
    out: list[Rejection] = []
    for stage in stages.rejecting():
        outputs = selected(settings, inputs[stage.asset]).values() if stage.per_server else [inputs[stage.asset]]
        for o in outputs:
            out.extend(o.rejections)
    snapshots = inputs["server_snapshots"]
    out.extend(unavailable_rejections(cfg, snapshots))
    return redact_rejections(out, Redactor.for_snapshots(selected(settings, snapshots).values()))


def _rejections_meta(out: list[Rejection], red: Redactor) -> dict[str, Any]:
    """Counts by stage/reason(/server), and a sample of each reason with its id, rule and failing call."""
    by = Counter(f"{r.stage}/{r.reason}" for r in out)
    table = "| stage/reason | count |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in by.most_common())
    triples = Counter((r.stage, r.reason, r.server or "") for r in out)
    samples = rejection_samples(out, per_reason=5, redactor=red)
    cols = ("rejection_id", "rule", "server", "failing_call", "detail")
    return {
        "total": len(out),
        # each reason's count as a number, so the Plots tab draws it across builds
        **{f"rejected_{k.replace('/', '_')}": n for k, n in sorted(by.items())},
        "by_stage_reason": MetadataValue.md(table),
        "by_stage_reason_table": MetadataValue.table(
            records=[
                dg.TableRecord({"stage": st, "reason": rs, "server": sv, "count": n})
                for (st, rs, sv), n in sorted(triples.items(), key=lambda kv: (-kv[1], kv[0]))
            ],
            schema=dg.TableSchema(
                columns=[
                    dg.TableColumn("stage", "string"),
                    dg.TableColumn("reason", "string"),
                    dg.TableColumn("server", "string"),
                    dg.TableColumn("count", "int"),
                ]
            ),
        ),
        "samples": MetadataValue.md(samples_markdown(samples, dict(by))),
        "samples_table": MetadataValue.table(
            records=[dg.TableRecord({c: r[c] for c in cols}) for r in samples],
            schema=dg.TableSchema(columns=[dg.TableColumn(c, "string") for c in cols]),
        ),
        "see_one": MetadataValue.text(
            "the lineage_<stage>_<reason> entries: the whole story of one rejection per rule; any rejection: "
            "prove lineage <rejection_id> (prove rejected --reason R lists them)"
        ),
        **lineage_entries(out, red),
    }


def lineage_entries(out: list[Rejection], red: Redactor) -> dict[str, Any]:
    """Per rule, the whole lineage of its first rejection (in id order, as the samples list them), as Markdown:
    read in the UI, without the command line."""
    first: dict[str, Rejection] = {}
    for r in sorted(out, key=lambda r: r.rejection_id):
        first.setdefault(f"lineage_{r.stage}_{r.reason}", r)
    return {k: MetadataValue.md(story_markdown(rejection_story(r), red)) for k, r in sorted(first.items())}


def teacher_usage(settings: ProveSettings, **by_stage: dict[str, Any]) -> dict[str, Any] | None:
    """The teacher's usage per stage and server of this build (from the stages' stats), with the total."""
    usages = {
        f"{stage}/{server}": out.stats["teacher"]
        for stage, per in by_stage.items()
        for server, out in sorted(selected(settings, per).items())
        if out.stats.get("teacher")
    }
    return usage_summary(usages) if usages else None


def teacher_metadata(summary: dict[str, Any] | None) -> dict[str, Any]:
    """The teacher's totals as numbers Dagster can plot across versions, and the breakdown as JSON."""
    if not summary:
        return {}
    return {**usage_numbers(summary["total"]), "teacher": MetadataValue.json(summary)}


def corpus_numbers(manifest: dict[str, Any]) -> dict[str, float | int]:
    """A version's counts and shares as plain numbers, which the asset's Plots tab draws across versions."""
    comp = manifest["composition"]
    out: dict[str, float | int] = {f"kind_{k}": int(v) for k, v in sorted(comp["by_kind"].items())}
    out.update({f"share_{k}": float(comp["shares"][k]) for k in comp["targets"]})
    out["rejections"] = int(manifest["counts"]["rejections"])
    out["servers"] = len(comp["by_server"])
    return out


def write_version(
    context: AssetExecutionContext, settings: ProveSettings, stages: Registry, inputs: dict[str, Any]
) -> dg.Output[str]:
    """A new corpus version from the augmented examples and every stage's rejections, with its metadata."""
    augmented_examples, server_snapshots = inputs["augmented_examples"], inputs["server_snapshots"]
    user_queries, conversations = inputs["user_queries"], inputs["conversations"]
    rejections = gather_rejections(settings, stages, inputs)
    cfg = settings.build_config()
    snaps = selected(settings, server_snapshots)
    teacher = teacher_usage(settings, query=user_queries, simulate=conversations)
    progress.report("corpus", 2, 3, stage="write")
    # the code versions of the assets that made this version (the policy's are its own run's business)
    versions = {k.to_user_string(): v for a in (*PER_SERVER, *CORPUS) for k, v in a.code_versions_by_key.items()}
    path = stage_corpus(
        cfg,
        augmented_examples.items,
        rejections,
        code_versions={"assets": CODE_VERSION, **{f"asset:{a}": v for a, v in versions.items()}},
        tools_by_server={s: [t.name for t in snap.tools] for s, snap in snaps.items()},
        reach=augmented_examples.stats.get("reach"),
        extra={
            "schema_hashes": {s: snap.schema_hash for s, snap in sorted(snaps.items())},
            "dagster": {"run_id": context.run_id},
            **({"teacher": teacher} if teacher else {}),
        },
    )
    m = json.loads((path / "manifest.json").read_text())
    comp = m["composition"]
    progress.report("corpus", 3, 3, stage="written", examples=comp["examples"])
    meta: dict[str, Any] = {
        "version": m["version"],
        "path": MetadataValue.path(str(Path(path).resolve())),
        "examples": comp["examples"],
        "content_hash": m["content_hash"],
        "by_kind": MetadataValue.json(comp["by_kind"]),
        "by_server": MetadataValue.json(comp["by_server"]),
        "shares_vs_targets": MetadataValue.json(
            {k: {"share": comp["shares"][k], "target": comp["targets"][k]} for k in comp["targets"]}
        ),
        **corpus_numbers(m),
        "tool_coverage": MetadataValue.json(m["tool_coverage"]),
        **teacher_metadata(teacher),
    }
    png = path / "composition.png"
    if png.exists():
        meta["composition"] = png_markdown("composition", png)
    refresh_latest(cfg.data_dir)  # this version until a gate fails; then the newest good one
    try:  # SQL views over every version; a failure here must not cost the version just written
        meta["duckdb"] = MetadataValue.path(str(refresh(cfg.data_dir).resolve()))
    except Exception as exc:
        context.log.warning(f"DuckDB views not refreshed: {exc}")
    # the data version is the content hash: an identical rebuild leaves grpo_policy fresh
    return dg.Output(str(path), data_version=dg.DataVersion(m["content_hash"]), metadata=meta)


def corpus_asset(stages: Registry = STAGES) -> dg.AssetsDefinition:
    """The corpus asset, reading the augmented examples whole and every other rejecting stage's rejections (the
    small sidecar), so a run cancelled before it leaves no rejections that look like a version's."""
    part = {"prove/part": "rejections"}
    ins = {s.asset: dg.AssetIn(metadata=part) for s in stages.rejecting() if s.asset != "augmented_examples"}
    ins.update(augmented_examples=dg.AssetIn(), server_snapshots=dg.AssetIn())
    for stats_only in ("user_queries", "conversations"):  # the teacher's usage
        ins.setdefault(stats_only, dg.AssetIn(metadata=part))

    def corpus(context: AssetExecutionContext, settings: ProveSettings, **inputs: Any) -> dg.Output[str]:
        return write_version(context, settings, stages, inputs)

    return dg.asset(
        name="corpus", ins=ins, group_name=GROUP, description=STAGES["corpus"].description,
        code_version=code_version(corpus),
    )(corpus)  # fmt: skip


# made once every helper it calls is defined (its code version reads them from this module's globals)
corpus = corpus_asset()


def _gate(
    settings: ProveSettings, corpus: str, name: str, passed: bool, metadata: dict[str, Any], **kw: Any
) -> AssetCheckResult:
    """A blocking gate's result, recorded in the version too: a failed gate marks the version failed
    (kept, listed, never the default) and points LATEST and the SQL views back at the good versions."""
    record_gate(corpus, name, passed, metadata)
    if not passed:
        cfg = settings.build_config()
        refresh_latest(cfg.data_dir)
        refresh(cfg.data_dir)
    return AssetCheckResult(passed=passed, metadata=metadata, **kw)


@dg.asset_check(
    asset=corpus,
    blocking=True,
    description="Every selected server has accepted examples (as many servers as the multi-turn count can reach).",
)
def corpus_nonempty_per_server(settings: ProveSettings, corpus: str) -> AssetCheckResult:
    m = json.loads((Path(corpus) / "manifest.json").read_text())
    by = m["composition"]["by_server"]
    servers = settings.build_config().servers
    missing = [s for s in servers if not by.get(s)]
    # a request of fewer multi-turn examples than servers cannot reach them all: the gate asks for what it allows
    demanded = min(len(servers), int(m["composition"]["by_kind"].get("multi_turn", 0)) or len(servers))
    passed = len(servers) - len(missing) >= demanded
    return _gate(
        settings,
        corpus,
        "corpus_nonempty_per_server",
        passed,
        {"missing": missing, "by_server": by, "servers_demanded": demanded},
        severity=AssetCheckSeverity.ERROR,
    )


@dg.asset_check(
    asset=corpus,
    blocking=True,
    description="No two multi-turn examples have Jaccard >= threshold on tool-call sequences.",
)
def corpus_no_near_duplicates(settings: ProveSettings, corpus: str) -> AssetCheckResult:
    cfg = settings.build_config()
    df = read_examples(corpus)
    mt = df.filter(df["kind"].is_in(list(TOOL_KINDS)))
    refs: dict[str, list[list[dict[str, Any]]]] = {}
    for cid, ref in zip(mt["conversation_id"].to_list(), mt["reference"].to_list()):
        if cid not in refs:  # the first row of each conversation
            refs[cid] = reference_of(ref)  # arguments too: a call of SQL is told apart by its statement
    items = [(cid, reference_shingles(ref, cfg.dedup.include_args)) for cid, ref in refs.items()]
    pairs = similar_pairs(items, cfg.dedup.threshold)  # exact, by prefix filtering
    return _gate(settings, corpus, "corpus_no_near_duplicates", not pairs, {"pairs": len(pairs), "checked": len(items)})


@dg.asset_check(asset=corpus, blocking=True, description="Composition knobs within tolerance of their targets.")
def corpus_composition(settings: ProveSettings, corpus: str) -> AssetCheckResult:
    m = json.loads((Path(corpus) / "manifest.json").read_text())
    tol = float(os.environ.get("PROVE_COMPOSITION_TOLERANCE", "0.02"))
    off = off_target(m["composition"], tol)
    return _gate(
        settings,
        corpus,
        "corpus_composition",
        not off,
        {"off_target": off, "tolerance": tol, "knobs": composition_allowances(m["composition"], tol)},
    )


def composition_allowances(comp: dict[str, Any], tol: float) -> dict[str, dict[str, Any]]:
    """Per knob: its share, its target, the allowance it is held to (the tolerance, or one example's share of the
    kind it counts when that is larger: 1 example of 12 cannot come nearer than 1/12) and whether it is within."""
    step = comp.get("granularity", {})
    out = {}
    for k, target in comp["targets"].items():
        allowance = max(tol, step.get(k, 0.0)) if tol >= 0 else tol
        out[k] = {
            "share": comp["shares"][k],
            "target": target,
            "allowance": round(allowance, 4),
            "one_example": round(step.get(k, 0.0), 4),
            "within": abs(comp["shares"][k] - target) <= allowance + 1e-9,
        }
    return out


@dg.asset_check(
    asset=corpus,
    blocking=True,
    description="The corpus linter (pipeline/corpus/lint.py) finds no defect: language, grounding, "
    "request variety; thresholds in the build config's lint section.",
)
def corpus_lint(settings: ProveSettings, corpus: str) -> AssetCheckResult:
    rep = lint_version(corpus)
    return _gate(
        settings,
        corpus,
        "corpus_lint",
        rep.passed,
        {
            "defects": {k: v for k, v in rep.counts.items() if v},
            "samples": dict(rep.samples),
            "metrics": dict(rep.metrics),
        },
    )


# Dagster's step priority: of the steps ready at once after the corpus and its gates, the executors start this one
# first, so why records were rejected is in the UI seconds after the corpus, not after grpo_policy's training.
FIRST = {"dagster/priority": "1"}


# defined once every helper it calls is (its code version reads them from this module's globals)
@versioned(
    group_name=GROUP,
    description="The rejections of the corpus version just written: every stage's, with reason code, detail, "
    "upstream ids and lineage; counts, samples, a chart and per rule one whole story as metadata.",
    op_tags=FIRST,
)
def rejections(
    context: AssetExecutionContext, settings: ProveSettings, corpus: str, server_snapshots
) -> list[Rejection]:
    cfg = settings.build_config()
    out = rejections_of(corpus)
    red = Redactor.for_snapshots(selected(settings, server_snapshots).values())
    meta = {"version": Path(corpus).name, **_rejections_meta(out, red)}
    try:
        (cfg.data_path / "reports").mkdir(parents=True, exist_ok=True)
        png = rejections_png(
            dict(Counter(f"{r.stage}/{r.reason}" for r in out)), cfg.data_path / "reports" / "rejections.png"
        )
        meta["chart"] = png_markdown("rejections", png)
    except Exception as exc:  # the chart is a nicety
        context.log.warning(f"rejection chart not drawn: {exc}")
    context.add_output_metadata(meta)
    return out


CORPUS = [unique_conversations, augmented_examples, corpus, rejections]
CHECKS = [corpus_nonempty_per_server, corpus_no_near_duplicates, corpus_composition, corpus_lint]
