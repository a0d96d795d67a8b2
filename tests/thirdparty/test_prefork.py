"""The suite's quick start for fixture servers (prefork.py) keeps the contract of a server process: the fixture a
launcher hands over answers MCP on the launcher's own pipes, in its working directory and environment; a signal to
the launcher reaches the server and the server's exit status comes back as the launcher's; a launcher killed outright
takes its server with it. A forking process of this module's own, so that the tests hold with or without the run's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.thirdparty import prefork

HERE = Path(__file__).resolve().parent
PY = sys.executable


@pytest.fixture(scope="module")
def forker(tmp_path_factory) -> Iterator[tuple[psutil.Process, str]]:
    sock = str(tmp_path_factory.mktemp("prefork") / "socket")
    proc = prefork.start(sock)
    assert proc is not None, "the forking process did not start"
    yield psutil.Process(proc.pid), sock
    prefork.stop(proc)


def _launch(sock: str, cwd: Path, *args: str, fixture: str = "counter_server.py", **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [PY, str(HERE / fixture), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env={**os.environ, "PROVE_FIXTURE_PREFORK": sock, **env},
        text=True,
    )


def _rpc(proc: subprocess.Popen, rid: int, method: str, params: dict) -> dict:
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def _server_in(forker: psutil.Process, cwd: Path) -> psutil.Process:
    """The forking process's child working in ``cwd`` (each test's own directory)."""
    return next(c for c in forker.children() if Path(c.cwd()) == cwd)


def _initialize(proc: subprocess.Popen) -> dict:
    client = {"name": "test", "version": "0"}
    answer = _rpc(proc, 1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client})
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    proc.stdin.flush()
    return answer


def test_a_handed_over_fixture_answers_on_the_launchers_pipes_in_its_directory_and_environment(forker, tmp_path):
    proc, sock = forker
    launcher = _launch(sock, tmp_path, fixture="archive_server.py", ARCHIVE_PASSWORD="from-the-launcher")
    try:
        assert _initialize(launcher)["result"]["serverInfo"]["name"] == "archive"
        login = {"name": "login", "arguments": {"username": "ada", "password": "from-the-launcher"}}
        assert _rpc(launcher, 2, "tools/call", login)["result"]["structuredContent"] == {"logged_in_as": "ada"}
        assert _server_in(proc, tmp_path).pid != launcher.pid
    finally:
        launcher.kill()
        launcher.wait()


def test_a_signal_to_the_launcher_reaches_the_server_and_its_exit_status_comes_back(forker, tmp_path):
    proc, sock = forker
    launcher = _launch(sock, tmp_path, "--crash-on", "increment")
    _initialize(launcher)
    request = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    request["params"] = {"name": "increment", "arguments": {"counter_id": "c1"}}
    launcher.stdin.write(json.dumps(request) + "\n")
    launcher.stdin.flush()
    assert launcher.wait(timeout=30) == 3  # the server's os._exit(3), as its own process would have exited
    usage = subprocess.run(
        [PY, str(HERE / "counter_server.py"), "--no-such-option"],
        capture_output=True,
        text=True,
        env={**os.environ, "PROVE_FIXTURE_PREFORK": sock},
        timeout=30,
    )
    assert usage.returncode == 2 and "unrecognized arguments: --no-such-option" in usage.stderr
    stopped = _launch(sock, tmp_path)
    _initialize(stopped)
    stopped.send_signal(signal.SIGTERM)
    assert stopped.wait(timeout=30) == -signal.SIGTERM


def test_a_launcher_killed_outright_takes_its_server_with_it(forker, tmp_path):
    proc, sock = forker
    launcher = _launch(sock, tmp_path)
    _initialize(launcher)
    server = _server_in(proc, tmp_path)
    launcher.kill()
    launcher.wait()
    _, alive = psutil.wait_procs([server], timeout=10)
    assert not alive, "the server outlived its launcher"
