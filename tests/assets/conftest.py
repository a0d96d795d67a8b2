"""A real Dagster webserver (and daemon) on loopback, shared by the UI tests of this package.

``dagster_ui`` starts a code server (``dagster api grpc -m assets.definitions``, its runs forked from a process that has
imported the definitions: ``code_server.py``) and, on it (a workspace file),
``dagster-webserver`` and ``dagster-daemon run`` once per session, with a temporary ``DAGSTER_HOME`` holding a copy
of the repository's ``dagster.yaml`` (sqlite storage, QueuedRunCoordinator: queued runs are started by the daemon;
here it looks at its queue every second) and ``PROVE_DATA_DIR`` pointing at a temporary data directory. All three
are always stopped, with every process they started.

``materialized_through_ui`` adds the "servers" partitions and launches the runs through GraphQL, as
the UI's "Materialize" button does (``launchRun`` of the implicit ``__ASSET_JOB`` with an asset
selection): one run per server for the per-server assets, then one run for the cross-server assets
with the corpus checks. The run config sets the ``settings`` resource to a small build (30 examples,
no training); each run's steps run in its one worker process (the definitions' executor).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import stop_with_unit

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
LOCATION = "assets.definitions"
REPOSITORY = "__repository__"
SERVERS = ["banking", "crm"]
PER_SERVER = [
    "server_snapshots",
    "dependency_graphs",
    "tool_chains",
    "user_queries",
    "conversations",
    "validated_conversations",
]
CROSS = ["unique_conversations", "augmented_examples", "rejections", "corpus", "grpo_policy"]
CHECKS = ["corpus_nonempty_per_server", "corpus_no_near_duplicates", "corpus_composition", "corpus_lint"]
START_TIMEOUT_S = 60
RUN_TIMEOUT_S = 90


def _tail(path: Path, n: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM the process group this fixture started (the process, its code server and run workers), then SIGKILL."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
    try:  # whatever is left in the group (a code server or a run worker that outlived its parent)
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc.poll() is None:
        proc.wait(timeout=5)


@dataclass
class DagsterUI:
    url: str
    home: Path
    data_dir: Path
    logs: dict[str, Path] = field(default_factory=dict)
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    def logs_tail(self, n: int = 3000) -> str:
        parts = []
        for name, path in self.logs.items():
            proc = self.procs.get(name)
            state = (
                "running" if proc is not None and proc.poll() is None else f"exited {proc.returncode if proc else '?'}"
            )
            parts.append(f"--- {name} ({state}) stderr tail ---\n{_tail(path, n)}")
        return "\n".join(parts)

    def graphql(self, query: str, variables: dict[str, Any] | None = None, timeout: float = 30) -> dict[str, Any]:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        req = urllib.request.Request(f"{self.url}/graphql", data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                out = json.loads(r.read())
        except (urllib.error.URLError, OSError) as exc:
            raise AssertionError(f"GraphQL request to {self.url} failed: {exc}\n{self.logs_tail()}") from exc
        if out.get("errors"):
            raise AssertionError(f"GraphQL errors: {json.dumps(out['errors'], indent=1)[:3000]}\n{self.logs_tail()}")
        return out["data"]


def _wait_until_ready(ui: DagsterUI) -> None:
    """Until the webserver answers and has loaded the code location (or a process exits, or time runs out)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    last = "no answer yet"
    q = """{ repositoriesOrError { __typename ... on RepositoryConnection { nodes { name location { name } } }
             ... on PythonError { message } } }"""
    while time.monotonic() < deadline:
        for name, proc in ui.procs.items():
            if proc.poll() is not None:
                raise AssertionError(f"{name} exited with {proc.returncode} while starting\n{ui.logs_tail()}")
        try:
            body = json.dumps({"query": q}).encode()
            req = urllib.request.Request(f"{ui.url}/graphql", data=body, headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=5) as r:
                data = json.loads(r.read()).get("data") or {}
            res = data.get("repositoriesOrError") or {}
            nodes = res.get("nodes") or []
            if any(n["name"] == REPOSITORY and n["location"]["name"] == LOCATION for n in nodes):
                return
            last = json.dumps(res)[:500]
        except (urllib.error.URLError, OSError, ValueError) as exc:
            last = repr(exc)
        time.sleep(0.5)
    raise AssertionError(
        f"the Dagster webserver did not load {LOCATION} within {START_TIMEOUT_S}s (last: {last})\n{ui.logs_tail()}"
    )


