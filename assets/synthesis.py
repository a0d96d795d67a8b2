"""The per-server assets (one partition per server): probe -> graph -> chains -> queries -> conversations -> replay.

Each asset is a thin call of its ``pipeline.stages`` step, plus what people want to see in the UI:
counts, rejection reasons and previews.
"""

import dagster as dg
from dagster import AssetExecutionContext, MetadataValue

from assets.code_versions import versioned
from assets.resources import ProveSettings, rejection_meta, server_partitions
from pipeline.core.redact import Redactor
from pipeline.stages import (StageOutput, stage_chains, stage_conversations, stage_graph, stage_queries, stage_snapshot,
                             stage_validate)

GROUP = "synthesis"


def _logged(context: AssetExecutionContext, what: str):
    """A progress callback logging ``what i/n`` at every tenth of the way and at the end: each log line is an
    event Dagster stores (at 13,500 examples a line every 50 items came to 1,800 events)."""
    def log(i: int, n: int) -> None:
        if i == n or (i * 10 // n) != ((i - 1) * 10 // n):
            context.log.info(f"{what} {i}/{n}")
    return log


@versioned(partitions_def=server_partitions, group_name=GROUP,
          description="Real entities sampled from the live server through its read-only tools only.")
def server_snapshots(context: AssetExecutionContext, settings: ProveSettings):
    snap = stage_snapshot(settings.build_config(), context.partition_key)
    # the data version is the tool-schema hash: re-probing an unchanged server leaves its downstream
    # partitions fresh; a server whose tools changed makes only its own partitions stale
    return dg.Output(snap, data_version=dg.DataVersion(snap.schema_hash), metadata={
        "entities": len(snap.entities), "tools": len(snap.tools), "probe_calls": len(snap.probe_calls),
        "contexts": len(snap.contexts()), "context_seeds": MetadataValue.json([c.seed for c in snap.contexts()]),
        "schema_hash": snap.schema_hash, "skipped_tools": MetadataValue.json(snap.skipped_tools),
        "sample": MetadataValue.json(Redactor.for_snapshots([snap]).obj(dict(list(snap.entities.items())[:5]))),
    })


@versioned(partitions_def=server_partitions, group_name=GROUP,
          description="Tool dependency graph: explicit and implicit edges confirmed by live execution; cached by schema hash.")
def dependency_graphs(context: AssetExecutionContext, settings: ProveSettings, server_snapshots):
    graph, hit = stage_graph(settings.build_config(), server_snapshots)
    confirmed = [e for e in graph.edges if e.confirmed]
    context.add_output_metadata({
        "edges": len(confirmed), "explicit": sum(e.kind == "explicit" for e in confirmed),
        "implicit": sum(e.kind == "implicit" for e in confirmed), "cache_hit": hit,
        "unchainable": MetadataValue.json(graph.unchainable),
        "edge_list": MetadataValue.md("\n".join(f"- `{e.src}` → `{e.dst}` ({e.kind}, {e.source})" for e in confirmed[:60])),
    })
    return graph


@versioned(partitions_def=server_partitions, group_name=GROUP,
          description="Tool chains of length 2-5 sampled along the dependency graph.")
def tool_chains(context: AssetExecutionContext, settings: ProveSettings, server_snapshots, dependency_graphs) -> StageOutput:
    out = stage_chains(settings.build_config(), server_snapshots, dependency_graphs)
    context.add_output_metadata({"chains": len(out.items), "tool_coverage": out.stats["tool_coverage"],
                                 "length_histogram": MetadataValue.json({str(k): v for k, v in out.stats["length_histogram"].items()}),
                                 **rejection_meta(out.rejections)})
    return out


@versioned(partitions_def=server_partitions, group_name=GROUP,
          description="Grounded user requests per turn (information level, persona), from the template or LLM backend.")
def user_queries(context: AssetExecutionContext, settings: ProveSettings, server_snapshots, tool_chains) -> StageOutput:
    red = Redactor.for_snapshots([server_snapshots])
    out = stage_queries(settings.build_config(), server_snapshots, tool_chains.items, progress=_logged(context, "queries"))
    context.add_output_metadata({"queries": len(out.items), "info_levels": MetadataValue.json(out.stats.get("info_levels", {})),
                                 "preview": MetadataValue.md("\n".join(f"- {red.text(q.turns[0])}" for q in out.items[:8])),
                                 **rejection_meta(out.rejections)})
    return out


@versioned(partitions_def=server_partitions, group_name=GROUP,
          description="Conversations simulated live by the state machine (calls, results, recovery, replies).")
def conversations(context: AssetExecutionContext, settings: ProveSettings, server_snapshots, tool_chains, user_queries) -> StageOutput:
    out = stage_conversations(settings.build_config(), server_snapshots, tool_chains.items, user_queries.items,
                              progress=_logged(context, "conversations"))
    context.add_output_metadata({"conversations": len(out.items), "outcomes": MetadataValue.json(out.stats.get("outcomes", {})),
                                 **rejection_meta(out.rejections)})
    return out


@versioned(partitions_def=server_partitions, group_name=GROUP,
          description="Conversations that replay on a freshly reset session: error rate, sensitive provenance, determinism.")
def validated_conversations(context: AssetExecutionContext, settings: ProveSettings, conversations) -> StageOutput:
    out = stage_validate(settings.build_config(), conversations.items, context.partition_key)
    context.add_output_metadata({"validated": len(out.items), "pass_rate": out.stats["pass_rate"], **rejection_meta(out.rejections)})
    return out


PER_SERVER = [server_snapshots, dependency_graphs, tool_chains, user_queries, conversations, validated_conversations]
