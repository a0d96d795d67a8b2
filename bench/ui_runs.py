"""A ``server_job`` partition run launched from the Dagster UI against ``prove build`` for the same partition. Prints
JSON.

What runs, on loopback over temporary ``DAGSTER_HOME`` and data dirs (nothing of the repository's ``data/``):

1. ``prove build --servers S --examples N --no-train`` as a user runs it (its own process, its own Dagster home):
   the baseline, in the same invocation. Its figure is the time from starting the command to the end of its
   ``server_job`` run for S (the partition; the command then runs ``corpus_job``, reported beside).
2. ``dagster-webserver`` and ``dagster-daemon run`` with the repository's ``dagster.yaml`` and ``PROVE_AUTOMATION``
   naming the same build (S, N examples, no training), as ``dagster dev`` starts them. Once the code location is
   loaded and the daemon is up, the script does what a click on *Launch run* in ``server_job``'s launchpad for
   partition S does: it reads the partition's run config and tags from the webserver (GraphQL
   ``partitionSetOrError``) and sends ``launchRun`` with them; then it polls the run until it ends. Its figure is
   the time from sending ``launchRun`` to seeing the run finished.

Both build the same partition from scratch (fresh data dirs, no graph cache). Where the time goes is read from each
run's events in its instance: the run queue (enqueued -> dequeued by the daemon), the run worker's start (the
launcher starting a process that imports the definitions, until the run starts), the steps' start (the time in a run
between its steps), the steps themselves, the run's end, and for ``prove build`` the command's own start (Python,
imports, the instance) up to its run's start.

    PYTHONPATH=. .venv/bin/python bench/ui_runs.py [--server banking] [--examples 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dagster as dg  # noqa: E402
from dagster import DagsterEventType as T  # noqa: E402

BIN = Path(sys.executable).parent
LOCATION, REPOSITORY = "assets.definitions", "__repository__"
TARGET_RATIO = 1.5
START_TIMEOUT_S, RUN_TIMEOUT_S = 180, 600

PARTITION = """
query($sel: RepositorySelector!, $p: String!) {
  partitionSetOrError(repositorySelector: $sel, partitionSetName: "server_job_partition_set") {
    __typename
    ... on PartitionSet { partition(partitionName: $p) {
      runConfigOrError { __typename ... on PartitionRunConfig { yaml } ... on PythonError { message } }
      tagsOrError { __typename ... on PartitionTags { results { key value } } ... on PythonError { message } }
    } }
    ... on PythonError { message }
    ... on Error { message }
  }
}"""

LAUNCH = """
mutation($p: ExecutionParams!) {
  launchRun(executionParams: $p) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on RunConfigValidationInvalid { errors { message } }
    ... on PythonError { message }
    ... on Error { message }
  }
}"""

ADD_PARTITION = """
mutation($sel: RepositorySelector!, $p: String!) {
  addDynamicPartition(repositorySelector: $sel, partitionsDefName: "servers", partitionKey: $p) {
    __typename
    ... on PythonError { message }
    ... on Error { message }
  }
}"""

STATUS = "query($id: ID!) { runOrError(runId: $id) { __typename ... on Run { status } } }"
READY = "{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } } } } }"
DAEMONS = "{ instance { daemonHealth { allDaemonStatuses { daemonType healthy } } } }"
FINISHED = {"SUCCESS", "FAILURE", "CANCELED"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _graphql(url: str, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    req = urllib.request.Request(f"{url}/graphql", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        out = json.loads(r.read())
    if out.get("errors"):
        raise RuntimeError(f"GraphQL errors: {json.dumps(out['errors'])[:2000]}")
    return out["data"]


def _home(path: Path) -> Path:
    """A Dagster home with the repository's dagster.yaml, as ``prove build`` and the docs set one up."""
    path.mkdir(parents=True)
    (path / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text())
    return path


def _env(home: Path, **extra: str) -> dict[str, str]:
    path = os.pathsep.join(x for x in (str(ROOT), os.environ.get("PYTHONPATH", "")) if x)
    return {**os.environ, "DAGSTER_HOME": str(home), "PYTHONPATH": path, "DAGSTER_DISABLE_TELEMETRY": "1", **extra}


@contextlib.contextmanager
def _instance(home: Path) -> Iterator[dg.DagsterInstance]:
    """The instance of a Dagster home (its dagster.yaml reads ``DAGSTER_HOME`` from the environment)."""
    before = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            yield instance
    finally:
        if before is None:
            os.environ.pop("DAGSTER_HOME", None)
        else:
            os.environ["DAGSTER_HOME"] = before