def _wait_for_port(ui: DagsterUI, name: str, port: int) -> None:
    """Until ``name`` (started last) accepts connections on ``port``: a code server opens its port once it has loaded
    the definitions."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if ui.procs[name].poll() is not None:
            raise AssertionError(f"{name} exited with {ui.procs[name].returncode} while starting\n{ui.logs_tail()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{name} did not listen on port {port} within {START_TIMEOUT_S}s\n{ui.logs_tail()}")


@pytest.fixture(scope="session")
def dagster_ui(tmp_path_factory) -> DagsterUI:
    tmp = tmp_path_factory.mktemp("dagster_ui")
    home, data_dir = tmp / "dagster_home", tmp / "data"
    home.mkdir()
    data_dir.mkdir()
    # the repository's dagster.yaml, its run queue looked at every second rather than Dagster's default 5 s: each run
    # the UI, a schedule or a sensor launches waits for that look (runs here are launched one after another)
    instance = yaml.safe_load((ROOT / "dagster.yaml").read_text())
    instance["run_coordinator"]["config"]["dequeue_interval_seconds"] = 1
    (home / "dagster.yaml").write_text(yaml.safe_dump(instance, sort_keys=False))
    port = _free_port()
    # the automation's build (docs/dagster.md): what the UI's launchpads show and its schedule and sensors run
    automation = tmp / "automation.yaml"
    # 12 tool chains per server (a build file; the default plans 60 whatever the size): the schedule's, the sensor's
    # and the launchpad's runs assert what the runs are and that they succeed, not their size
    (tmp / "build.yaml").write_text("chains:\n  per_server: 12\n")
    automation_build = {"build": "build.yaml", "servers": SERVERS, "examples": 30, "train": False}
    automation.write_text(json.dumps({**automation_build, "data_dir": str(data_dir)}))  # YAML, too
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "PROVE_DATA_DIR": str(data_dir),
        "PROVE_AUTOMATION": str(automation),
        "PROVE_FOLLOW_INTERVAL_S": "5",  # corpus_after_changes ticks every 5 s (an hour's default would never come)
        "PYTHONUNBUFFERED": "1",
        "DAGSTER_DISABLE_TELEMETRY": "1",
    }
    ui = DagsterUI(url=f"http://127.0.0.1:{port}", home=home, data_dir=data_dir)
    # one code server for both, as `dagster dev` runs it (with `-m` each would start its own, importing the
    # definitions twice): the webserver and the daemon find it through a workspace file
    grpc_port = _free_port()
    workspace = tmp / "workspace.yaml"
    workspace.write_text(
        yaml.safe_dump(
            {"load_from": [{"grpc_server": {"host": "127.0.0.1", "port": grpc_port, "location_name": LOCATION}}]}
        )
    )
    commands = {
        # Dagster's code server, its runs forked from a process that has imported the definitions (code_server.py)
        "dagster code server": [
            *(sys.executable, "-m", "tests.assets.code_server"),
            *("api", "grpc", "-m", LOCATION, "--location-name", LOCATION),
            *("-h", "127.0.0.1", "-p", str(grpc_port)),
        ],
        "dagster-webserver": [str(BIN / "dagster-webserver"), "-w", str(workspace), "-h", "127.0.0.1", "-p", str(port)],
        # the instance uses the QueuedRunCoordinator: the daemon is what starts queued runs
        "dagster-daemon": [str(BIN / "dagster-daemon"), "run", "-w", str(workspace)],
    }
    # each process stopped once, the last started first: when the group's last test is done (tests/conftest.py), or
    # here at the latest
    with contextlib.ExitStack() as services:
        for name, cmd in commands.items():
            ui.logs[name] = tmp / f"{name}.log"
            with open(ui.logs[name], "wb") as log:
                # a new session: stopping the group also stops the code servers and run workers it starts
                ui.procs[name] = subprocess.Popen(
                    cmd,
                    cwd=ROOT,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            services.callback(_stop, ui.procs[name])
            if name == "dagster code server":
                # the webserver loads the workspace once: the code server must be serving by then
                _wait_for_port(ui, name, grpc_port)
            if name == "dagster-webserver":
                # one at a time: both would create the sqlite storage of the fresh instance (a migration race)
                _wait_until_ready(ui)
        stop_with_unit("dagster_ui", services.close)
        yield ui


# ----------------------------------------------------------------------------- the browser (Debian's chromium)
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1600, "height": 900}


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Checked first (session scope, first argument), so a missing browser fails before the webserver starts."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests drive Debian's chromium (Playwright downloads no browser here). "
            "Install it with `sudo apt-get update && sudo apt-get install -y chromium`, or run ./test.sh, "
            "whose scripts/setup-env.sh installs it where apt-get is available.",
            pytrace=False,
        )
    return CHROMIUM


@pytest.fixture(scope="module")
def browser(chromium: Path):
    """A chromium for the file's tests (each opens its own context). Not one for the session: Playwright's sync API
    keeps an event loop running on the thread while it is open, so every later file on the worker would find a
    running loop (``asyncio.run``: "cannot be called from a running event loop")."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, dagster_ui):
    # the first visit to a fresh instance opens a "Join the Dagster community" dialog over the page; mark it seen,
    # as its Skip button does
    dagster_ui.graphql("mutation { setNuxSeen }")
    ctx = browser.new_context(viewport=VIEWPORT)
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    try:
        yield pg
    finally:
        ctx.close()


