"""Registering servers in a file: built-in by name, stdio by command, streamable HTTP by URL.

```yaml
servers:
  - name: <a built-in server>          # built-in, by its catalogue name
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

from pipeline.core.config import ServerConfig
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
        return keep, {
            t.name: "writes state but the server has no isolation or reset_tool" for t in tools if not t.read_only
        }
    hidden = {cfg.reset_tool, cfg.state_tool} - {None}
    return [t for t in tools if t.name not in hidden], {n: "the server's reset/state tool" for n in hidden}
