"""`prove ui` (Dagster's `dg dev`, docs/dagster.md) stops on SIGTERM and SIGINT within 10 s and leaves no process.

The UI is started as the docs start it (`prove ui`: `dg dev` from the repository root, over a temporary
``DAGSTER_HOME`` that it gives the repository's ``dagster.yaml``, and a temporary data dir), a tiny run is launched
from it over GraphQL (a `server_job` partition at a few examples, as the launchpad launches it) and once that run is
done, the signal goes to it (below). Every process of its tree (the webserver, the daemon, the code servers, the
run's worker and whatever those started) and of its session must be gone within 10 s, and its log must not carry
Dagster's warning about which instance config is used.
"""

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

from tests.assets.conftest import (
    ADD_PARTITION,
    LOCATION,
    PER_SERVER,
    REPOSITORY,
    DagsterUI,
    _free_port,
    _wait_until_ready,
    launch,
    run_failure_messages,
    wait_for_runs,
)

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(sys.executable).parent.parent
STOP_WITHIN_S = 10


def _log_tail(path: Path, n: int = 40) -> str:
    lines = [ln for ln in path.read_text(errors="replace").splitlines() if " - __ASSET_JOB - " not in ln]
    return "\n".join(lines[-n:])


def _name(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline()[:4])[:80]
    except psutil.Error:
        return "?"


def _tree(pid: int) -> list[psutil.Process]:
    try:
        p = psutil.Process(pid)
        return [p, *p.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _in_session(sid: int) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter():
        try:
            if os.getsid(p.pid) == sid:
                out.append(p)
        except (ProcessLookupError, PermissionError, psutil.Error):
            pass
    return out


def _alive(procs: list[psutil.Process]) -> list[str]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(f"{p.pid} {' '.join(p.cmdline())[:200]}")
        except psutil.NoSuchProcess:
            pass
    return out


def _sigint_ignored() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# SIGTERM to the command alone, started with SIGINT ignored as a script's background job (`prove ui &`) or nohup
# start it (Dagster maps SIGTERM onto SIGINT's handler: before prove ui's own handler every process ignored both);
# SIGINT to its whole process group, as a terminal's Ctrl-C sends it
@pytest.mark.parametrize(
    ("sig", "to_group", "background"),
    [(signal.SIGTERM, False, True), (signal.SIGINT, True, False)],
    ids=["SIGTERM-background", "SIGINT-group"],
)
def test_prove_ui_stops_and_leaves_nothing(
    tmp_path: Path, sig: signal.Signals, to_group: bool, background: bool
) -> None:
    home, data_dir = tmp_path / "dagster_home", tmp_path / "data"
    data_dir.mkdir()  # the home is made by prove ui, with the repository's dagster.yaml in it
    port = _free_port()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "PROVE_DATA_DIR": str(data_dir),
        "VIRTUAL_ENV": str(VENV),  # as `source .venv/bin/activate` sets it (docs/dagster.md)
        "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONUNBUFFERED": "1",
        "DAGSTER_DISABLE_TELEMETRY": "1",
    }
    log_path = tmp_path / "dg-dev.log"
    ui = DagsterUI(url=f"http://127.0.0.1:{port}", home=home, data_dir=data_dir)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                str(VENV / "bin" / "prove"),
                "ui",
                "--data-dir",
                str(data_dir),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own session: what is left of it afterwards is found by the session id
            preexec_fn=_sigint_ignored if background else None,
        )
    ui.logs["dg dev"], ui.procs["dg dev"] = log_path, proc
    seen: dict[int, psutil.Process] = {}
    try:
        _wait_until_ready(ui)
        repo = {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY}
        res = ui.graphql(ADD_PARTITION, {"repo": repo, "key": "banking"})["addDynamicPartition"]
        assert res["__typename"] == "AddDynamicPartitionSuccess", res
        config = {
            "resources": {
                # 8 tool chains (a small build plans the default 60 whatever its size)
                "settings": {
                    "config": {
                        "build": {
                            "examples": 3,
                            "servers": ["banking"],
                            "chains": {"per_server": 8},
                            "data_dir": str(data_dir),
                        }
                    }
                },
                "training": {"config": {"train": False}},
            },
        }
        run_id = launch(ui, PER_SERVER, config, {"dagster/partition": "banking"})
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # every process the run's launch made, the run worker among them
            seen.update({p.pid: p for p in _tree(proc.pid)})
            status = ui.graphql("query($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }", {"id": run_id})
            if status["runOrError"]["status"] in ("SUCCESS", "FAILURE", "CANCELED"):
                break
            time.sleep(0.5)
        status = wait_for_runs(ui, [run_id])
        assert status[run_id] == "SUCCESS", run_failure_messages(ui, run_id)
        seen.update({p.pid: p for p in _tree(proc.pid)})
        seen.update({p.pid: p for p in _in_session(proc.pid)})

        names = {pid: f"{pid} {_name(p)}" for pid, p in seen.items()}
        t0 = time.monotonic()
        if to_group:  # a terminal's Ctrl-C: the signal goes to the whole foreground process group
            os.killpg(proc.pid, sig)
        else:  # `kill PID`, a service manager's stop: to the command alone
            proc.send_signal(sig)
        gone: dict[str, float] = {}  # each process's exit, seconds after the signal
        left: list[str] = []
        while time.monotonic() - t0 < STOP_WITHIN_S:
            left = _alive(list(seen.values()) + _in_session(proc.pid))
            for p in seen.values():
                name = names[p.pid]
                if name not in gone and not _alive([p]):
                    gone[name] = round(time.monotonic() - t0, 2)
            if proc.poll() is not None and not left:
                break
            time.sleep(0.2)
        took = time.monotonic() - t0
        assert proc.poll() is not None and not left, (
            f"{sig.name}: after {took:.1f}s prove ui is {'running' if proc.poll() is None else 'gone'} and these are "
            f"alive:\n" + "\n".join(left) + f"\n--- prove ui log tail (run events left out) ---\n{_log_tail(log_path)}"
        )
        log_text = log_path.read_text(errors="replace")
        assert "will not be used" not in log_text, log_text[-4000:]
    finally:
        for p in _tree(proc.pid) + _in_session(proc.pid):
            try:
                p.kill()
            except psutil.Error:
                pass
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
    print(json.dumps({"signal": sig.name, "stopped_in_s": round(took, 2), "gone_at_s": gone}))
