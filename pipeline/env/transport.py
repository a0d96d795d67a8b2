"""How a connection reaches its server: in process, over stdio, or over streamable HTTP.

A :class:`Transport` builds the ``mcp.Client`` target for one connection, owns the process it
may start, sends the server's stderr to the server's log file (never the terminal), and explains a
failed start: the exit code, the last lines the server wrote to stderr, or the timeout.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client

from pipeline.core.config import ServerConfig
from servers.registry import build

EXIT_MARK = "prove: server process exited with code "
# ``sh`` writes its process id (that of the server's process group: mcp starts it in a session of its
# own) to a file, runs the server, and writes its exit code to the log when it ends: mcp's stdio
# transport keeps the process to itself, and a server that dies at start is otherwise reported only
# as a closed stream, one that hangs only after mcp's shutdown grace periods
_EXIT_WRAPPER = f'echo $$ > "$1"; shift; "$@"; code=$?; echo "{EXIT_MARK}$code" >&2; exit $code'


class EnvironmentError_(RuntimeError):
    """The server could not be reached, crashed or hung (not a tool error)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 20.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise EnvironmentError_(
                f"server process exited with code {proc.returncode} before listening on port {port}"
            )
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise EnvironmentError_(f"server did not listen on 127.0.0.1:{port} within {timeout:.0f}s")


def leaf_errors(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups: the causes, not "unhandled errors in a TaskGroup"."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in leaf_errors(sub)]
    return [exc]


def describe_error(exc: BaseException) -> str:
    leaves = leaf_errors(exc)
    parts = []
    for e in leaves:
        text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        if text not in parts:
            parts.append(text)
    return "; ".join(parts)


def default_log_dir() -> Path:
    """Where servers log when the caller names no directory (a build passes ``<data dir>/logs/servers``)."""
    return Path(
        os.environ.get("PROVE_SERVER_LOG_DIR")
        or Path(tempfile.gettempdir()) / f"prove-{os.getuid()}" / "logs" / "servers"
    )


class ServerLog:
    """A server's stderr, appended to ``<log_dir>/<server>.log`` (or discarded without a log dir)."""

    def __init__(self, log_dir: str | Path | None, server: str):
        self.path: Path | None = Path(log_dir or default_log_dir()) / f"{server}.log"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            self.path = None

    def open(self) -> tuple[IO[str], int]:
        """A file for a new process's stderr, and where its output starts."""
        if self.path is None:
            return open(os.devnull, "w"), 0
        f = open(self.path, "a", encoding="utf-8", errors="replace")
        f.flush()
        return f, f.tell()

    def since(self, offset: int, lines: int = 8) -> list[str]:
        """The last ``lines`` lines written from ``offset`` on (the output of one process)."""
        if self.path is None or not self.path.exists():
            return []
        with open(self.path, encoding="utf-8", errors="replace") as f:
            f.seek(offset)
            text = f.read()
        return [ln for ln in text.splitlines() if ln.strip()][-lines:]


class Transport:
    """One connection's way to its server (the target ``mcp.Client`` connects to) and the process it owns."""

    def __init__(
        self,
        config: ServerConfig,
        log: ServerLog,
        workdir: str | None = None,
        env: dict[str, str] | None = None,
        args: list[str] | None = None,
    ):
        self.config, self.log, self.workdir = config, log, workdir
        self.server_env = env  # the config's env, resolved for this process (None: resolved here)
        self.args = args
        self.proc: subprocess.Popen | None = None
        self._errlog: IO[str] | None = None
        self._log_from = 0
        self._pidfile: str | None = None
        self.timed_out = False  # stopped by :meth:`kill_on_timeout`

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.server_env if self.server_env is not None else self.config.resolved_env())
        return env

    def _stdio(self, command: str, args: list[str]) -> Any:
        self._errlog, self._log_from = self.log.open()
        fd, self._pidfile = tempfile.mkstemp(prefix="prove-server-", suffix=".pid")
        os.close(fd)
        params = StdioServerParameters(
            command="sh",
            args=["-c", _EXIT_WRAPPER, "prove-server", self._pidfile, command, *args],
            env=self._env(),
            cwd=self.workdir,
        )
        return stdio_client(params, errlog=self._errlog)

    def kill_on_timeout(self) -> None:
        """End a stdio server that did not answer in time, with all its processes (the connection then
        fails at once, instead of after mcp's shutdown grace periods)."""
        try:
            pid = int(Path(self._pidfile).read_text().strip()) if self._pidfile else 0
        except (OSError, ValueError):
            pid = 0
        if pid > 0:
            self.timed_out = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass  # already gone

    def target(self) -> Any:
        c = self.config
        if c.kind == "builtin" and c.transport == "inprocess":
            return build(  # the in-process transport: still spoken through MCP
                c.builtin_name
            )
        if c.kind == "builtin" and c.transport == "stdio":
            return self._stdio(sys.executable, ["-m", "servers", c.builtin_name])
        if c.kind == "stdio":
            try:
                command = c.resolved_command()
            except ValueError as exc:
                raise EnvironmentError_(str(exc)) from None
            return self._stdio(command, list(self.args if self.args is not None else c.args))
        if c.kind == "builtin" and c.transport == "http":
            port = free_port()
            self._errlog, self._log_from = self.log.open()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "servers", c.builtin_name, "--transport", "http", "--port", str(port)],
                stdout=subprocess.DEVNULL,
                stderr=self._errlog,
                env=self._env(),
            )
            wait_for_port(port, proc=self.proc)
            return f"http://127.0.0.1:{port}/mcp"
        if c.kind == "http":
            if c.headers:
                import httpx
                from mcp.client.streamable_http import streamable_http_client

                return streamable_http_client(
                    c.url, http_client=httpx.AsyncClient(headers=c.resolved_headers(), timeout=c.timeout_s)
                )
            return c.url
        raise ValueError(f"server {c.name!r}: unsupported kind/transport {c.kind}/{c.transport}")

    def why_failed(self, exc: BaseException) -> str:
        """Why the server could not be used: its exit code and last stderr lines, a timeout, or the error."""
        lines = self.log.since(self._log_from) if self._errlog is not None else []
        exit_lines = [ln for ln in lines if ln.startswith(EXIT_MARK)]
        said = [ln for ln in lines if not ln.startswith(EXIT_MARK)]
        cause = describe_error(exc)
        parts = []
        if self.timed_out:  # stopped by us at its timeout: its exit code says nothing
            exit_lines = []
            parts.append(
                f"the server did not start within its start timeout of {self.config.start_timeout:g}s and was stopped"
            )
        elif exit_lines:
            parts.append(f"the server process exited with code {exit_lines[-1][len(EXIT_MARK) :].strip()}")
        elif self.proc is not None and self.proc.poll() is not None:
            parts.append(f"the server process exited with code {self.proc.returncode}")
        elif "timed out" in cause.lower() or "timeout" in cause.lower():
            parts.append(f"the server did not answer within its timeout of {self.config.timeout_s:g}s")
        if said:
            parts.append("its stderr ended with: " + " | ".join(said[-5:]))
        if not self.timed_out and (not parts or not exit_lines):
            parts.append(cause)
        where = f" (log: {self.log.path})" if self.log.path else ""
        return "; ".join(parts) + where

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None
        if self._pidfile is not None:
            Path(self._pidfile).unlink(missing_ok=True)
            self._pidfile = None
