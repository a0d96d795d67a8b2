"""The per-server discovery steps: probe the server's worlds, find the dependency graph, sample chains.

Each step is built from its own config section (``Step.of(cfg)`` picks it out of the build's
config) and runs on one server; the ``stage_*`` functions are the entry points the assets call.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pipeline.core.config import (
    BuildConfig,
    ChainConfig,
    DedupConfig,
    GraphConfig,
    ProbeConfig,
    QueryConfig,
    ServerConfig,
)
from pipeline.core.records import Chain, DependencyGraph, Rejection, Snapshot, rejection
from pipeline.core.redact import Redactor
from pipeline.core.servers_file import usable_tools
from pipeline.core.speedups import heap_settled
from pipeline.core.stage_names import StageName
from pipeline.discovery.chains import coverage, extract_chains
from pipeline.discovery.graph import cached_discover, llm_pair_classifier
from pipeline.discovery.probe import probe
from pipeline.env import Environment
from pipeline.stages.base import Markdown, Produced, Progress, StageOutput, cache_dir, server_env
from pipeline.stages.plan import chains_wanted, n_contexts
from pipeline.synthesis.queries import LLMBackend

# graph discovery's cache folder when the build names none (``graph.cache_dir``): builds in several data folders
# then share the graphs of the same servers (:func:`pipeline.discovery.graph.cached_discover` says what "the same" is)
GRAPH_CACHE_ENV = "PROVE_GRAPH_CACHE_DIR"


@dataclass(frozen=True)
class SnapshotStep:
    """Probe the world of each sampled context (a built-in server's next seeds; a third-party server's one world)."""

    probe: ProbeConfig
    seed: int
    contexts: int

    @classmethod
    def of(cls, cfg: BuildConfig) -> SnapshotStep:
        return cls(cfg.probe, cfg.seed, n_contexts(cfg))

    def run(self, env: Environment, server: ServerConfig) -> Snapshot:
        tools, excluded = usable_tools(server, env.tools())
        secrets = server.resolved_secrets() or None

        def probe_world(seed: int) -> Snapshot:
            with env.session(seed) as s:
                return probe(
                    s,
                    tools,
                    self.probe,
                    allowlist=server.probe_allowlist,
                    config_secrets=secrets,
                    known=server.resolved_known_values(),
                )

        snap = probe_world(self.seed)
        snap.skipped_tools.update(excluded)
        # the context is refreshed every k conversations: each refresh probes the world of the next seed
        # (new entities, balances, names); a third-party server has one world, so it keeps one context
        snap.refreshes = [
            probe_world(self.seed + j) for j in range(1, self.contexts if server.kind == "builtin" else 1)
        ]
        return snap


@dataclass(frozen=True)
class GraphStep:
    """Discover (or read from the cache) the server's dependency graph."""

    graph: GraphConfig
    seed: int
    cache: Path
    query: QueryConfig  # the teacher, when ``graph.llm`` classifies tool pairs
    llm_cache: Path
    teacher_slots: int = 1  # the build's steps that may ask the teacher at once (they share its max_concurrency)

    @classmethod
    def of(cls, cfg: BuildConfig) -> GraphStep:
        return cls(
            cfg.graph,
            cfg.seed,
            cache_dir(cfg.graph.cache_dir or os.environ.get(GRAPH_CACHE_ENV) or None, cfg.data_path, "graphs"),
            cfg.query,
            cache_dir(cfg.query.cache_dir, cfg.data_path, "llm"),
            cfg.deployment.steps_at_once,
        )

    def run(self, env: Environment, snap: Snapshot) -> tuple[DependencyGraph, bool]:
        classifier, classifier_id = None, ""
        if self.graph.llm:
            teacher = LLMBackend(self.query, self.llm_cache, steps_at_once=self.teacher_slots)
            classifier = llm_pair_classifier(teacher, self.query.llm_model or "")
            classifier_id = f"{self.query.llm_model}@{self.query.llm_base_url}"
        return cached_discover(
            env, snap, self.graph, self.cache, seed=self.seed, llm_classifier=classifier, classifier_id=classifier_id
        )


