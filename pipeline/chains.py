"""Chain extraction: tool sequences of length 2-5 sampled along the confirmed dependency graph.

Topology-aware: each step after the first depends on at least one earlier step through a
confirmed edge, and a step's inputs come either from the user (a sampled value, filled in at
simulation) or from an earlier step's output field (explicit edge). Sampling prefers the
least-used tools so chains cover the server's tools.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections import Counter

from pipeline.config import ChainConfig, DedupConfig
from pipeline.graph import to_networkx
from pipeline.records import ArgSource, Chain, ChainStep, DependencyGraph, Snapshot, stable_hash


def _weighted(rng: random.Random, items: list[str], usage: Counter) -> str:
    """One item, the less used the likelier: ``rng.choices(items, weights=1/(1+uses)^2, k=1)[0]``,
    computed as ``random.choices`` does (same draw) without its per-call checks."""
    cum = list(itertools.accumulate(1.0 / (1 + usage[i]) ** 2 for i in items))
    return items[bisect.bisect(cum, rng.random() * cum[-1], 0, len(items) - 1)]


def _sample_path(successors: dict[str, list[str]], starts: list[str], rng: random.Random, usage: Counter, cfg: ChainConfig) -> list[str] | None:
    """The tool names of one chain, walked along the graph's edges (``successors``: each tool's
    successors in the graph; ``None``: shorter than ``min_len``)."""
    lengths = range(cfg.min_len, cfg.max_len + 1)
    target = rng.choices(lengths, weights=[(5, 4, 2)[i] if i < 3 else 1 for i in range(len(lengths))], k=1)[0]
    path = [_weighted(rng, starts, usage)]
    while len(path) < target:
        cands = sorted({s for n in path for s in successors[n] if s not in path})
        if not cands:
            break
        path.append(_weighted(rng, cands, usage))
    if len(path) < cfg.min_len:
        return None
    for name in path:
        usage[name] += 1
    return path


def _build_chain(G, path: list[str], graph: DependencyGraph, snap: Snapshot, by_name: dict, nonce: float) -> Chain:
    """The chain of a sampled path: each step's dependencies and where each argument comes from."""
    steps: list[ChainStep] = []
    for k, name in enumerate(path):
        deps: set[int] = set()
        args: dict[str, ArgSource] = {}
        tool = by_name[name]
        for j in range(k):
            if G.has_edge(path[j], name):
                deps.add(j)
                for e in G.get_edge_data(path[j], name).values():
                    for out_field, param in (e.get("fields") or {}).items():
                        if param in tool.properties and param not in args:
                            args[param] = ArgSource(kind="step", step=j, field=out_field)
        for p in tool.required:
            args.setdefault(p, ArgSource(kind="user"))
        steps.append(ChainStep(name=name, args=args, depends_on=sorted(deps)))
    cid = "chain-" + stable_hash([graph.graph_id, [s.model_dump() for s in steps], nonce], 12)
    return Chain(chain_id=cid, server=graph.server, seed=snap.seed, snapshot_id=snap.snapshot_id, graph_id=graph.graph_id, steps=steps)


def extract_chains(graph: DependencyGraph, snap: Snapshot, n: int, cfg: ChainConfig, seed: int = 0,
                   dedup_cfg: DedupConfig | None = DedupConfig()) -> list[Chain]:
    """Up to ``n`` chains whose tool sequences are pairwise below the dedup threshold.

    Dedup later drops conversations whose tool-call sequences have Jaccard >= ``dedup_cfg.threshold``,
    so a chain that near-duplicates an earlier one would only cost a simulation and a replay to be
    thrown away: it is skipped here (``dedup_cfg=None`` keeps every chain), and sampling stops when
    the graph has no new sequences to give. The check runs on the sampled tool names, before the
    chain's steps are built, and a sequence already judged is not judged again (the kept set only
    grows, so a sequence once a near-duplicate stays one); sampling draws the same random numbers
    either way, so the chains are the ones a check after building would keep.
    """
    from pipeline.dedup import MinHasher, jaccard, new_lsh, shingles

    rng = random.Random(f"chains:{graph.server}:{seed}")
    G = to_networkx(graph)
    starts = [n for n in G.nodes if G.out_degree(n) > 0]
    successors = {n: list(G.successors(n)) for n in G.nodes}
    by_name = {t.name: t for t in snap.tools}
    usage: Counter = Counter()
    chains: list[Chain] = []
    lsh = new_lsh(dedup_cfg.threshold * 0.85, dedup_cfg.num_perm) if dedup_cfg else None
    minhash = MinHasher(dedup_cfg.num_perm) if dedup_cfg else None
    kept: dict[int, set[str]] = {}
    judged: set[tuple[str, ...]] = set()  # sequences already kept or found near-duplicate
    attempts = misses = 0
    while len(chains) < n and attempts < n * 8 and misses < 400:
        attempts += 1
        path = _sample_path(successors, starts, rng, usage, cfg) if starts else None
        if path is None:
            misses += 1
            continue
        nonce = rng.random()  # the chain id's; drawn for every sampled path, kept or not
        if lsh is not None and minhash is not None and dedup_cfg is not None:
            key = tuple(path)
            if key in judged:
                misses += 1
                continue
            judged.add(key)
            sh = shingles([(name, {}) for name in path])
            m = minhash(sh)
            if any(jaccard(sh, kept[k]) >= dedup_cfg.threshold for k in lsh.query(m)):
                misses += 1
                continue
            lsh.insert(len(kept), m)
            kept[len(kept)] = sh
        misses = 0
        chains.append(_build_chain(G, path, graph, snap, by_name, nonce))
    return chains


def coverage(chains: list[Chain], tools: list[str]) -> float:
    used = {s.name for c in chains for s in c.steps}
    return len(used & set(tools)) / max(1, len(tools))