def _events(home: Path, run_id: str) -> dict[str, Any]:
    """A run's event times (wall clock) read from its instance: the run's own, and each step's start and end."""
    with _instance(home) as instance:
        logs = instance.all_logs(run_id)
    run: dict[str, float] = {}
    steps: dict[str, dict[str, float]] = {}
    for e in logs:
        t = e.dagster_event_type
        if t is None:
            continue
        if t in (T.RUN_ENQUEUED, T.RUN_DEQUEUED, T.RUN_STARTING, T.RUN_START, T.RUN_SUCCESS, T.RUN_FAILURE):
            run.setdefault(t.name, e.timestamp)
        elif t == T.STEP_START:
            steps.setdefault(e.step_key, {})["start"] = e.timestamp
        elif t in (T.STEP_SUCCESS, T.STEP_FAILURE):
            steps.setdefault(e.step_key, {})["end"] = e.timestamp
    return {"run": run, "steps": steps}


def _in_run(ev: dict[str, Any]) -> dict[str, float]:
    """A run's time from its start to its end: the steps, the time between them, and its end."""
    run, steps = ev["run"], ev["steps"]
    start, end = run["RUN_START"], run.get("RUN_SUCCESS", run.get("RUN_FAILURE"))
    in_steps = sum(s["end"] - s["start"] for s in steps.values())
    last = max(s["end"] for s in steps.values())
    return {
        "step_start": round(last - start - in_steps, 2),
        "steps": round(in_steps, 2),
        "run_end": round(end - last, 2),
    }


def _steps(ev: dict[str, Any]) -> dict[str, float]:
    return {k: round(s["end"] - s["start"], 2) for k, s in sorted(ev["steps"].items(), key=lambda kv: kv[1]["start"])}


def cli_build(server: str, examples: int, root: Path) -> dict[str, Any]:
    """``prove build`` for the one server, as a user runs it: seconds to its partition's end, and in all."""
    home = _home(root / "dagster_home")
    cmd = [str(BIN / "prove"), "build", "--servers", server, "--examples", str(examples), "--no-train"]
    cmd += ["--data-dir", str(root / "data")]
    t0 = time.time()
    with open(root / "build.log", "wb") as log:
        p = subprocess.run(cmd, cwd=ROOT, env=_env(home), stdout=log, stderr=subprocess.STDOUT, check=False)
    total = time.time() - t0
    if p.returncode != 0:
        raise RuntimeError(f"prove build failed ({p.returncode}):\n{(root / 'build.log').read_text()[-3000:]}")
    with _instance(home) as instance:
        (record,) = instance.get_run_records(filters=dg.RunsFilter(job_name="server_job"))
        run_id = record.dagster_run.run_id
    ev = _events(home, run_id)
    end = ev["run"]["RUN_SUCCESS"]
    return {
        "seconds": round(end - t0, 2),
        "command_seconds": round(total, 2),
        "where": {"command_start": round(ev["run"]["RUN_START"] - t0, 2), **_in_run(ev)},
        "step_seconds": _steps(ev),
    }


def _start(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as f:
        # a session of its own: stopping its group stops the code servers and run workers it started
        return subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, start_new_session=True
        )


