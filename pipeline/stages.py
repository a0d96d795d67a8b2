"""The stages as plain functions over records: what each Dagster asset calls, and what tests call.

Per-server stages (probe, graph, chains, queries, conversations, replay) take one server;
dedup, augmentation and the corpus writer take all servers' outputs.
"""

from __future__ import annotations

import functools
import gc
import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pipeline.augment import abstention_example, apply_robustness, import_abstention_file, irrelevance_example, missing_function_variant
from pipeline.chains import coverage, extract_chains
from pipeline.config import BuildConfig
from pipeline.corpus import write_corpus
from pipeline.dedup import dedup, recall_check, shingles
from pipeline.env import Environment, ServerBudgetExceeded
from pipeline.graph import cached_discover
from pipeline.probe import probe
from pipeline.queries import make_backend
from pipeline.records import Chain, Conversation, DependencyGraph, Rejection, Snapshot, UserQuery, rejection
from pipeline.replay import validate
from pipeline.simulate import INFO_LEVELS, plan_query, run_conversation
from pipeline.values import ValueMemo

# chains generated per multi-turn example needed: replay, dedup and the information-level selection keep
# about 60-75% of them on the built-in servers, so 2x leaves a margin without simulating work thrown away
OVERSAMPLE = 2.0
Progress = Callable[[int, int], None]


def heap_settled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run a stage with every object that already exists frozen out of the cyclic collector's sight
    (``gc.freeze``), thawed again when the stage returns.

    A full collection walks every tracked object. With the records of the servers built so far in the
    heap (snapshots, chains, conversations), the full collections set off by a stage's own allocations
    (a world copied for every session, every result) took a seventh of a 3,000-example build. Records
    are not cyclic garbage, so keeping them out of sight while a stage runs loses nothing."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        gc.freeze()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.unfreeze()

    return run


@dataclass
class StageOutput:
    """A stage's records, its rejections and what it measured."""

    items: list[Any] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


def _rng(cfg: BuildConfig, *parts: Any) -> random.Random:
    return random.Random(":".join(str(p) for p in (cfg.seed, *parts)))


def per_server_target(cfg: BuildConfig) -> int:
    """Multi-turn conversations to aim for per server (before replay and dedup losses)."""
    a = cfg.augment
    share = 1.0 - a.irrelevance_rate - a.abstention_rate - a.missing_function_rate
    return max(4, math.ceil(cfg.examples * share * OVERSAMPLE / max(1, len(cfg.servers))))


def env_seed(cfg: BuildConfig, server: str) -> int:
    return cfg.seed


def chains_wanted(cfg: BuildConfig) -> int:
    return max(cfg.chains.per_server, per_server_target(cfg))


def n_contexts(cfg: BuildConfig) -> int:
    """Sampled contexts per server: one per ``probe.refresh_every`` conversations."""
    k = cfg.probe.refresh_every
    return max(1, math.ceil(chains_wanted(cfg) / k)) if k else 1


