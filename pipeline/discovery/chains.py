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
from collections import Counter, defaultdict

from pipeline.core.config import ChainConfig, DedupConfig
from pipeline.core.records import ArgSource, Chain, ChainStep, DependencyGraph, Snapshot, stable_hash
from pipeline.core.similarity import NearDuplicates, call_name, shingles
from pipeline.discovery.goals import closes, goal_order
from pipeline.discovery.graph import to_networkx
from pipeline.discovery.sql_schema import statement_param
from pipeline.discovery.value_flow import unobserved
from pipeline.language.statements import plan


class _Usage:
    """How often each tool has been put in a chain, with the weight that makes the least used likelier:
    ``1 / (1 + uses) ** 2``, kept up to date as uses are counted (rather than recomputed per draw)."""

    def __init__(self) -> None:
        self.uses: Counter = Counter()
        self.weight: defaultdict[str, float] = defaultdict(lambda: 1.0)

    def count(self, name: str) -> None:
        self.uses[name] += 1
        self.weight[name] = 1.0 / (1 + self.uses[name]) ** 2


def _weighted(rng: random.Random, items: list[str], weight: dict[str, float]) -> str:
    """One item drawn by ``weight`` (a tool's current weight, :class:`_Usage`): the draw ``rng.choices(items,
    weights=..., k=1)[0]`` makes (the same random number, the same cumulative weights and bisection), without its
    per-call checks and list of one; weights here are always positive."""
    cum = list(itertools.accumulate([weight[i] for i in items]))
    return items[bisect.bisect(cum, rng.random() * (cum[-1] + 0.0), 0, len(items) - 1)]


def _length_draw(cfg: ChainConfig) -> tuple[list[int], list[int]]:
    """The chain lengths and their cumulative weights (5, 4, 2, then 1 each), for ``_sample_path``."""
    lengths = list(range(cfg.min_len, cfg.max_len + 1))
    return lengths, list(itertools.accumulate((5, 4, 2)[i] if i < 3 else 1 for i in range(len(lengths))))


def _sample_path(
    successors: dict[str, list[str]],
    starts: list[str],
    rng: random.Random,
    usage: _Usage,
    lengths: tuple[list[int], list[int]],
    reads: frozenset[str] = frozenset(),
) -> list[str] | None:
    """The tool names of one chain, walked along the graph's edges (``successors``: each tool's
    successors in the graph; ``lengths``: :func:`_length_draw`; ``reads``: the read-only tools; ``None``: shorter
    than the minimum). The walk goes on from what finds, decides and acts, never from what closes or deletes
    (nothing is done with what the conversation ended); a closing step follows a read (never undoes a write of
    the chain); the path comes back in goal order (:func:`goal_order`)."""
    values, cum = lengths
    target = rng.choices(values, cum_weights=cum, k=1)[0]
    weight = usage.weight
    path = [_weighted(rng, starts, weight)]
    while len(path) < target:
        # what closes follows only what finds or decides: never "place a bid, then retract it"
        cands = sorted(
            {s for n in path if not closes(n) for s in successors[n] if n in reads or not closes(s)}.difference(path)
            | {n for n in path[-1:] if n in successors[n]}  # a tool that depends on itself (statements in turn)
        )
        if not cands:
            break
        path.append(_weighted(rng, cands, weight))
    if len(path) < values[0]:
        return None
    for name in path:
        usage.count(name)
    return goal_order(path)


def _edge_fields(G) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """For each pair of tools joined by confirmed edges: the (output field, parameter) links of those
    edges, in the graph's order."""
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for a, b, data in G.edges(data=True):
        out.setdefault((a, b), []).extend((data.get("fields") or {}).items())
    return out


def _edge_options(G) -> dict[tuple[str, str], dict[str, object]]:
    """For each pair of tools joined by an edge that showed under some of the later tool's options (a write whose
    effect one option of a read shows): those options."""
    out: dict[tuple[str, str], dict[str, object]] = {}
    for a, b, data in G.edges(data=True):
        out.setdefault((a, b), {}).update(data.get("when") or {})
    return {k: v for k, v in out.items() if v}


def _build_chain(
    links: dict[tuple[str, str], list[tuple[str, str]]],
    path: list[str],
    graph: DependencyGraph,
    snap: Snapshot,
    by_name: dict,
    nonce: float,
    error_case: bool = False,
    statements: dict[int, str] | None = None,
    options: dict[tuple[str, str], dict[str, object]] | None = None,
) -> Chain:
    """The chain of a sampled path: each step's dependencies and where each argument comes from
    (``links``: :func:`_edge_fields` of the graph; ``statements``: a step's planned SQL, :func:`_statements`;
    ``options``: :func:`_edge_options`, the option a read takes after the step whose effect it shows)."""
    steps: list[ChainStep] = []
    for k, name in enumerate(path):
        deps: list[int] = []
        args: dict[str, ArgSource] = {}
        tool = by_name[name]
        props = tool.properties
        for j in range(k):
            fields = links.get((path[j], name))
            if fields is None:
                continue
            deps.append(j)
            for out_field, param in fields:
                if param in props and param not in args:
                    args[param] = ArgSource(kind="step", step=j, field=out_field)
            for param, value in (options or {}).get((path[j], name), {}).items():
                args.setdefault(param, ArgSource(kind="user", value=value))
        for p in tool.required:
            if statements and k in statements and p == statement_param(tool):  # the statement the user asks for
                args[p] = ArgSource(kind="user", value=statements[k])
            elif p not in args:  # a value the user gives; where no probe saw one, the one a live call accepted (if any)
                args[p] = ArgSource(
                    kind="user", value=graph.accepted.get(name, {}).get(p) if unobserved(snap, p) else None
                )
        steps.append(ChainStep(name=name, args=args, depends_on=deps))
    cid = "chain-" + stable_hash([graph.graph_id, [s.model_dump() for s in steps], nonce], 12)
    return Chain(
        chain_id=cid,
        server=graph.server,
        seed=snap.seed,
        snapshot_id=snap.snapshot_id,
        graph_id=graph.graph_id,
        steps=steps,
        error_case=error_case,
    )


