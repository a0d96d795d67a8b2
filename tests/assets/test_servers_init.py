"""``prove servers init`` on a login-gated archive (tests/thirdparty/archive_server.py) that needs a setup call with a
secret, a known value and an allow-list: from a values file, at a terminal (a real pty), and with --no-input; and
bad input said as the problem. The three runs on the archive go side by side (each checks the server twice)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from subprocess import PIPE

import pytest

from assets.cli import main
from pipeline.core.servers_file import load_servers_file

ROOT = Path(__file__).resolve().parents[2]
ARCHIVE = str(ROOT / "tests" / "thirdparty" / "archive_server.py")
VALUES = """\
setup: {login: {username: ada}}
secrets: {password: ARCHIVE_PASSWORD}
known_values: {project: orion}
probe_allowlist: [read_document]
"""


def _init_argv(data: Path, out: Path, *extra: str) -> list[str]:
    return [
        *("servers", "init", "--out", str(out), "--data-dir", str(data)),
        *("--env", "ARCHIVE_PASSWORD=${ARCHIVE_PASSWORD}", *extra),
        *("--", sys.executable, ARCHIVE),
    ]


class Terminal:
    """The CLI run in a real pseudo-terminal: what it printed so far, what it is asked next."""

    def __init__(self, argv: list[str], env: dict[str, str]):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: prove, with the pty as its terminal
            os.chdir(ROOT)
            os.execve(sys.executable, [sys.executable, "-m", "assets.cli", *argv], env)
        self.seen = ""  # what it printed since the last answer
        self.transcript = ""  # all it printed, with the answers the terminal echoed

    def expect(self, text: str, timeout: float = 300) -> None:
        end = time.monotonic() + timeout
        while text not in self.seen:
            if time.monotonic() > end or not self._read(end - time.monotonic()):
                raise AssertionError(f"never asked {text!r}; the terminal shows:\n{self.seen[-3000:]}")

    def answer(self, prompt: str, text: str) -> None:
        self.expect(prompt)
        self.seen = self.seen[self.seen.index(prompt) + len(prompt) :]
        os.write(self.fd, text.encode() + b"\r")

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], max(0.0, wait))
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 65536).decode(errors="replace")
        except OSError:  # the child closed the terminal
            return False
        self.seen += chunk
        self.transcript += chunk
        return bool(chunk)

    def finish(self, timeout: float = 300) -> int:
        end = time.monotonic() + timeout
        while self._read(end - time.monotonic()):
            pass
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The values-file run, the --no-input run and the terminal run, started together."""
    tmp = tmp_path_factory.mktemp("init")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ARCHIVE_PASSWORD": "pw1"}
    (tmp / "values.yaml").write_text(VALUES)

    def start(name: str, *extra: str) -> subprocess.Popen:
        argv = _init_argv(tmp / name, tmp / f"{name}.yaml", *extra)
        cmd = [sys.executable, "-m", "assets.cli", *argv]
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=PIPE, stderr=PIPE, text=True)

    started = time.monotonic()
    scripted = start("scripted", "--values", str(tmp / "values.yaml"))
    blind = start("blind", "--no-input")
    term_env = {k: v for k, v in env.items() if k != "ARCHIVE_PASSWORD"}  # asked for, hidden, at the terminal
    term = Terminal(_init_argv(tmp / "term", tmp / "term.yaml"), term_env)
    term.answer("ARCHIVE_PASSWORD is not set here: its value, for this run's checks (not written):", "pw1")
    term.answer("setup.login.username:", "ada")
    term.answer("secrets.password [ARCHIVE_PASSWORD]:", "")  # the default: the variable named after server and secret
    term.answer("known_values.folder:", "")  # skipped: once logged in, list_folders lists the folders
    term.answer("known_values.project:", "orion")
    term.answer("probe_allowlist.read_document [y/N]:", "maybe")
    term.answer("probe_allowlist.read_document [y/N]:", "y")
    term_rc = term.finish()
    results = {
        "scripted": scripted.communicate(timeout=600),
        "blind": blind.communicate(timeout=600),
    }
    return {
        "tmp": tmp,
        "scripted": (scripted.returncode, *results["scripted"]),
        "blind": (blind.returncode, *results["blind"]),
        "term": (term_rc, term.transcript),
        "wall_s": time.monotonic() - started,
    }


