"""Working directories of server processes: a fresh copy of the server's files per process.

A stdio server configured with ``template_dir`` (or, without one, ``cwd``) runs in a new temporary
directory holding a copy of that directory's files, made again for every session and every reset under
process isolation. The user's own directory is only ever read. ``${SESSION_DIR}`` in ``args`` and
``env`` names the copy.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from pipeline.core.config import ServerConfig
from pipeline.env.transport import EnvironmentError_

SESSION_DIR = "SESSION_DIR"


def template_of(config: ServerConfig) -> Path | None:
    """The directory whose files seed every working directory of this server, if any."""
    src = config.template_dir or config.cwd
    return Path(src).expanduser().resolve() if src else None


def needs_workdir(config: ServerConfig) -> bool:
    """A stdio server runs in a directory of its own under process isolation, with a template, or
    where its ``args``/``env`` name ``${SESSION_DIR}``; otherwise in the caller's working directory."""
    if config.kind != "stdio":
        return False
    mark = "${" + SESSION_DIR + "}"
    named = any(mark in a for a in config.args) or any(mark in v for v in config.env.values())
    return config.isolation == "process" or template_of(config) is not None or named


def new_workdir(config: ServerConfig, purpose: str = "") -> str:
    """A new temporary directory for one server process, holding a copy of the template's files."""
    tmp = tempfile.mkdtemp(prefix=f"prove-{config.name}-{purpose}")
    src = template_of(config)
    if src is not None:
        if not src.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
            which = "template_dir" if config.template_dir else "cwd"
            raise EnvironmentError_(f"server {config.name!r}: {which} {str(src)!r} is not a directory")
        shutil.copytree(src, tmp, symlinks=True, dirs_exist_ok=True)
    return tmp


def remove_workdir(path: str | None) -> None:
    if path:
        shutil.rmtree(path, ignore_errors=True)


def session_args(config: ServerConfig, workdir: str | None) -> list[str]:
    """``args`` with ``${SESSION_DIR}`` (the process's working directory) and ``${VAR}`` replaced."""
    try:
        return config.resolved_args(workdir)
    except ValueError as exc:
        raise EnvironmentError_(str(exc)) from None