def _error_case(
    path: list[str], by_name: dict, successors: dict[str, list[str]], rng: random.Random, rate: float
) -> list[str] | None:
    """The goal-ordered ``path`` made a deliberate error case at the share ``rate`` of the paths that close
    something: its first closing step put before its last write, which may then work on what was closed (the call
    fails, the assistant says so); None where the path stays as it is (one draw per path that closes)."""
    closing = [n for n in path if closes(n)]
    if not closing or rng.random() >= rate:
        return None
    writes = [i for i, n in enumerate(path) if not closes(n) and not by_name[n].read_only]
    if not writes or writes[-1] == 0:
        return None
    rest = [n for n in path if n != closing[0]]
    before = rest[: writes[-1]]
    if not any(closing[0] in successors[n] for n in before):  # it still depends on a step before it
        return None
    return [*before, closing[0], *rest[writes[-1] :]]


def _statements(path: list[str], by_name: dict, snap: Snapshot, rng: random.Random) -> dict[int, str]:
    """The statements of the steps of ``path`` whose tool runs any statement (:mod:`pipeline.language.statements`:
    a change, then the read that shows it), planned together; empty where the path has no such step."""
    steps = [k for k, name in enumerate(path) if statement_param(by_name[name])]
    return dict(zip(steps, plan(snap.tables, len(steps), rng))) if steps else {}


DEFAULT_DEDUP = DedupConfig()  # chains are kept apart by the dedup stage's threshold unless told otherwise


def extract_chains(
    graph: DependencyGraph,
    snap: Snapshot,
    n: int,
    cfg: ChainConfig,
    seed: int = 0,
    dedup_cfg: DedupConfig | None = DEFAULT_DEDUP,
) -> list[Chain]:
    """Up to ``n`` chains whose tool sequences are pairwise below the dedup threshold.

    Dedup later drops conversations whose tool-call sequences have Jaccard >= ``dedup_cfg.threshold``,
    so a chain that near-duplicates an earlier one would only cost a simulation and a replay to be
    thrown away: it is skipped here (``dedup_cfg=None`` keeps every chain), and sampling stops when
    the graph has no new sequences to give. The check runs on the sampled tool names, before the
    chain's steps are built, and a sequence already judged is not judged again (the kept set only
    grows, so a sequence once a near-duplicate stays one); sampling draws the same random numbers
    either way, so the chains are the ones a check after building would keep.
    """

    rng = random.Random(f"chains:{graph.server}:{seed}")
    errors = random.Random(f"error-cases:{graph.server}:{seed}")  # its own draws: the rate moves no other chain
    said = random.Random(f"statements:{graph.server}:{seed}")  # its own draws too: SQL steps only
    G = to_networkx(graph)
    starts = [n for n in G.nodes if G.out_degree(n) > 0 and not closes(n)]  # a goal does not open by closing
    successors = {n: list(G.successors(n)) for n in G.nodes}
    links = _edge_fields(G)
    options = _edge_options(G)
    lengths = _length_draw(cfg)
    by_name = {t.name: t for t in snap.tools}
    reads = frozenset(t.name for t in snap.tools if t.read_only)
    usage = _Usage()
    chains: list[Chain] = []
    # consecutive pairs ("a>b") before single tool names: pairs are the rarer tokens
    near = NearDuplicates(dedup_cfg.threshold, order=lambda tok: (">" not in tok, tok)) if dedup_cfg else None
    judged: set[tuple[str, ...]] = set()  # sequences already kept or found near-duplicate
    attempts = misses = 0
    while len(chains) < n and attempts < n * 8 and misses < 400:
        attempts += 1
        path = _sample_path(successors, starts, rng, usage, lengths, reads) if starts else None
        if path is None:
            misses += 1
            continue
        nonce = rng.random()  # the chain id's; drawn for every sampled path, kept or not
        deliberate = _error_case(path, by_name, successors, errors, cfg.closed_entity_rate)
        path = deliberate or path
        planned = _statements(path, by_name, snap, said)
        calls = [(name, {"sql": planned[k]} if k in planned else {}) for k, name in enumerate(path)]
        if near is not None:
            key = tuple(call_name(*c) for c in calls)
            if key in judged:
                misses += 1
                continue
            judged.add(key)
            sh = shingles(calls)
            if near.best(sh) is not None:
                misses += 1
                continue
            near.add(str(len(chains)), sh)
        misses = 0
        chains.append(
            _build_chain(
                links,
                path,
                graph,
                snap,
                by_name,
                nonce,
                error_case=deliberate is not None,
                statements=planned,
                options=options,
            )
        )
    return chains


def coverage(chains: list[Chain], tools: list[str]) -> float:
    used = {s.name for c in chains for s in c.steps}
    return len(used & set(tools)) / max(1, len(tools))
