"""The per-server assets (one partition per server): probe -> graph -> chains -> queries -> conversations -> replay.

Made from the stage registry (``pipeline.stages.registry``): one asset per per-server stage, a thin call of
its ``run`` plus what people want to see in the UI (its metadata, its rejection reasons). A stage registered
there appears here, in the asset graph and in the server job, with nothing to add in this package.
"""

from typing import Any

import dagster as dg
from dagster import AssetExecutionContext, MetadataValue

from assets import progress
from assets.code_versions import code_version
from assets.resources import ProveSettings, rejection_meta, server_partitions
from pipeline.stages.base import Markdown, StageOutput
from pipeline.stages.registry import STAGES, Registry, Stage

GROUP = "synthesis"


def _logged(context: AssetExecutionContext, what: str):
    """A progress callback logging ``what i/n`` at every tenth of the way and at the end: each log line is an
    event Dagster stores (at 13,500 examples a line every 50 items came to 1,800 events). The teacher's answers
    (``phase="teacher"``) are logged the same way with answers per second and requests in flight, and shown on the
    synthesis bar of ``prove build``."""

    def log(i: int, n: int, phase: str | None = None, **metrics: Any) -> None:
        tenth = i == n or (i * 10 // n) != ((i - 1) * 10 // n)
        if phase == "teacher":
            per_s, in_flight = metrics.get("per_s", 0.0), metrics.get("in_flight")
            progress.report("synthesis", 0, 1, answers_per_s=per_s, in_flight=in_flight)
            if tenth:
                context.log.info(
                    f"{what}: teacher {i}/{n} answered, {metrics.get('in_flight')} in flight, {metrics.get('per_s')}/s"
                )
        elif tenth:
            context.log.info(f"{what} {i}/{n}")

    return log


def metadata_values(meta: dict[str, Any]) -> dict[str, Any]:
    """A stage's plain metadata as Dagster shows it: Markdown as Markdown, dicts and lists as JSON."""
    out: dict[str, Any] = {}
    for k, v in meta.items():
        if isinstance(v, Markdown):
            out[k] = MetadataValue.md(str(v))
        elif isinstance(v, (dict, list, tuple)):
            out[k] = MetadataValue.json(v)
        else:
            out[k] = v
    return out


def run_stage(
    stage: Stage, context: AssetExecutionContext, settings: ProveSettings, inputs: dict[str, Any]
) -> dg.Output:
    """One partition of a per-server stage: its run on the partition's server, its output with its metadata."""
    progress = _logged(context, stage.progress_label) if stage.progress_label else None
    produced = stage.run(settings.build_config(), context.partition_key, progress, **inputs)  # type: ignore[misc]
    meta = metadata_values(produced.metadata)
    if isinstance(produced.value, StageOutput):
        meta.update(rejection_meta(produced.value.rejections))
    version = dg.DataVersion(produced.data_version) if produced.data_version else None
    return dg.Output(produced.value, data_version=version, metadata=meta)


def stage_asset(stage: "Stage") -> dg.AssetsDefinition:
    """The Dagster asset of a per-server stage (its code version: this module's part and the stage's own code)."""

    def compute(context: AssetExecutionContext, settings: ProveSettings, **inputs: Any) -> dg.Output:
        return run_stage(stage, context, settings, inputs)

    compute.also_runs = (stage.run,)  # type: ignore[attr-defined]  # hashed into its code version
    return dg.asset(
        name=stage.asset,
        ins={i: dg.AssetIn(i) for i in stage.inputs},
        partitions_def=server_partitions,
        group_name=stage.group,
        description=stage.description,
        code_version=code_version(compute),
    )(compute)


def per_server_assets(stages: Registry = STAGES) -> list[dg.AssetsDefinition]:
    return [stage_asset(s) for s in stages.per_server()]


PER_SERVER = per_server_assets()
server_snapshots, dependency_graphs, tool_chains, user_queries, conversations, validated_conversations = PER_SERVER
