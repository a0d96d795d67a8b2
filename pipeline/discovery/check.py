"""What prove finds on one configured server (``prove servers check``): tools, read-only tools, entities,
edges, isolation, problems, and per tool why it is or is not chainable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.core.config import GraphConfig, ProbeConfig, ServerConfig
from pipeline.core.servers_file import usable_tools
from pipeline.discovery.chainability import explain
from pipeline.discovery.graph import discover
from pipeline.discovery.probe import probe
from pipeline.env import Environment


def check_server(cfg: ServerConfig, seed: int = 0, log_dir: str | Path | None = None) -> dict[str, Any]:
    """What prove finds on one configured server: tools, read-only tools, edges, isolation, problems,
    and per tool why it is or is not chainable (:mod:`pipeline.discovery.chainability`).
    The server's stderr goes to ``<log_dir>/<name>.log``."""
    report: dict[str, Any] = {"name": cfg.name, "kind": cfg.kind, "isolation": cfg.isolation, "problems": []}
    try:
        with Environment(cfg, log_dir=log_dir) as env:
            tools = env.tools()
            usable, excluded = usable_tools(cfg, tools)
            report["tools"] = [t.name for t in tools]
            report["read_only_tools"] = [t.name for t in usable if t.read_only]
            report["excluded_tools"] = excluded
            unannotated = [t.name for t in tools if not t.annotated]
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
                snap = probe(s, usable, ProbeConfig(), allowlist=cfg.probe_allowlist)
            report["entities"] = len(snap.entities)
            for c in snap.probe_calls:
                if not c["ok"]:
                    report["problems"].append(f"probe call {c['name']} failed: {c['error_code']}")
            graph = discover(env, snap, GraphConfig(), seed)
            confirmed = [e for e in graph.edges if e.confirmed]
            report["edges"] = [f"{e.src} -> {e.dst} ({e.kind})" for e in confirmed]
            report["unchainable"] = graph.unchainable
            report["tool_report"] = explain(tools, snap, graph, excluded, cfg.probe_allowlist, cfg.secrets)
            report["entity_kinds"] = snap.kind_support
            report["feeds"] = snap.feeds
    except Exception as exc:
        report["problems"].append(f"could not use the server: {type(exc).__name__}: {exc}")
    return report