# ----------------------------------------------------------------------------- materializing through GraphQL
LAUNCH_RUN = """
mutation($p: ExecutionParams!) {
  launchRun(executionParams: $p) {
    __typename
    ... on LaunchRunSuccess { run { runId status } }
    ... on PythonError { message stack }
    ... on RunConfigValidationInvalid { errors { message reason } }
    ... on Error { message }
  }
}"""

ADD_PARTITION = """
mutation($repo: RepositorySelector!, $key: String!) {
  addDynamicPartition(repositorySelector: $repo, partitionsDefName: "servers", partitionKey: $key) {
    __typename
    ... on AddDynamicPartitionSuccess { partitionKey }
    ... on DuplicateDynamicPartitionError { partitionName }
    ... on PythonError { message }
    ... on Error { message }
  }
}"""

RUN_STATUS = (
    "\nquery($id: ID!) { runOrError(runId: $id) { __typename ... on Run { runId status tags { key value } } "
    "... on Error { message } } }"
)

RUN_FAILURES = """
query($id: ID!) {
  logsForRun(runId: $id, limit: 5000) {
    __typename
    ... on EventConnection { events { __typename ... on MessageEvent { message level stepKey } } }
  }
}"""

FINISHED = {"SUCCESS", "FAILURE", "CANCELED"}


def run_config(data_dir: Path) -> dict[str, Any]:
    # the build configuration typed, as the launchpad shows it: the fields left out keep their defaults
    return {
        "resources": {
            "settings": {"config": {"build": {"examples": 30, "servers": SERVERS, "data_dir": str(data_dir)}}},
            "training": {"config": {"train": False}},
        },
        # one run worker per run, its steps in that process: the definitions' executor (assets.automation.run_executor)
        "loggers": {"console": {"config": {"log_level": "WARNING"}}},
    }


