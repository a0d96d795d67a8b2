"""Working directories of server processes: a fresh copy of the server's files per process.

A stdio server configured with ``template_dir`` (or, without one, ``cwd``) runs in a new temporary
directory holding a copy of that directory's files, made again for every session and every reset under
process isolation. The user's own directory is only ever read. ``${SESSION_DIR}`` in ``args`` and
``env`` names the copy.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

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


# What a result shows in place of the process's working directory, and what an argument may name it by. Every
# session runs in a new temporary directory, so a result that names it (a database path, an allowed directory)
# would differ between the simulation and its replay, and between the sessions discovery compares; with the
# directory put in its place, results compare equal and the corpus holds one stable path. Arguments are turned
# back (this alias, or ``${SESSION_DIR}``, at the start of a path) into the directory the call runs in.
SESSION_ALIAS = "/session"
_ALIAS_IN_ARG = re.compile(
    r"(?:(?<![\w/.~-])" + re.escape(SESSION_ALIAS) + r"|\$\{" + SESSION_DIR + r"\})(?=/|$|[^\w.-])"
)


def _map_strings(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {(fn(k) if isinstance(k, str) else k): _map_strings(v, fn) for k, v in value.items()}
    return value


def _spellings(workdir: str) -> list[str]:
    """The ways a result may name ``workdir`` (as given, and with symlinks resolved: /tmp may be /private/tmp),
    longest first."""
    names = {workdir.rstrip("/") or "/", os.path.realpath(workdir)}
    return sorted((n for n in names if len(n) > 1), key=len, reverse=True)


# a string that may be base64 data (a file's bytes a server returns as a blob): long enough to hold a directory name
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4}){4,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def _alias_in_base64(text: str, names: list[str]) -> str:
    """``text``, base64 data whose bytes name the directory (a file written with it, read back as a blob), encoded
    again with the alias in its place; any other text as it is."""
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        return text
    marks = [n.encode() for n in names if n.encode() in raw]
    if not marks:
        return text
    for mark in marks:
        raw = raw.replace(mark, SESSION_ALIAS.encode())
    return base64.b64encode(raw).decode()


def alias_workdir(value: Any, workdir: str | None) -> Any:
    """``value`` (a result: text, or JSON data) with ``workdir`` named :data:`SESSION_ALIAS` everywhere, also inside
    base64 data (``read_media_file``'s blob of a file that names it)."""
    if not workdir:
        return value
    names = _spellings(workdir)

    def sub(text: str) -> str:
        for name in names:
            if name in text:
                text = text.replace(name, SESSION_ALIAS)
        if _BASE64.fullmatch(text):
            text = _alias_in_base64(text, names)
        return text

    return _map_strings(value, sub)


def unalias_workdir(value: Any, workdir: str | None) -> Any:
    """``value`` (a call's arguments) with :data:`SESSION_ALIAS` (or ``${SESSION_DIR}``) at the start of a path
    turned into ``workdir``, the directory the call runs in."""
    if not workdir:
        return value
    real = workdir.rstrip("/")
    return _map_strings(
        value, lambda text: _ALIAS_IN_ARG.sub(lambda _m: real, text) if "/" in text or "$" in text else text
    )


# A copy made for a session is new: its files' creation (birth) times are the moment of the copy, which a server
# may show (``created: Sun Nov 29 2026 02:21:01 GMT+0000``, ``"created": "2026-11-29T02:21:01Z"``). Such times
# differ between two sessions at the same state. Where results of a server run in copies are compared (replay,
# and the graph's "a write changed what a read returns"), times of day are left out of the comparison.
_TIME_OF_DAY = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? (?:\d{1,2} )?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* "
    r"(?:\d{1,2},? )?\d{4},? \d{1,2}:\d{2}(?::\d{2})?(?: ?[AP]M)?(?: GMT[+-]\d{4}| [A-Z]{2,5})?(?: \([^)]*\))?"
)


def without_times(value: Any) -> Any:
    """``value`` with every time of day (ISO 8601 or a JavaScript/RFC date string) replaced by ``<time>``."""
    return _map_strings(value, lambda text: _TIME_OF_DAY.sub("<time>", text))


# How long a call took, which a server may report with its answer (``"execution_time_ms": 0.82``): it differs
# between two calls at the same state, so it is left out wherever results are compared.
_DURATION = re.compile(r'("\w*(?:_ms|_secs?|_seconds|elapsed|duration)\w*"\s*:\s*)-?\d+(?:\.\d+)?')


def without_durations(value: Any) -> Any:
    """``value`` with every reported duration (a JSON field named like ``execution_time_ms``) replaced."""
    if isinstance(value, dict):
        return {k: "<duration>" if _DURATION.match(f'"{k}": 0') else without_durations(v) for k, v in value.items()}
    return _map_strings(value, lambda text: _DURATION.sub(r"\1<duration>", text))


def same_answer(a: Any, b: Any) -> bool:
    """Two results are the same answer, a duration the server reported with it aside (:func:`without_durations`)."""
    return a == b or without_durations(a) == without_durations(b)


def same_result(a: Any, b: Any) -> bool:
    """Two results of a server run in copies of its files are the same, times of day aside (:func:`without_times`)."""
    return a == b or without_times(a) == without_times(b)