def _written(path: Path) -> dict:
    [cfg] = load_servers_file(path)
    return cfg.model_dump()


def test_init_from_a_values_file_writes_a_file_that_loads_and_makes_the_tools_chain(runs):
    rc, out, err = runs["scripted"]
    assert rc == 0, out + err
    assert "wrote " in out and "4 of 5 tools chain (before: 0 of 5)" in out, out
    before, after = out.split("with it:")
    for tool in ("list_folders", "list_documents", "project_documents", "read_document"):
        assert f"cannot chain {tool}" in before and f"cannot chain {tool}" not in after, out
    path = runs["tmp"] / "scripted.yaml"
    cfg = _written(path)
    assert cfg["setup"] == [{"tool": "login", "arguments": {"username": "ada", "password": "${secret:password}"}}]
    assert cfg["secrets"] == {"password": "${ARCHIVE_PASSWORD}"} and "pw1" not in path.read_text()
    assert cfg["known_values"] == {"project": "orion"} and cfg["probe_allowlist"] == ["read_document"]
    # the file checked last is the file written, byte for byte
    assert path.read_bytes() == (runs["tmp"] / "scripted" / "init" / "archive.yaml").read_bytes()


def test_init_at_a_terminal_asks_each_value_and_writes_the_same_entry(runs):
    rc, shown = runs["term"]
    assert rc == 0, shown
    assert "answer y or n, not 'maybe'" in shown  # a wrong answer is asked again
    assert "4 of 5 tools chain (before: 0 of 5)" in shown, shown
    assert _written(runs["tmp"] / "term.yaml") == _written(runs["tmp"] / "scripted.yaml")


def test_no_input_fails_listing_every_value_still_needed_and_writes_nothing(runs):
    rc, out, err = runs["blind"]
    assert rc == 2, out + err
    for key in ("setup.login.username", "secrets.password", "known_values.project", "probe_allowlist.read_document"):
        assert key in err, err
    assert "Traceback" not in err and "--values FILE" in err
    # a values file to fill in
    assert "login: {username: <username>}" in err and "probe_allowlist: [read_document]" in err, err
    assert not (runs["tmp"] / "blind.yaml").exists()


def _run(capsys, *argv: str) -> tuple[int, str]:
    rc = main(list(argv))
    return rc, capsys.readouterr().err


def test_bad_input_is_one_clear_line(tmp_path, capsys):
    out = tmp_path / "servers.yaml"
    rc, err = _run(capsys, "servers", "init", "--out", str(out), "--", "no-such-mcp-server", "--flag")
    assert rc == 2 and "command 'no-such-mcp-server' not found" in err
    crash = tmp_path / "crash_server.py"
    crash.write_text("import sys\nprint('cannot open the database', file=sys.stderr)\nsys.exit(3)\n")
    rc, err = _run(
        capsys, "servers", "init", "--out", str(out), "--data-dir", str(tmp_path), "--", sys.executable, str(crash)
    )
    assert rc == 2 and "exited with code 3" in err and "cannot open the database" in err, err
    assert not out.exists()
    out.write_text("servers: []\n")
    rc, err = _run(capsys, "servers", "init", "--out", str(out), "--", sys.executable, str(crash))
    assert rc == 2 and "exists; pass --force" in err and out.read_text() == "servers: []\n"
    rc, err = _run(capsys, "servers", "init", "--url", "http://127.0.0.1:9/mcp", "--", sys.executable, str(crash))
    assert rc == 2 and "give the server as a command after --" in err