def assign_contexts(chains: list[Chain], snap: Snapshot, every: int) -> None:
    """Chain i is simulated in context i // every: on that context's world seed, with its sampled values."""
    ctxs = snap.contexts()
    for i, c in enumerate(chains):
        ctx = ctxs[min(len(ctxs) - 1, i // every)] if every else snap
        c.seed, c.snapshot_id = ctx.seed, ctx.snapshot_id


def open_env(cfg: BuildConfig, server: str) -> Environment:
    return Environment(cfg.server_config(server), log_dir=cfg.data_path / "logs" / "servers")


@heap_settled
def stage_snapshot(cfg: BuildConfig, server: str, env: Environment | None = None) -> Snapshot:
    own = env is None
    env = env or open_env(cfg, server)
    try:
        from pipeline.serverfile import usable_tools

        sc = cfg.server_config(server)
        tools, excluded = usable_tools(sc, env.tools())
        secrets = sc.resolved_secrets() or None

        def probe_world(seed: int) -> Snapshot:
            with env.session(seed) as s:
                return probe(s, tools, cfg.probe, allowlist=sc.probe_allowlist, config_secrets=secrets)

        seed0 = env_seed(cfg, server)
        snap = probe_world(seed0)
        snap.skipped_tools.update(excluded)
        # the context is refreshed every k conversations: each refresh probes the world of the next seed
        # (new entities, balances, names); a third-party server has one world, so it keeps one context
        snap.refreshes = [probe_world(seed0 + j) for j in range(1, n_contexts(cfg) if sc.kind == "builtin" else 1)]
        return snap
    finally:
        if own:
            env.close()


@heap_settled
def stage_graph(cfg: BuildConfig, snap: Snapshot, env: Environment | None = None) -> tuple[DependencyGraph, bool]:
    own = env is None
    env = env or open_env(cfg, snap.server)
    try:
        cache = Path(cfg.graph.cache_dir) if cfg.graph.cache_dir else cfg.data_path / "cache" / "graphs"
        classifier = None
        if cfg.graph.llm:
            from pipeline.graph import llm_pair_classifier
            from pipeline.queries import LLMBackend

            llm_cache = Path(cfg.query.cache_dir) if cfg.query.cache_dir else cfg.data_path / "cache" / "llm"
            classifier = llm_pair_classifier(LLMBackend(cfg.query, llm_cache), cfg.query.llm_model or "")
        return cached_discover(env, snap, cfg.graph, cache, seed=cfg.seed, llm_classifier=classifier)
    finally:
        if own:
            env.close()


def probe_rejections(snap: Snapshot) -> list[Rejection]:
    """Probe calls on which the server crashed or hung."""
    return [rejection("probe", "server_error", f"{c['name']}: {c.get('error') or 'the server failed'}", snap.server,
                      {"snapshot_id": ctx.snapshot_id, "tool": c["name"]}, c)
            for ctx in snap.contexts() for c in ctx.probe_calls if c.get("error_code") == "server_error"]


@heap_settled
def stage_chains(cfg: BuildConfig, snap: Snapshot, graph: DependencyGraph) -> StageOutput:
    chains = extract_chains(graph, snap, chains_wanted(cfg), cfg.chains, seed=cfg.seed, dedup_cfg=cfg.dedup)
    assign_contexts(chains, snap, cfg.probe.refresh_every)
    out = StageOutput(items=chains, rejections=probe_rejections(snap))
    out.stats = {"chains": len(chains), "tool_coverage": coverage(chains, [t.name for t in snap.tools]),
                 "length_histogram": dict(Counter(len(c.steps) for c in chains)),
                 "unchainable": graph.unchainable}
    if not chains:
        out.rejections.append(rejection("chains", "no_chains", f"no dependency edges were confirmed for {snap.server}", snap.server,
                                        {"snapshot_id": snap.snapshot_id, "graph_id": graph.graph_id}, graph))
    return out


def info_level_plan(n: int, cfg: BuildConfig, salt: str, generation: bool = False) -> list[str]:
    """Exact 60/20/20 (configurable) information levels over n requests, deterministically shuffled.

    For generation the missing level is oversampled (it loses more to rejection: not every first
    step has a value to withhold), so the final selection can meet the shares exactly."""
    s = cfg.simulate
    w = [s.complete, s.missing, s.minimal]
    if generation:
        w = [s.complete, s.missing * 1.3, s.minimal * 1.15]
    counts = [round(x / sum(w) * n) for x in w]
    counts[0] += n - sum(counts)
    levels = [lvl for lvl, c in zip(INFO_LEVELS, counts) for _ in range(c)]
    random.Random(salt).shuffle(levels)
    return levels


def assign_levels(chains: list[Chain], plan: list[str]) -> list[str]:
    """Give the "missing" level to chains whose first call takes a value from the user (only those
    have something the user can leave out); the other levels keep the plan's order."""
    eligible = [i for i, c in enumerate(chains) if any(src.kind == "user" for src in c.steps[0].args.values())]
    missing = set(eligible[: plan.count("missing")])
    rest = iter([lvl for lvl in plan if lvl != "missing"])
    return ["missing" if i in missing else next(rest, "complete") for i in range(len(chains))]


@heap_settled
def stage_queries(cfg: BuildConfig, snap: Snapshot, chains: list[Chain], env: Environment | None = None,
                  progress: Progress | None = None) -> StageOutput:
    own = env is None
    env = env or open_env(cfg, snap.server)
    out = StageOutput()
    try:
        backend = make_backend(cfg.query, Path(cfg.query.cache_dir) if cfg.query.cache_dir else cfg.data_path / "cache" / "llm")
        levels = assign_levels(chains, info_level_plan(len(chains), cfg, f"{cfg.seed}:{snap.server}:levels", generation=True))
        memo = ValueMemo()
        for i, chain in enumerate(chains):
            rng = _rng(cfg, "query", chain.chain_id)
            q, rej = plan_query(env, snap.context(chain.snapshot_id), chain, backend, cfg.simulate, cfg.query, rng, info_level=levels[i],
                                max_error_rate=cfg.replay.max_error_rate, memo=memo)
            if q is not None:
                out.items.append(q)
            if rej is not None:
                out.rejections.append(rej)
            if progress:
                progress(i + 1, len(chains))
        out.stats = {"queries": len(out.items), "backend": backend.name, "contexts": len({q.snapshot_id for q in out.items}),
                     "info_levels": dict(Counter(q.info_level for q in out.items))}
        if hasattr(backend, "cache_hits"):
            out.stats.update(llm_calls=backend.calls, llm_cache_hits=backend.cache_hits)
    finally:
        if own:
            env.close()
    return out


@heap_settled
def stage_conversations(cfg: BuildConfig, snap: Snapshot, chains: list[Chain], queries: list[UserQuery],
                        env: Environment | None = None, progress: Progress | None = None) -> StageOutput:
    own = env is None
    env = env or open_env(cfg, snap.server)
    by_id = {c.chain_id: c for c in chains}
    out = StageOutput()
    replier = None
    if cfg.query.backend == "llm":  # the teacher also writes the assistant's replies
        from pipeline.queries import LLMBackend

        replier = LLMBackend(cfg.query, Path(cfg.query.cache_dir) if cfg.query.cache_dir else cfg.data_path / "cache" / "llm")
    try:
        for i, q in enumerate(queries):
            rng = _rng(cfg, "conv", q.query_id)
            try:
                out.items.append(run_conversation(env, snap.context(q.snapshot_id), by_id[q.chain_id], q, rng,
                                                  recovery_rate=cfg.simulate.recovery_rate, max_error_rate=cfg.replay.max_error_rate,
                                                  reference_date=cfg.query.reference_date, replier=replier))
            except ServerBudgetExceeded:  # the server's time is up: its partition ends here
                raise
            except Exception as exc:  # a crashed or hung server rejects this conversation, the build goes on
                out.rejections.append(rejection("simulate", "server_failure", f"{type(exc).__name__}: {exc}", snap.server,
                                                {"snapshot_id": snap.snapshot_id, "chain_id": q.chain_id, "query_id": q.query_id}, q))
            if progress:
                progress(i + 1, len(queries))
        out.stats = {"conversations": len(out.items), "outcomes": dict(Counter(o for c in out.items for o in c.outcomes))}
        if replier is not None:
            out.stats.update(reply_calls=replier.calls, reply_cache_hits=replier.cache_hits, reply_fallbacks=replier.reply_fallbacks)
    finally:
        if own:
            env.close()
    return out


@heap_settled
def stage_validate(cfg: BuildConfig, convs: list[Conversation], server: str, env: Environment | None = None,
                   progress: Progress | None = None) -> StageOutput:
    own = env is None
    env = env or open_env(cfg, server)
    out = StageOutput()
    try:
        for i, c in enumerate(convs):
            try:
                rej = validate(env, c, cfg.replay)
            except ServerBudgetExceeded:  # the server's time is up: its partition ends here
                raise
            except Exception as exc:
                rej = rejection("replay", "server_failure", f"{type(exc).__name__}: {exc}", server,
                                {"conversation_id": c.conversation_id, "chain_id": c.chain_id}, c)
            if rej is None:
                out.items.append(c)
            else:
                out.rejections.append(rej)
            if progress:
                progress(i + 1, len(convs))
        out.stats = {"validated": len(out.items), "rejected": len(out.rejections),
                     "pass_rate": len(out.items) / max(1, len(convs))}
    finally:
        if own:
            env.close()
    return out


def conv_shingles(c: Conversation, include_args: bool) -> set[str]:
    return shingles([(r.name, r.arguments) for turn in c.reference for r in turn], include_args)


@heap_settled
def stage_dedup(cfg: BuildConfig, convs: list[Conversation]) -> StageOutput:
    items = [(c.conversation_id, conv_shingles(c, cfg.dedup.include_args)) for c in convs]
    kept, dropped = dedup(items, cfg.dedup)
    by_id = {c.conversation_id: c for c in convs}
    out = StageOutput(items=[by_id[k] for k in kept])
    for cid, (dup, j) in dropped.items():
        c = by_id[cid]
        out.rejections.append(rejection("dedup", "near_duplicate", f"Jaccard {j:.2f} >= {cfg.dedup.threshold} with {dup}", c.server,
                                        {"conversation_id": cid, "chain_id": c.chain_id, "duplicate_of": dup}, c))
    out.stats = {"input": len(convs), "kept": len(kept), "dropped": len(dropped), "recall_check": recall_check(items, cfg.dedup, cfg.seed)}
    return out


def select_multi_turn(cfg: BuildConfig, convs: list[Conversation], n: int) -> tuple[list[Conversation], list[Conversation]]:
    """Pick n conversations meeting the information-level shares exactly where supply allows, spread over servers."""
    levels = info_level_plan(n, cfg, f"{cfg.seed}:select")
    want = Counter(levels)
    by_level: dict[str, list[Conversation]] = {lvl: [] for lvl in INFO_LEVELS}
    for c in sorted(convs, key=lambda c: (c.conversation_id)):
        by_level.setdefault(c.info_level or "complete", []).append(c)
    chosen: list[Conversation] = []
    for lvl in INFO_LEVELS:
        pool = by_level[lvl]
        # round-robin over servers so every server is represented
        per: dict[str, list[Conversation]] = {}
        for c in pool:
            per.setdefault(c.server, []).append(c)
        order = []
        while any(per.values()):
            for s in sorted(per):
                if per[s]:
                    order.append(per[s].pop(0))
        chosen.extend(order[: want[lvl]])
    cover_servers(chosen, convs)
    short = n - len(chosen)
    if short > 0:  # not enough of some level: fill with the rest, shares then drift
        ids = {c.conversation_id for c in chosen}
        rest = [c for c in sorted(convs, key=lambda c: c.conversation_id) if c.conversation_id not in ids]
        chosen.extend(rest[:short])
    ids = {c.conversation_id for c in chosen}
    return chosen, [c for c in convs if c.conversation_id not in ids]


def cover_servers(chosen: list[Conversation], convs: list[Conversation]) -> None:
    """Give every server that has conversations at least one chosen, where the count allows it (in place).

    A server left out (a small request over many servers: the round-robin ends before reaching it)
    takes the place of the last chosen conversation of the best-represented server at the same
    information level, so the level shares hold. When every server is represented nothing changes."""
    have = Counter(c.server for c in chosen)
    for server in sorted({c.server for c in convs} - set(have)):
        for cand in sorted((c for c in convs if c.server == server), key=lambda c: c.conversation_id):
            level = cand.info_level or "complete"
            spots = [i for i, c in enumerate(chosen) if have[c.server] > 1 and (c.info_level or "complete") == level]
            if not spots:
                continue
            i = max(spots, key=lambda i: (have[chosen[i].server], i))
            have[chosen[i].server] -= 1
            chosen[i] = cand
            have[server] += 1
            break


def tool_pool(snapshots: dict[str, Snapshot], minimum: int = 3) -> dict[str, list]:
    """Tools by server for distractors and abstention. A build over fewer than ``minimum`` servers
    borrows the schemas of built-in servers (listed over MCP, never called) so that the knobs still apply."""
    pool = {s: snap.tools for s, snap in snapshots.items()}
    if len(pool) < minimum:
        from servers.registry import available

        for name in available():
            if len(pool) >= minimum:
                break
            if name not in pool:
                with Environment(name) as env:
                    pool[name] = env.tools()
    return pool


def feasible_multi_turn(cfg: BuildConfig, convs: list[Conversation], wanted: int) -> int:
    """The largest multi-turn count <= wanted whose information-level shares the supply can meet exactly."""
    supply = Counter(c.info_level or "complete" for c in convs)
    best = 0
    lo, hi = 0, wanted
    while lo <= hi:  # the exact plan is monotone in n: binary search the largest that fits
        mid = (lo + hi) // 2
        need = Counter(info_level_plan(mid, cfg, "feasible"))
        if all(supply[lvl] >= k for lvl, k in need.items()):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


@heap_settled
def stage_augment(cfg: BuildConfig, unique: list[Conversation], snapshots: dict[str, Snapshot]) -> StageOutput:
    a = cfg.augment
    n = cfg.examples
    n_irr, n_abs, n_mf = round(a.irrelevance_rate * n), round(a.abstention_rate * n), round(a.missing_function_rate * n)
    imported: list[Conversation] = []
    for f in a.import_files:
        imported.extend(import_abstention_file(f))
    n_mt = max(0, n - n_irr - n_abs - n_mf - len(imported))
    feasible = feasible_multi_turn(cfg, unique, n_mt)
    if feasible < n_mt:
        # short supply: a smaller corpus with the same composition, rather than one with the shares off
        scale = feasible / max(1, n_mt)
        n_irr, n_abs, n_mf = round(n_irr * scale), round(n_abs * scale), round(n_mf * scale)
        n_requested, n_mt = n_mt, feasible
    else:
        n_requested = n_mt
    multi, spare = select_multi_turn(cfg, unique, n_mt)
    out = StageOutput()
    rng = _rng(cfg, "augment")
    servers = sorted(snapshots)
    extra: list[Conversation] = []
    # missing-function variants from conversations not selected (so they do not duplicate an example)
    mf_src = spare + multi
    for c in mf_src:
        if len([e for e in extra if e.kind == "missing_function"]) >= n_mf:
            break
        v = missing_function_variant(c, rng)
        if v is not None:
            extra.append(v)
    pool = tool_pool(snapshots)
    asked: set[str] = set()  # no request is used twice by the no-call kinds
    for i in range(n_irr):
        s = servers[i % len(servers)]
        snap = snapshots[s]
        extra.append(irrelevance_example(s, snap.tools, snap.seed, rng, snap.snapshot_id, asked))
    for i in range(n_abs):
        s = servers[i % len(servers)]
        snap = snapshots[s]
        own = {t.name for t in snap.tools}
        others = [t for o, ts in pool.items() if o != s for t in ts if t.name not in own]  # a same-named tool would apply
        if not others:
            break
        extra.append(abstention_example(s, snap.tools, rng.choice(others), snap.seed, rng, snap.snapshot_id, asked))
    examples = multi + extra + imported
    apply_robustness(examples, pool, a, cfg.seed)
    out.items = examples
    if len(multi) < n_requested:
        out.rejections.append(rejection("augment", "short_supply",
                                        f"only {len(multi)} multi-turn conversations meet the information-level shares for {n_requested} requested "
                                        f"({len(unique)} unique); the other kinds were scaled down with them. Add servers or richer tools.",
                                        None, {}, None))
    out.stats = {"examples": len(examples), "kinds": dict(Counter(c.kind for c in examples)),
                 "augmentations": dict(Counter(x.split(":")[0] for c in examples for x in c.augmentations))}
    return out


@heap_settled
def stage_corpus(cfg: BuildConfig, examples: list[Conversation], rejections: list[Rejection], **kwargs: Any) -> Path:
    """Write the corpus version (:func:`pipeline.corpus.write_corpus`) with the records frozen out of the
    collector's sight, as the other stages run."""
    return write_corpus(cfg, examples, rejections, **kwargs)


class Timer:
    """Wall time per stage name (summed over servers).

    ``meters`` (optional) are named counters read before and after every timed block (a benchmark
    passes the tool-call clocks), so each stage also gets the part of its time each meter saw:
    ``metered[stage][meter]``."""

    def __init__(self, meters: dict[str, Callable[[], float]] | None = None) -> None:
        self.times: dict[str, float] = {}
        self.meters = dict(meters or {})
        self.metered: dict[str, dict[str, float]] = {}

    def __call__(self, name: str):
        timer = self

        class _T:
            def __enter__(self):
                self.before = {k: m() for k, m in timer.meters.items()}
                self.t = time.perf_counter()

            def __exit__(self, *exc):
                timer.times[name] = timer.times.get(name, 0.0) + time.perf_counter() - self.t
                if timer.meters:
                    seen = timer.metered.setdefault(name, {})
                    for k, m in timer.meters.items():
                        seen[k] = seen.get(k, 0.0) + m() - self.before[k]

        return _T()
