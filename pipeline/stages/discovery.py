"""The per-server discovery steps: probe the server's worlds, find the dependency graph, sample chains.

Each step is built from its own config section (``Step.of(cfg)`` picks it out of the build's
config) and runs on one server; the ``stage_*`` functions are the entry points the assets call.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pipeline.discovery.chains import coverage, extract_chains
from pipeline.core.config import BuildConfig, ChainConfig, DedupConfig, GraphConfig, ProbeConfig, QueryConfig, ServerConfig
from pipeline.env import Environment
from pipeline.core.speedups import heap_settled
from pipeline.discovery.graph import cached_discover
from pipeline.discovery.probe import probe
from pipeline.core.records import Chain, DependencyGraph, Rejection, Snapshot, rejection
from pipeline.stages.base import StageOutput, cache_dir, server_env
from pipeline.stages.plan import chains_wanted, n_contexts


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
        from pipeline.core.servers_file import usable_tools

        tools, excluded = usable_tools(server, env.tools())
        secrets = server.resolved_secrets() or None

        def probe_world(seed: int) -> Snapshot:
            with env.session(seed) as s:
                return probe(s, tools, self.probe, allowlist=server.probe_allowlist, config_secrets=secrets)

        snap = probe_world(self.seed)
        snap.skipped_tools.update(excluded)
        # the context is refreshed every k conversations: each refresh probes the world of the next seed
        # (new entities, balances, names); a third-party server has one world, so it keeps one context
        snap.refreshes = [probe_world(self.seed + j) for j in range(1, self.contexts if server.kind == "builtin" else 1)]
        return snap


@dataclass(frozen=True)
class GraphStep:
    """Discover (or read from the cache) the server's dependency graph."""

    graph: GraphConfig
    seed: int
    cache: Path
    query: QueryConfig  # the teacher, when ``graph.llm`` classifies tool pairs
    llm_cache: Path

    @classmethod
    def of(cls, cfg: BuildConfig) -> GraphStep:
        return cls(cfg.graph, cfg.seed, cache_dir(cfg.graph.cache_dir, cfg.data_path, "graphs"), cfg.query,
                   cache_dir(cfg.query.cache_dir, cfg.data_path, "llm"))

    def run(self, env: Environment, snap: Snapshot) -> tuple[DependencyGraph, bool]:
        classifier = None
        if self.graph.llm:
            from pipeline.discovery.graph import llm_pair_classifier
            from pipeline.synthesis.queries import LLMBackend

            classifier = llm_pair_classifier(LLMBackend(self.query, self.llm_cache), self.query.llm_model or "")
        return cached_discover(env, snap, self.graph, self.cache, seed=self.seed, llm_classifier=classifier)


def assign_contexts(chains: list[Chain], snap: Snapshot, every: int) -> None:
    """Chain i is simulated in context i // every: on that context's world seed, with its sampled values."""
    ctxs = snap.contexts()
    for i, c in enumerate(chains):
        ctx = ctxs[min(len(ctxs) - 1, i // every)] if every else snap
        c.seed, c.snapshot_id = ctx.seed, ctx.snapshot_id


def probe_rejections(snap: Snapshot) -> list[Rejection]:
    """Probe calls on which the server crashed or hung."""
    return [rejection("probe", "server_error", f"{c['name']}: {c.get('error') or 'the server failed'}", snap.server,
                      {"snapshot_id": ctx.snapshot_id, "tool": c["name"]}, c, record_type="probe_call")
            for ctx in snap.contexts() for c in ctx.probe_calls if c.get("error_code") == "server_error"]


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
        out.stats = {"chains": len(chains), "tool_coverage": coverage(chains, [t.name for t in snap.tools]),
                     "length_histogram": dict(Counter(len(c.steps) for c in chains)),
                     "unchainable": graph.unchainable}
        if not chains:
            out.rejections.append(rejection("chains", "no_chains", f"no dependency edges were confirmed for {snap.server}", snap.server,
                                            {"snapshot_id": snap.snapshot_id, "graph_id": graph.graph_id}, graph))
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
