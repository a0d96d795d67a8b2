"""Registering servers in a file: built-in by name, stdio by command, streamable HTTP by URL.

```yaml
servers:
  - name: banking                      # built-in
  - name: notes                        # a stdio server: a fresh process per session, in a fresh
    kind: stdio                        # copy of cwd (the original is never written)
    command: python
    args: [notes_server.py, --db, "${SESSION_DIR}/notes.db"]
    cwd: /opt/notes
    env: {NOTES_TOKEN: "${NOTES_TOKEN}"}
    secrets: {password: "${NOTES_PASSWORD}"}
    setup:                             # run at the start of every session (and after each reset)
      - tool: login
        arguments: {user: alice, password: "${secret:password}"}
  - name: tickets                      # streamable HTTP, reset between sessions by a tool
    kind: http
    url: http://127.0.0.1:9000/mcp
    headers: {Authorization: "Bearer ${TICKETS_TOKEN}"}
    reset_tool: reset_all
```
Secrets are written as ``${VAR}`` and read from the environment when connecting, never stored;
``${secret:NAME}`` in a setup call's arguments is resolved only as the call is sent.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from pipeline.core.config import GraphConfig, ProbeConfig, ServerConfig
from pipeline.core.errors import validation_problems, yaml_problem


class ServersFile(BaseModel):
    model_config = {"extra": "forbid"}
    servers: list[ServerConfig]


class ConfigFileError(ValueError):
    pass


def load_servers_file(path: str | Path) -> list[ServerConfig]:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ConfigFileError(f"{p}: cannot read: {exc.strerror}") from None
    try:
        data: Any = tomllib.loads(text) if p.suffix == ".toml" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        why = yaml_problem(exc) if isinstance(exc, yaml.YAMLError) else str(exc)
        raise ConfigFileError(f"{p}: not valid {'TOML' if p.suffix == '.toml' else 'YAML'}: {why}") from None
    if not isinstance(data, dict):
        raise ConfigFileError(f"{p}: expected a mapping with a 'servers' list at the top level")
    try:
        parsed = ServersFile.model_validate(data)
    except ValidationError as exc:
        lines = [f"  {line}" for line in validation_problems(exc)]
        raise ConfigFileError(f"{p}: invalid server configuration:\n" + "\n".join(lines)) from None
    names = [s.name for s in parsed.servers]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigFileError(f"{p}: server names must be unique, repeated: {dup}")
    return parsed.servers


def usable_tools(cfg: ServerConfig, tools: list[Any]) -> tuple[list[Any], dict[str, str]]:
    """Tools the pipeline may chain. Writes need isolation: without it only read-only tools are used.

    A tool in ``probe_allowlist`` is one the user says only reads: it counts as read-only from here on (the
    graph treats it as a read whose result a write can change, requests ask for it as a lookup)."""
    allow = set(cfg.probe_allowlist)
    tools = [t.model_copy(update={"read_only": True}) if t.name in allow and not t.read_only else t for t in tools]
    if cfg.isolation == "none" and not cfg.reset_tool:
        keep = [t for t in tools if t.read_only]
        return keep, {t.name: "writes state but the server has no isolation or reset_tool" for t in tools if not t.read_only}
    hidden = {cfg.reset_tool, cfg.state_tool} - {None}
    return [t for t in tools if t.name not in hidden], {n: "the server's reset/state tool" for n in hidden}


def check_server(cfg: ServerConfig, seed: int = 0, log_dir: str | Path | None = None) -> dict[str, Any]:
    """What prove finds on one configured server: tools, read-only tools, edges, isolation, problems,
    and per tool why it is or is not chainable (:mod:`pipeline.discovery.chainability`).
    The server's stderr goes to ``<log_dir>/<name>.log``."""
    from pipeline.discovery.chainability import explain
    from pipeline.env import Environment
    from pipeline.discovery.graph import discover
    from pipeline.discovery.probe import probe

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
                report["problems"].append(f"tools without a readOnlyHint annotation (never probed unless allow-listed): {unannotated}")
            no_schema = [t.name for t in tools if not t.output_schema]
            if no_schema:
                report["problems"].append(f"tools without an output schema (results parsed as JSON/text where possible): {no_schema}")
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

