"""SIGTERM (or Ctrl-C) on `prove build` stops its workers and their servers, third-party stdio servers
included, and leaves no partial version. A real build in a subprocess, a real signal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
COUNTER = ROOT / "tests" / "thirdparty" / "counter_server.py"


@pytest.fixture(autouse=True)
def servers_in_their_own_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each fixture server its own process in the build's tree, where these tests look for it (the suite's quick start,
    tests/thirdparty/prefork.py, serves it from a fork outside that tree)."""
    monkeypatch.delenv("PROVE_FIXTURE_PREFORK", raising=False)


def _tree(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _cmd(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return ""


def _in_session(sid: int) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter():
        try:
            if os.getsid(p.pid) == sid and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except (psutil.NoSuchProcess, ProcessLookupError, PermissionError):
            pass
    return out


def _start_build(tmp_path: Path) -> subprocess.Popen:
    servers = tmp_path / "servers.yaml"
    # the third-party server first: a worker starts it at once, so the signal comes as soon as the workers run
    # (listed last, it waited for a built-in server's whole partition)
    servers.write_text(
        f"servers:\n  - name: counters\n    kind: stdio\n    command: {sys.executable}\n    args: ['{COUNTER}']\n"
        "  - name: banking\n  - name: crm\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(tmp_path / "home")}
    log = open(tmp_path / "build.log", "w")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "assets.cli",
            "build",
            "--servers-file",
            str(servers),
            "--examples",
            "600",
            "--no-train",
            "--parallel",
            "2",
            "--data-dir",
            str(tmp_path / "data"),
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _build_logs(tmp_path: Path, proc: subprocess.Popen, n: int = 3000) -> str:
    """What the build said: its exit status, the tail of its terminal output and of its log file (the libraries'
    output and a worker's traceback go there), for an assertion message."""
    status = "running" if proc.poll() is None else f"exited with status {proc.returncode}"
    parts = [f"the build ({status}); its output:", (tmp_path / "build.log").read_text(errors="replace")[-n:]]
    for log in sorted((tmp_path / "data" / "logs").glob("*.log")):
        parts += [f"--- {log.name} ---", log.read_text(errors="replace")[-n:]]
    return "\n".join(parts)


def _exit_status(proc: subprocess.Popen, tmp_path: Path, timeout_s: float) -> int:
    """The build's exit status once it ends; a build still running after ``timeout_s`` fails the test with its logs."""
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the build did not stop within {timeout_s}s of the signal\n" + _build_logs(tmp_path, proc))


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL whatever is left of the build's process group, and reap the build.

    The group is signalled by its id only while the build is not yet reaped: once it is, its pid is free, and on a
    busy machine (pid_max 32768 here) a new session leader of another test can take it within seconds, and with it
    the group id. After that, what is left of the build's session is killed process by process: those started
    before whatever holds the build's pid now."""
    if proc.returncode is None:  # not reaped (perhaps a zombie): the id is still the build's
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    else:
        try:
            taken = psutil.Process(proc.pid).create_time()  # the pid given to a process after the build
        except psutil.NoSuchProcess:
            taken = float("inf")
        for p in _in_session(proc.pid):
            try:
                if p.create_time() < taken:
                    p.kill()
            except psutil.NoSuchProcess:
                pass
    proc.wait(timeout=10)


def _wait_for_servers(proc: subprocess.Popen, tmp_path: Path, timeout_s: float = 180) -> list[psutil.Process]:
    """Until the workers run and one has started the third-party stdio server."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        assert proc.poll() is None, "the build ended before it could be interrupted\n" + _build_logs(tmp_path, proc)
        tree = _tree(proc.pid)
        # the forkserver and at least one worker forked from it (their command line is the forkserver's)
        if any("counter_server.py" in _cmd(p) for p in tree) and sum("forkserver" in _cmd(p) for p in tree) >= 2:
            return tree
        time.sleep(0.2)
    pytest.fail("the build never started the third-party server\n" + _build_logs(tmp_path, proc))


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_every_worker_and_server_and_publishes_no_version(tmp_path, sig, code):
    proc = _start_build(tmp_path)
    try:
        tree = _wait_for_servers(proc, tmp_path)
        proc.send_signal(sig)
        assert _exit_status(proc, tmp_path, 60) == code, _build_logs(tmp_path, proc)
        _, alive = psutil.wait_procs(tree, timeout=10)
        assert not alive, [_cmd(p) for p in alive]
        # a process that was starting as the signal came is given the same 10 s to end; none may stay
        _, stray = psutil.wait_procs(_in_session(proc.pid), timeout=10)
        assert not stray, ("no process of the build survives", [_cmd(p) for p in stray])
        corpus = tmp_path / "data" / "corpus"
        entries = [p.name for p in corpus.iterdir()] if corpus.exists() else []
        assert not [e for e in entries if e.startswith("v") or e.startswith(".staging-")], entries
        assert "interrupted" in (tmp_path / "build.log").read_text(), _build_logs(tmp_path, proc)
    finally:
        _kill_group(proc)


def test_workers_stop_with_their_servers_when_prove_itself_is_killed(tmp_path):
    proc = _start_build(tmp_path)
    try:
        tree = _wait_for_servers(proc, tmp_path)
        proc.kill()
        _exit_status(proc, tmp_path, 30)
        _, alive = psutil.wait_procs(tree, timeout=20)
        assert not alive, [_cmd(p) for p in alive]
    finally:
        _kill_group(proc)


def test_sigterm_during_training_in_this_process_stops_the_build_as_interrupted(tmp_path):
    """Inside a run Dagster takes SIGTERM over (it becomes an interrupted step); the build still stops as
    interrupted."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(tmp_path / "home")}
    # the evaluation before SFT kept small (it comes before the first loss): the SFT steps stay many, so training
    # is still going when the signal comes
    (tmp_path / "build.yaml").write_text("chains:\n  per_server: 12\n")  # the default plans 60 whatever the size
    (tmp_path / "train.yaml").write_text(
        "eval_limit: 4\neval_batch_size: 4\nmax_new_tokens: 16\neval_max_new_tokens: 16\nbootstrap_samples: 100\n"
        "sft_batch_size: 2\n"
    )
    with open(tmp_path / "build.log", "w") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "assets.cli",
                "build",
                "--servers",
                "banking",
                "--examples",
                "30",
                "--parallel",
                "1",
                "--config",
                str(tmp_path / "build.yaml"),
                "--train-config",
                str(tmp_path / "train.yaml"),
                "--data-dir",
                str(tmp_path / "data"),
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.time() + 300
        while time.time() < deadline and "'loss'" not in "".join(
            p.read_text() for p in (tmp_path / "data" / "logs").glob("*.log")
        ):
            assert proc.poll() is None, _build_logs(tmp_path, proc)
            time.sleep(0.5)
        tree = _tree(proc.pid)
        proc.send_signal(signal.SIGTERM)
        assert _exit_status(proc, tmp_path, 120) in (130, 143), _build_logs(tmp_path, proc)
        out = (tmp_path / "build.log").read_text()
        assert "prove: interrupted" in out and "took" not in out, out[-2000:]
        _, alive = psutil.wait_procs(tree, timeout=10)
        assert not alive and not _in_session(proc.pid)
    finally:
        _kill_group(proc)


STOPPER = (
    """
import json, signal, subprocess, sys, time
from assets.cli.interrupt import ignores_sigterm, stop_descendants
# the children below inherit this process's SIGTERM disposition and mask, and this process those of the test worker
# that started it (which earlier tests may have left ignoring or blocking it): the "plain" child must start plain
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
code = "import signal, time; {} print('ready', flush=True); time.sleep(600)"
deaf = subprocess.Popen([sys.executable, "-c", code.format("signal.signal(signal.SIGTERM, signal.SIG_IGN);")], """
    """stdout=subprocess.PIPE)
plain = subprocess.Popen([sys.executable, "-c", code.format("")], stdout=subprocess.PIPE)
deaf.stdout.readline(), plain.stdout.readline()
seen = [ignores_sigterm(deaf.pid), ignores_sigterm(plain.pid)]
stopped = stop_descendants(grace_s=float(sys.argv[1]))
print(json.dumps({"ignores": seen, "stopped": stopped, "gone": [deaf.wait(5) is not None, plain.wait(5) is not None]}))
"""
)


@pytest.mark.timeout(90)
def test_a_process_that_ignores_sigterm_is_killed_at_once_not_waited_for():
    """multiprocessing's resource tracker ignores SIGTERM: waiting out the grace period for it only delayed Ctrl-C.
    With a 10-minute grace period the stop returns within the test's timeout only if it does not wait for it."""
    out = subprocess.run(
        [sys.executable, "-c", STOPPER, "600"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=80,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.splitlines()[-1])
    assert got == {"ignores": [True, False], "stopped": 2, "gone": [True, True]}
