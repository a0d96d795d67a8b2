"""The whole synthesis in one process, without Dagster: for tests, benchmarks and scripting.

The Dagster assets call the same stage functions one asset at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from pipeline.config import BuildConfig
from pipeline.records import Rejection, rejection
from pipeline.redact import Redactor, redact_rejections
from pipeline.stages import (Timer, open_env, probe_rejections, stage_augment, stage_chains, stage_conversations, stage_corpus, stage_dedup,
                             stage_graph, stage_queries, stage_snapshot, stage_validate)


def unavailable(server: str, exc: BaseException) -> Rejection:
    return rejection("probe", "server_unavailable", f"{type(exc).__name__}: {exc}", server, {"server": server})


def build_corpus(cfg: BuildConfig, log: Callable[[str], None] | None = None, timer: Timer | None = None) -> tuple[Path, dict[str, Any]]:
    """Build and write a corpus; ``timer`` (optional) receives the stage timings (a benchmark passes one with meters)."""
    log = log or (lambda s: None)
    timer = timer or Timer()
    rejections: list[Rejection] = []
    snapshots, validated, stats = {}, [], {}
    for server in cfg.servers:
        try:
            env = open_env(cfg, server)
        except Exception as exc:  # a server that cannot start: rejected, the build goes on
            rejections.append(unavailable(server, exc))
            log(f"{server}: unavailable: {exc}")
            continue
        try:
            with timer("probe"):
                snap = stage_snapshot(cfg, server, env)
            snapshots[server] = snap
            with timer("graph"):
                graph, hit = stage_graph(cfg, snap, env)
            with timer("chains"):
                ch = stage_chains(cfg, snap, graph)
            with timer("queries"):
                q = stage_queries(cfg, snap, ch.items, env)
            with timer("conversations"):
                cv = stage_conversations(cfg, snap, ch.items, q.items, env)
            with timer("replay"):
                va = stage_validate(cfg, cv.items, server, env)
            validated.extend(va.items)
            for o in (ch, q, cv, va):
                rejections.extend(o.rejections)
            stats[server] = {"chains": ch.stats, "queries": q.stats, "conversations": cv.stats, "replay": va.stats, "graph_cache_hit": hit,
                             "edges": len([e for e in graph.edges if e.confirmed])}
            log(f"{server}: {len(ch.items)} chains, {len(q.items)} queries, {len(cv.items)} conversations, {len(va.items)} validated")
        except Exception as exc:  # crashed, hung or garbage-speaking server: rejected, the build goes on
            snap = snapshots.pop(server, None)
            if snap is not None and server not in stats:
                rejections.extend(probe_rejections(snap))
            rejections.append(unavailable(server, exc))
            log(f"{server}: failed: {exc}")
        finally:
            env.close()
    with timer("dedup"):
        dd = stage_dedup(cfg, validated)
    with timer("augment"):
        au = stage_augment(cfg, dd.items, snapshots)
    rejections.extend(dd.rejections + au.rejections)
    rejections = redact_rejections(rejections, Redactor.for_snapshots(snapshots.values()))
    with timer("corpus"):
        path = stage_corpus(cfg, au.items, rejections, extra={"stage_stats": {"servers": stats, "dedup": dd.stats, "augment": au.stats},
                                                               "stage_seconds": timer.times},
                            tools_by_server={s: [t.name for t in snap.tools] for s, snap in snapshots.items()})
    return path, {"stage_seconds": timer.times, "stats": stats, "dedup": dd.stats, "augment": au.stats}
