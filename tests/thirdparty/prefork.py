"""The suite's quick start for the fixture servers: a fixture started while ``PROVE_FIXTURE_PREFORK`` names a socket
is served by a fork of one process that has imported ``mcp`` already, instead of importing it again itself.

Importing ``mcp`` is 0.6 CPU-s and most of a fixture server's cost; ``./test.sh`` starts about 300 of them (one per
session of a process-isolated server). ``tests/conftest.py`` starts the forking process (``python prefork.py serve
SOCKET``) once per run and sets the variable for every process of the run. A fixture imports this module before its
other imports: in the suite the process prove started (the *launcher*) then hands its stdin, stdout and stderr, its
arguments, working directory and environment to the forking process, which forks a child that runs the fixture on
them; the launcher passes SIGTERM, SIGINT and SIGHUP on to the child and exits with the child's exit status (dying of
the same signal where the child did). A child whose launcher dies (SIGKILL to its process group: prove's timeout)
kills itself at once. Without the variable, or with no forking process at the socket, importing this does nothing and
the fixture serves in its own process, as anywhere outside the suite.

What prove sees is the same process contract: the server it started speaks MCP on its pipes, writes its log to its
stderr, stops on a signal and reports its exit code. What it does not see is the server's own pid: tests that follow
a build's process tree to its fixture servers (test_interrupt) switch the quick start off."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess

ENV = "PROVE_FIXTURE_PREFORK"
IN_CHILD = False  # set in the forking process, so a fixture run in its child serves instead of handing over again
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
ROOT = Path(__file__).resolve().parents[2]


def builtin_server(name: str) -> tuple[str, list[str], dict[str, str]]:
    """(command, arguments, environment) of built-in server ``name`` over stdio through the quick start
    (``builtin_server.py``: ``python -m servers NAME``, a fork of a process that has imported mcp in the suite), for the
    tests about what its tools answer rather than how it starts (test_conformance, test_hostile_inputs)."""
    env = {"PYTHONPATH": str(ROOT), **({ENV: os.environ[ENV]} if ENV in os.environ else {})}
    return sys.executable, [str(ROOT / "tests" / "thirdparty" / "builtin_server.py"), name], env


def _read_line(answers: Any) -> str:
    """The next line the forking process sent (the child's pid, then its exit status: both may come in one read,
    when the server exits at once)."""
    line = answers.readline()
    if not line.endswith(b"\n"):
        raise ConnectionError("the forking process closed the connection")
    return line.decode().strip()


def hand_over(path: str) -> None:
    """Run this process's fixture in a child of the forking process at ``path``; exit as the child exits. Returns
    (to serve here) only where nothing listens at ``path``."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        return
    request = {"argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ), "launcher": os.getpid()}
    body = json.dumps(request).encode()
    socket.send_fds(conn, [len(body).to_bytes(8, "big") + body], [0, 1, 2])
    answers = conn.makefile("rb")
    child = int(_read_line(answers))

    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass  # it has exited: its status is on its way

    for sig in FORWARDED:
        signal.signal(sig, forward)
    try:
        code = int(_read_line(answers))
    except ConnectionError:
        code = 1
    if code < 0:  # the child died of a signal: so does the launcher, as the process prove started
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


def _serve_child(request: dict, fds: list[int]) -> None:
    """In the forked child: become the fixture process the launcher was, and run the fixture."""
    import runpy
    import select
    import threading
    import traceback

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = list(request["argv"])
    sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
    for sig in (*FORWARDED, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    launcher = os.pidfd_open(request["launcher"])

    def die_with_launcher() -> None:
        select.select([launcher], [], [])
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=die_with_launcher, daemon=True).start()
    code = 0
    try:
        runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as exc:
        if isinstance(exc.code, int) or exc.code is None:
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # as Python itself reports an uncaught error
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    msg, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    size = int.from_bytes(msg[:8], "big")
    body = msg[8:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ConnectionError("the launcher closed the connection")
        body += chunk
    return json.loads(body), fds


def serve(path: str) -> None:
    """The forking process: import what the fixtures import, then fork a child per launcher that connects."""
    import gc
    import select

    global IN_CHILD
    IN_CHILD = True
    os.environ.pop(ENV, None)
    sys.modules.setdefault("prefork", sys.modules[__name__])
    import anyio._backends._asyncio  # noqa: F401  (what the stdio transport runs on)
    import mcp.server.stdio  # noqa: F401
    import mcp.types  # noqa: F401
    import pydantic  # noqa: F401
    from mcp.server.mcpserver import MCPServer  # noqa: F401
    from mcp.server.mcpserver.exceptions import ToolError  # noqa: F401

    gc.freeze()  # the imported objects stay shared with the children instead of being copied by the collector
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, the launcher's connection)
    while True:
        ready, _, _ = select.select([listener, *children], [], [])
        for fd in ready:
            if fd is listener:
                conn, _ = listener.accept()
                try:
                    request, fds = _receive(conn)
                except (OSError, ValueError):
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    conn.close()
                    for pidfd, (_, other) in children.items():
                        os.close(pidfd)
                        other.close()
                    _serve_child(request, fds)
                for received in fds:
                    os.close(received)
                children[os.pidfd_open(pid)] = (pid, conn)
                try:
                    conn.sendall(f"{pid}\n".encode())
                except OSError:
                    pass  # the launcher is gone: its child finds out from its pidfd
            else:
                pid, conn = children.pop(fd)
                os.close(fd)
                _, status = os.waitpid(pid, 0)
                try:
                    conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                except OSError:
                    pass
                conn.close()


def start(path: str, timeout_s: float = 60) -> subprocess.Popen | None:
    """The forking process, listening at ``path`` (in a session of its own: its children stop with its group);
    None where it did not come up within ``timeout_s``. (Imports here: a launcher's start stays small.)"""
    import subprocess
    import time

    proc = subprocess.Popen(
        [sys.executable, __file__, "serve", path],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout_s
    while not os.path.exists(path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if os.path.exists(path):
        return proc
    proc.kill()
    proc.wait()
    return None


def stop(proc: subprocess.Popen) -> None:
    """The forking process and every server it forked (its process group), stopped."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    serve(sys.argv[2])
elif __name__ == "prefork" and not IN_CHILD and os.environ.get(ENV) and sys.argv[0].endswith(".py"):
    # imported by a fixture run as a script (tests/conftest.py imports this module under its package name)
    hand_over(os.environ[ENV])