def assign_contexts(chains: list[Chain], snap: Snapshot, every: int) -> None:
    """Chain i is simulated in context i // every: on that context's world seed, with its sampled values."""
    ctxs = snap.contexts()
    for i, c in enumerate(chains):
        ctx = ctxs[min(len(ctxs) - 1, i // every)] if every else snap
        c.seed, c.snapshot_id = ctx.seed, ctx.snapshot_id


def probe_rejections(snap: Snapshot) -> list[Rejection]:
    """Probe calls on which the server crashed or hung."""
    return [
        rejection(
            StageName.PROBE,
            "server_error",
            f"{c['name']}: {c.get('error') or 'the server failed'}",
            snap.server,
            {"snapshot_id": ctx.snapshot_id, "tool": c["name"]},
            c,
            record_type="probe_call",
        )
        for ctx in snap.contexts()
        for c in ctx.probe_calls
        if c.get("error_code") == "server_error"
    ]


@dataclass(frozen=True)
class ChainsStep:
    """Sample tool chains from the graph, spread over the sampled contexts."""

    chains: ChainConfig
    dedup: DedupConfig  # chains that are near-duplicates of a kept one are not sampled
    seed: int
    wanted: int
    refresh_every: int

    @classmethod
    def of(cls, cfg: BuildConfig) -> ChainsStep:
        return cls(cfg.chains, cfg.dedup, cfg.seed, chains_wanted(cfg), cfg.probe.refresh_every)

    def run(self, snap: Snapshot, graph: DependencyGraph) -> StageOutput:
        chains = extract_chains(graph, snap, self.wanted, self.chains, seed=self.seed, dedup_cfg=self.dedup)
        assign_contexts(chains, snap, self.refresh_every)
        out = StageOutput(items=chains, rejections=probe_rejections(snap))
        out.stats = {
            "chains": len(chains),
            "tool_coverage": coverage(chains, [t.name for t in snap.tools]),
            "length_histogram": dict(Counter(len(c.steps) for c in chains)),
            "unchainable": graph.unchainable,
        }
        if not chains:
            out.rejections.append(
                rejection(
                    StageName.CHAINS,
                    "no_chains",
                    f"no dependency edges were confirmed for {snap.server}",
                    snap.server,
                    {"snapshot_id": snap.snapshot_id, "graph_id": graph.graph_id},
                    graph,
                )
            )
        return out


@heap_settled
def stage_snapshot(cfg: BuildConfig, server: str, env: Environment | None = None) -> Snapshot:
    with server_env(cfg, server, env) as e:
        return SnapshotStep.of(cfg).run(e, cfg.server_config(server))


@heap_settled
def stage_graph(cfg: BuildConfig, snap: Snapshot, env: Environment | None = None) -> tuple[DependencyGraph, bool]:
    with server_env(cfg, snap.server, env) as e:
        return GraphStep.of(cfg).run(e, snap)


@heap_settled
def stage_chains(cfg: BuildConfig, snap: Snapshot, graph: DependencyGraph) -> StageOutput:
    return ChainsStep.of(cfg).run(snap, graph)


# The registered stages' runs (pipeline.stages.registry): each asset calls one and shows its metadata.


def run_snapshot(cfg: BuildConfig, server: str, progress: Progress | None) -> Produced:
    snap = stage_snapshot(cfg, server)
    # the data version is the tool-schema hash: re-probing an unchanged server leaves its downstream
    # partitions fresh; a server whose tools changed makes only its own partitions stale
    return Produced(
        snap,
        {
            "entities": len(snap.entities),
            "tools": len(snap.tools),
            "probe_calls": len(snap.probe_calls),
            "contexts": len(snap.contexts()),
            "context_seeds": [c.seed for c in snap.contexts()],
            "schema_hash": snap.schema_hash,
            "skipped_tools": snap.skipped_tools,
            "sample": Redactor.for_snapshots([snap]).obj(dict(list(snap.entities.items())[:5])),
        },
        data_version=snap.schema_hash,
    )


def run_graph(cfg: BuildConfig, server: str, progress: Progress | None, server_snapshots: Snapshot) -> Produced:
    graph, hit = stage_graph(cfg, server_snapshots)
    confirmed = [e for e in graph.edges if e.confirmed]
    return Produced(
        graph,
        {
            "edges": len(confirmed),
            "explicit": sum(e.kind == "explicit" for e in confirmed),
            "implicit": sum(e.kind == "implicit" for e in confirmed),
            "cache_hit": hit,
            "unchainable": graph.unchainable,
            "edge_list": Markdown("\n".join(f"- `{e.src}` → `{e.dst}` ({e.kind}, {e.source})" for e in confirmed[:60])),
        },
    )


def run_chains(
    cfg: BuildConfig,
    server: str,
    progress: Progress | None,
    server_snapshots: Snapshot,
    dependency_graphs: DependencyGraph,
) -> Produced:
    out = stage_chains(cfg, server_snapshots, dependency_graphs)
    return Produced(
        out,
        {
            "chains": len(out.items),
            "tool_coverage": out.stats["tool_coverage"],
            "length_histogram": {str(k): v for k, v in out.stats["length_histogram"].items()},
        },
    )
