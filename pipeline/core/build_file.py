"""A build's configuration from the places a user states it: a build file (YAML, a ``BuildConfig``), a servers file
(:mod:`pipeline.core.servers_file`) and overrides (examples, servers, data dir), as ``prove build`` and the
automation (``assets/automation.py``) both read them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pipeline.core.config import BuildConfig
from pipeline.core.errors import validation_problems, yaml_problem
from pipeline.core.servers_file import ConfigFileError, load_servers_file


class BuildFileError(ValueError):
    """A build configuration that cannot be read or does not validate; the message names the file and the problem."""


def load_build_config(
    config: str | Path | None = None,
    *,
    examples: int | None = None,
    servers_file: str | Path | None = None,
    servers: list[str] | None = None,
    data_dir: str | None = None,
    default_data_dir: str | None = None,
) -> BuildConfig:
    """The build file, then the servers file's servers (registered, and built unless ``servers`` names others),
    then the overrides; validated. ``default_data_dir``: where the data goes when neither the file nor
    ``data_dir`` says (else ``BuildConfig``'s default)."""
    base: dict[str, Any] = {}
    if config:
        p = Path(config)
        try:
            base = yaml.safe_load(p.read_text()) or {}
        except OSError as exc:
            raise BuildFileError(f"cannot read config {p}: {exc.strerror}") from exc
        except yaml.YAMLError as exc:
            raise BuildFileError(f"config {p} is not valid YAML: {yaml_problem(exc)}") from exc
        if not isinstance(base, dict):
            raise BuildFileError(f"config {p} must be a mapping at the top level")
    if examples is not None:
        base["examples"] = examples
    if servers_file:
        try:
            extra = load_servers_file(servers_file)
        except ConfigFileError as exc:
            raise BuildFileError(str(exc)) from exc
        base["server_configs"] = [c.model_dump(mode="json") for c in extra] + list(base.get("server_configs", []))
        if not servers:
            base["servers"] = [c.name for c in extra]
    if servers:
        base["servers"] = servers
    if data_dir is not None:  # the override wins over the file; without either, the default
        base["data_dir"] = data_dir
    elif default_data_dir is not None and not base.get("data_dir"):
        base["data_dir"] = default_data_dir
    try:
        return BuildConfig.model_validate(base)
    except ValidationError as exc:
        where = f" in {config}" if config else ""
        raise BuildFileError(
            f"invalid build configuration{where}:\n" + "\n".join(f"  {line}" for line in validation_problems(exc))
        ) from exc
