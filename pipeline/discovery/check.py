"""What prove finds on one configured server (``prove servers check``): tools, read-only tools, entities,
edges, isolation, problems, and per tool why it is or is not chainable.

Each server's check runs within the server's ``time_budget_s`` (the environment's deadline); graph discovery
projects what its remaining steps will take from the steps it has timed and stops early, saying why, when that
runs past the budget (:class:`pipeline.env.ServerBudgetExceeded`). :func:`check_servers` checks several side by
side and writes each one's JSON report, with its duration, as soon as that server is done."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from pipeline.core.config import GraphConfig, ProbeConfig, ServerConfig
from pipeline.core.servers_file import usable_tools
from pipeline.core.storage import atomic_write_json
from pipeline.discovery.chainability import explain
from pipeline.discovery.graph import discover
from pipeline.discovery.probe import probe
from pipeline.discovery.sql_schema import statement_param, table_references
from pipeline.env import Environment, ServerBudgetExceeded


def check_server(cfg: ServerConfig, seed: int = 0, log_dir: str | Path | None = None) -> dict[str, Any]:
    """What prove finds on one configured server: tools, read-only tools, edges, isolation, problems,
    and per tool why it is or is not chainable (:mod:`pipeline.discovery.chainability`).
    The server's stderr goes to ``<log_dir>/<name>.log``. ``duration_s``: the seconds the check took;
    ``stopped``: the reason it ended before its graph was complete (the server's time budget), else absent."""
    start = time.monotonic()
    report: dict[str, Any] = {
        "name": cfg.name,
        "kind": cfg.kind,
        "isolation": cfg.isolation,
        "time_budget_s": cfg.time_budget_s,
        "problems": [],
    }
    try:
        with Environment(cfg, log_dir=log_dir) as env:
            tools = env.tools()
            usable, excluded = usable_tools(cfg, tools)
            report["tools"] = [t.name for t in tools]
            report["read_only_tools"] = [t.name for t in usable if t.read_only]
            report["excluded_tools"] = excluded
            # a tool that runs any statement is probed with reads it composes (pipeline.discovery.sql_schema)
            unannotated = [t.name for t in tools if not t.annotated and not statement_param(t)]
            if unannotated:
                report["problems"].append(
                    f"tools without a readOnlyHint annotation (never probed unless allow-listed): {unannotated}"
                )
            no_schema = [t.name for t in tools if not t.output_schema]
            if no_schema:
                report["problems"].append(
                    f"tools without an output schema (results parsed as JSON/text where possible): {no_schema}"
                )
            with env.session(seed) as s:
                snap = probe(s, usable, ProbeConfig(), allowlist=cfg.probe_allowlist, known=cfg.resolved_known_values())
            report["entities"] = len(snap.entities)
            report["probe_s"] = round(time.monotonic() - start, 1)
            for c in snap.probe_calls:
                if not c["ok"]:
                    report["problems"].append(f"probe call {c['name']} failed: {c['error_code']}")
            graph = discover(env, snap, GraphConfig(), seed)
            confirmed = [e for e in graph.edges if e.confirmed]
            report["edges"] = [f"{e.src} -> {e.dst} ({e.kind})" for e in confirmed]
            report["unchainable"] = graph.unchainable
            report["tool_report"] = explain(
                tools, snap, graph, excluded, cfg.probe_allowlist, cfg.secrets, [c.tool for c in cfg.setup]
            )
            report["entity_kinds"] = snap.kind_support
            report["feeds"] = snap.feeds
            report["tables"] = {t: len(info.get("rows", [])) for t, info in sorted(snap.tables.items())}
            if snap.tables:
                report["references"] = table_references(snap.tables)
    except ServerBudgetExceeded as exc:
        report["stopped"] = str(exc)
        report["problems"].append(f"stopped early: {exc}")
    except Exception as exc:
        report["problems"].append(f"could not use the server: {type(exc).__name__}: {exc}")
    report["duration_s"] = round(time.monotonic() - start, 1)
    return report


def check_servers(
    configs: list[ServerConfig],
    out_dir: str | Path | None = None,
    jobs: int = 4,
    log_dir: str | Path | None = None,
    on_report: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """:func:`check_server` for each server, ``jobs`` side by side. As each one finishes, its report is written to
    ``<out_dir>/<name>.json`` (atomically) and handed to ``on_report``; the reports come back in the file's order."""
    done: dict[str, dict[str, Any]] = {}
    with ThreadPoolExecutor(max_workers=max(1, min(len(configs), jobs))) as pool:
        futures = {pool.submit(check_server, c, 0, log_dir): c.name for c in configs}
        for fut in as_completed(futures):
            report = fut.result()
            done[futures[fut]] = report
            if out_dir is not None:
                atomic_write_json(Path(out_dir) / f"{report['name']}.json", report)
            if on_report is not None:
                on_report(report)
    return [done[c.name] for c in configs]