def _stop(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


def _wait_ready(url: str, procs: dict[str, subprocess.Popen], root: Path) -> None:
    """Until the webserver has loaded the code location and every daemon reports healthy."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        for name, p in procs.items():
            if p.poll() is not None:
                raise RuntimeError(f"{name} exited ({p.returncode}):\n{(root / f'{name}.log').read_text()[-3000:]}")
        try:
            nodes = _graphql(url, READY)["repositoriesOrError"].get("nodes") or []
            daemons = _graphql(url, DAEMONS)["instance"]["daemonHealth"]["allDaemonStatuses"]
            loaded = any(n["name"] == REPOSITORY and n["location"]["name"] == LOCATION for n in nodes)
            if loaded and daemons and all(d["healthy"] for d in daemons):
                return
        except (urllib.error.URLError, OSError, RuntimeError, KeyError, TypeError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"the webserver or the daemon was not ready within {START_TIMEOUT_S}s")


def ui_run(server: str, examples: int, root: Path) -> dict[str, Any]:
    """A ``server_job`` run for the partition launched through the webserver as the launchpad launches it."""
    home = _home(root / "dagster_home")
    automation = root / "automation.yaml"
    build = {"servers": [server], "examples": examples, "train": False, "data_dir": str(root / "data")}
    automation.write_text(yaml.safe_dump(build))
    env = _env(home, PROVE_AUTOMATION=str(automation))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    procs: dict[str, subprocess.Popen] = {}
    try:
        web = [str(BIN / "dagster-webserver"), "-m", LOCATION, "-h", "127.0.0.1", "-p", str(port)]
        procs["dagster-webserver"] = _start(web, env, root / "dagster-webserver.log")
        # the daemon after the webserver has made the fresh instance's storage (both would migrate it at once)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                _graphql(url, READY)
                break
            except (urllib.error.URLError, OSError, RuntimeError):
                time.sleep(0.5)
        procs["dagster-daemon"] = _start([str(BIN / "dagster-daemon"), "run", "-m", LOCATION], env, root / "daemon.log")
        _wait_ready(url, procs, root)
        sel = {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY}
        # the partition must exist (the schedule and the sensors add theirs; here the UI's "Add partition")
        added = _graphql(url, ADD_PARTITION, {"sel": sel, "p": server})["addDynamicPartition"]
        if added["__typename"] not in ("AddDynamicPartitionSuccess", "DuplicateDynamicPartitionError"):
            raise RuntimeError(f"addDynamicPartition: {added}")
        part = _graphql(url, PARTITION, {"sel": sel, "p": server})["partitionSetOrError"]["partition"]
        config = part["runConfigOrError"]["yaml"]  # the launchpad's editor text, sent as it is
        tags = part["tagsOrError"]["results"]
        params = {
            "selector": {**sel, "pipelineName": "server_job"},
            "runConfigData": config,
            "executionMetadata": {"tags": tags},
        }
        t0 = time.time()
        res = _graphql(url, LAUNCH, {"p": params})["launchRun"]
        if res["__typename"] != "LaunchRunSuccess":
            raise RuntimeError(f"launchRun: {json.dumps(res)[:2000]}")
        run_id = res["run"]["runId"]
        status, deadline = "QUEUED", time.monotonic() + RUN_TIMEOUT_S
        while status not in FINISHED and time.monotonic() < deadline:
            time.sleep(0.2)
            status = _graphql(url, STATUS, {"id": run_id})["runOrError"]["status"]
        seen = time.time()
    finally:
        for p in reversed(list(procs.values())):
            _stop(p)
    if status != "SUCCESS":
        raise RuntimeError(f"the UI-launched run ended {status}:\n{(root / 'daemon.log').read_text()[-3000:]}")
    ev = _events(home, run_id)
    r = ev["run"]
    return {
        "seconds": round(seen - t0, 2),
        "where": {
            # until the daemon's run queue took it and asked the run launcher for a worker
            "queued": round(r["RUN_STARTING"] - t0, 2),
            # the launcher's new process (its Python, the definitions imported, the run loaded), until the run starts
            "run_worker_start": round(r["RUN_START"] - r["RUN_STARTING"], 2),
            **_in_run(ev),
            "seen_finished": round(seen - r["RUN_SUCCESS"], 2),  # this script's polling
        },
        "run_events": {k: round(v - t0, 2) for k, v in sorted(r.items(), key=lambda kv: kv[1])},
        "step_seconds": _steps(ev),
        "executor": _executor(home, run_id),
    }


def _executor(home: Path, run_id: str) -> str:
    """How the run executed its steps, in Dagster's words (its first engine event)."""
    with _instance(home) as instance:
        for e in instance.all_logs(run_id, of_type=T.ENGINE_EVENT):
            if e.message.startswith(("Executing steps", "Starting execution with step handler")):
                return e.message.split(" (pid")[0]
    return "unknown"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser()
    p.add_argument("--server", default="banking")
    p.add_argument("--examples", type=int, default=20, help="the build's corpus size (one server: a small partition)")
    a = p.parse_args(argv)
    load = round(os.getloadavg()[0], 2)
    with tempfile.TemporaryDirectory(prefix="prove-bench-ui-") as d:
        cli = cli_build(a.server, a.examples, Path(d) / "cli")
        ui = ui_run(a.server, a.examples, Path(d) / "ui")
    ratio = ui["seconds"] / cli["seconds"]
    result = {
        "figure": "ui_runs",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "loadavg_1m": load},
        "what": "a server_job partition run launched through the Dagster webserver's GraphQL API (the launchpad's "
        "Launch run: the partition's config and tags, launchRun; queued, started by the daemon) from launch to seen "
        "finished, vs `prove build --servers S --no-train` from the command's start to the end of its server_job run "
        "for S",
        "server": a.server,
        "examples": a.examples,
        "baseline": "prove build for the same partition (same invocation)",
        "ui_seconds": ui["seconds"],
        "prove_build_seconds": cli["seconds"],
        "ratio": round(ratio, 2),
        "target_ratio": TARGET_RATIO,
        "within_target": ratio <= TARGET_RATIO,
        "where": {"ui": ui["where"], "prove_build": cli["where"]},
        "ui_executor": ui["executor"],
        "ui_run_events": ui["run_events"],
        "step_seconds": {"ui": ui["step_seconds"], "prove_build": cli["step_seconds"]},
        "prove_build_command_seconds": cli["command_seconds"],
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