def _selector(assets: list[str], checks: list[tuple[str, str]] = ()) -> dict[str, Any]:
    sel: dict[str, Any] = {
        "repositoryLocationName": LOCATION,
        "repositoryName": REPOSITORY,
        "pipelineName": "__ASSET_JOB",
        "assetSelection": [{"path": [a]} for a in assets],
    }
    if checks:
        sel["assetCheckSelection"] = [{"assetKey": {"path": [a]}, "name": n} for a, n in checks]
    return sel


def launch(
    ui: DagsterUI, assets: list[str], config: dict[str, Any], tags: dict[str, str], checks: list[tuple[str, str]] = ()
) -> str:
    params = {
        "selector": _selector(assets, checks),
        "runConfigData": config,
        "executionMetadata": {"tags": [{"key": k, "value": v} for k, v in tags.items()]},
    }
    res = ui.graphql(LAUNCH_RUN, {"p": params})["launchRun"]
    assert res["__typename"] == "LaunchRunSuccess", (
        f"launchRun for {assets} {tags}: {json.dumps(res, indent=1)[:3000]}\n{ui.logs_tail()}"
    )
    return res["run"]["runId"]


def run_failure_messages(ui: DagsterUI, run_id: str) -> str:
    data = ui.graphql(RUN_FAILURES, {"id": run_id})["logsForRun"]
    events = data.get("events") or []
    bad = [e for e in events if e.get("level") in ("ERROR", "CRITICAL") or "Failure" in e["__typename"]]
    return "\n".join(f"[{e['__typename']} {e.get('stepKey')}] {e.get('message', '')[:1500]}" for e in bad[-10:])


def wait_for_runs(ui: DagsterUI, run_ids: list[str], timeout: float = RUN_TIMEOUT_S) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    status: dict[str, str] = {}
    while time.monotonic() < deadline:
        for rid in run_ids:
            if status.get(rid) not in FINISHED:
                status[rid] = ui.graphql(RUN_STATUS, {"id": rid})["runOrError"]["status"]
        if all(s in FINISHED for s in status.values()):
            return status
        for name, proc in ui.procs.items():
            if proc.poll() is not None:
                raise AssertionError(
                    f"{name} exited with {proc.returncode} while runs were in flight: {status}\n{ui.logs_tail()}"
                )
        time.sleep(0.5)  # a finished run is seen within half a second (a poll is one small GraphQL query)
    raise AssertionError(
        f"runs not finished within {timeout}s: {status} (QUEUED means the daemon did not start them)\n{ui.logs_tail()}"
    )


@dataclass
class Materialized:
    per_server: dict[str, str]  # server -> run id
    cross: str
    status: dict[str, str]  # run id -> final status
    seconds: float


@pytest.fixture(scope="session")
def materialized_through_ui(dagster_ui: DagsterUI) -> Materialized:
    ui = dagster_ui
    t0 = time.monotonic()
    repo = {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY}
    for s in SERVERS:
        res = ui.graphql(ADD_PARTITION, {"repo": repo, "key": s})["addDynamicPartition"]
        assert res["__typename"] in ("AddDynamicPartitionSuccess", "DuplicateDynamicPartitionError"), (
            f"addDynamicPartition {s}: {res}"
        )
    config = run_config(ui.data_dir)
    per_server = {
        s: launch(ui, PER_SERVER, config, {"dagster/partition": s, "prove/build": "ui-test"}) for s in SERVERS
    }
    status = wait_for_runs(ui, list(per_server.values()))
    cross = ""
    if all(status[r] == "SUCCESS" for r in per_server.values()):
        cross = launch(ui, CROSS, config, {"prove/build": "ui-test"}, checks=[("corpus", c) for c in CHECKS])
        status.update(wait_for_runs(ui, [cross]))
    return Materialized(per_server=per_server, cross=cross, status=status, seconds=time.monotonic() - t0)
