"""How ``./test.sh`` spreads the suite over pytest-xdist workers (``-n <cores + 1, at most 4> --dist loadfile``).

Each test file goes to one worker, so a file's module-scoped fixtures are built once; the files that share
the session-scoped Dagster webserver (``tests/assets/conftest.py``) go to the same worker, so it starts once.
(xdist's own ``loadgroup`` cannot say that here: it tags node ids, which pytest 9 no longer lets it do.)
Without xdist, or with another ``--dist``, this changes nothing.

Each worker (and every process a test starts: a build, a Dagster run worker, a training launch) runs torch on one
thread (``OMP_NUM_THREADS=1`` unless set already): ``./test.sh`` starts a worker per core and one more, and
torch's default of a thread per core makes the workers' threads wait on each other's cores. Under that contention
one in-process training took 3x the CPU time and 5-10x the wall time of the same training on one thread.

Also the fixtures of the throwaway services on loopback (``tests/services.py``): a session's PostgreSQL cluster, and
per test a Redis server, two dagster-celery workers on it, and a mounted JuiceFS volume."""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.services import (
    CeleryCluster,
    CeleryWorker,
    Postgres,
    celery_workers,
    juicefs_mount,
    juicefs_volume,
    postgres,
    redis_process,
    redis_server,
)
from tests.thirdparty import prefork

# before any test module imports torch (none of the imports above does): torch reads it once, when it loads
os.environ.setdefault("OMP_NUM_THREADS", "1")

# The cyclic garbage collector of a worker runs after 50,000 new objects rather than Python's 700. A worker holds the
# whole suite's imports (torch, Dagster, transformers, mcp) and the tests make objects by the million: with the
# default, three files run in one process (test_queries, test_lint, test_conformance) spent 5.2 of their ~50 CPU-s in
# 5,500 collections, 13 of them full ones of 0.27 s each; with this, 2.4 s in 41 (and 50 MB more at the peak).
gc.set_threshold(50_000, 20, 20)


def pytest_configure(config: pytest.Config) -> None:
    """One graph cache for the whole run (``PROVE_GRAPH_CACHE_DIR``, unless set already): a build of a server whose
    tools, settings and probed state an earlier build of the run met reads that graph instead of discovering it
    again (the key, :func:`pipeline.discovery.graph.cached_discover`, holds all of them, so a hit is the graph a
    discovery would find). The xdist workers inherit it from the controller, which makes it before they start and
    removes it at the end. The tests of discovery itself call it directly or name a cache folder of their own."""
    _start_prefork(config)
    if "PROVE_GRAPH_CACHE_DIR" in os.environ or hasattr(config, "workerinput"):
        return
    folder = tempfile.mkdtemp(prefix="prove-test-graphs-")
    os.environ["PROVE_GRAPH_CACHE_DIR"] = folder
    config.add_cleanup(lambda: (os.environ.pop("PROVE_GRAPH_CACHE_DIR", None), shutil.rmtree(folder, True)))


def _start_prefork(config: pytest.Config) -> None:
    """The fixture servers' forking process for the whole run (tests/thirdparty/prefork.py): each fixture server a
    test or a build starts is a fork of a process that has imported mcp already (0.6 CPU-s saved a start, ~300 starts
    a run). Its socket is named in ``PROVE_FIXTURE_PREFORK`` for every process of the run; it stops at the end."""
    if "PROVE_FIXTURE_PREFORK" in os.environ or hasattr(config, "workerinput"):
        return
    folder = tempfile.mkdtemp(prefix="prove-test-prefork-")
    sock = os.path.join(folder, "socket")
    proc = prefork.start(sock)
    if proc is None:  # the fixtures then serve in their own processes, as outside the suite
        shutil.rmtree(folder, True)
        return
    os.environ["PROVE_FIXTURE_PREFORK"] = sock

    def stop() -> None:
        os.environ.pop("PROVE_FIXTURE_PREFORK", None)
        prefork.stop(proc)
        shutil.rmtree(folder, True)

    config.add_cleanup(stop)


# files whose tests must run on one worker: a session fixture too slow to start twice
SHARED_WORKER = {
    "tests/assets/test_browser.py": "dagster_ui",
    "tests/assets/test_webserver.py": "dagster_ui",
    "tests/assets/test_webserver_automation.py": "dagster_ui",  # after the two above: it adds runs and versions
    # the Redis broker and the two Celery workers of the session (celery_cluster) start once for both
    "tests/assets/test_distributed_build.py": "celery_cluster",
    "tests/assets/test_cluster_faults.py": "celery_cluster",
}


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to: its file, or the shared group its file is in."""
    path = nodeid.split("::", 1)[0]
    return SHARED_WORKER.get(path, path)


# The units that take longest start first, so that none of them is the last unit left running on one worker while the
# others have nothing to do (xdist's own order, most tests first, started the two groups above half-way through the
# run, and test_cli_build in the last minute). The Celery group mostly waits (on the faults it causes, 250 s of one
# worker), and so does the UI group at times: the units that keep the cores busy come next (builds and trainings, in
# subprocesses or in process), and the ones that mostly wait too (test_thirdparty on its servers' starts, the teacher's
# latency in test_teacher_concurrency) only once the Celery group is done, apart from each other. With those two right
# after the trainings, a run's timeline (each test's start and end on its worker, the machine's CPU use each second)
# had them waiting at the same time as the Celery group's last file, 210-240 s into the run, the two cores up to 65%
# idle.
FIRST = (
    "celery_cluster",
    "dagster_ui",
    "tests/assets/test_interrupt.py",
    "tests/assets/test_cli_build.py",
    "tests/servers/test_conformance.py",
    "tests/assets/test_dev_stop.py",
    "tests/training/test_grpo.py",
    "tests/assets/test_materialize.py",
    "tests/training/test_distributed_training.py",
    "tests/assets/test_servers_init.py",
    "tests/servers/test_hostile_inputs.py",
    "tests/assets/test_versioning_and_automation.py",
    "tests/pipeline/test_lint.py",
    "tests/pipeline/test_queries.py",
    "tests/pipeline/test_thirdparty.py",
    "tests/pipeline/test_env_sessions.py",
    "tests/training/test_eval_suites.py",
    "tests/pipeline/test_teacher_concurrency.py",
)


def unit_order(units: list[str]) -> list[str]:
    """``FIRST`` in its order, then the other units in the order given (xdist's: most tests first)."""
    return sorted(units, key=lambda u: FIRST.index(u) if u in FIRST else len(FIRST))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    node.workerinput["dist"] = node.config.getvalue("dist")  # for unit_done, in the worker


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None
    from collections import OrderedDict

    from xdist.scheduler import LoadScopeScheduling

    class ByFile(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the first assignment: the queue holds every unit now
                self.workqueue = OrderedDict((u, self.workqueue[u]) for u in unit_order(list(self.workqueue)))
                self.ordered = True
            super()._assign_work_unit(node)

    return ByFile(config, log)


# A test that leaves a Dagster instance "entered" (``with instance`` never exited, or exited out of order) leaves
# Dagster's current state storage pointing at that instance; once the instance is collected, every later
# definitions load in the same worker fails with "Attempted to resolve undefined DagsterInstance weakref"
# (seen once in CI, order-dependent, not reproduced here: a context Dagster enters an instance for, such as a
# ``build_*_context`` without ``with``, collected after an outer instance exited, restores that outer one's storage).
# Before and after each test, a storage whose instance is gone is cleared, and where it was found is named at the
# end of the run so the test can be fixed.
_LEFT_DEAD_STORAGE: list[str] = []


def _clear_dead_storage(where: str) -> None:
    from dagster._core.storage.defs_state.base import _current_storage  # private: tests only

    storage = _current_storage.get()
    ref = getattr(storage, "_instance_weakref", None)
    if storage is not None and (ref is None or ref() is None):
        _current_storage.set(None)
        _LEFT_DEAD_STORAGE.append(where)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    _clear_dead_storage(f"before {item.nodeid}")  # left by a fixture's teardown or a late garbage collection
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    yield
    _clear_dead_storage(f"after {item.nodeid}")
    unit = work_unit(item.nodeid)
    if unit in _UNIT_STOPS and unit_done(item, nextitem):
        for stop in reversed(_UNIT_STOPS.pop(unit)):
            stop()


# Services that a shared group's session fixture starts (the group's files only use them: the Dagster webserver,
# daemon and code server of ``dagster_ui``, the Redis broker and Celery workers of ``celery_cluster``) are stopped
# once the group's last test is done, not at the end of the run: idle, the UI's three processes took 5.6 CPU-s a
# minute (its daemon ticking the automation's sensors and schedules), and in a whole run they idled the last 3-4
# minutes of it. The fixture's own teardown then finds them stopped.
_UNIT_STOPS: dict[str, list[Callable[[], None]]] = {}


def stop_with_unit(unit: str, stop: Callable[[], None]) -> None:
    """Call ``stop`` once the last test of ``unit`` (a ``SHARED_WORKER`` group) is done."""
    _UNIT_STOPS.setdefault(unit, []).append(stop)


def unit_done(item: pytest.Item, nextitem: pytest.Item | None) -> bool:
    """Whether no test of ``item``'s unit runs after it in this process. An xdist worker of ``--dist loadfile`` is
    sent each unit whole (``ByFile`` below), so the unit is done when the next test is another unit's; under another
    ``--dist`` more of it may still come. In one process, the rest of the run's tests are known."""
    unit = work_unit(item.nodeid)
    if nextitem is not None and work_unit(nextitem.nodeid) == unit:
        return False
    if hasattr(item.config, "workerinput"):  # a worker's own --dist is "no": the controller's comes with its input
        return item.config.workerinput.get("dist") == "loadfile"
    rest = item.session.items[item.session.items.index(item) + 1 :]
    return all(work_unit(i.nodeid) != unit for i in rest)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workeroutput"):  # an xdist worker: hand the names to the controller
        session.config.workeroutput["left_dead_storage"] = list(_LEFT_DEAD_STORAGE)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _LEFT_DEAD_STORAGE.extend(getattr(node, "workeroutput", {}).get("left_dead_storage", []))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for nodeid in _LEFT_DEAD_STORAGE:
        terminalreporter.write_line(f"left Dagster's state storage on a collected instance: {nodeid}", yellow=True)


# ---- throwaway services on loopback (tests/services.py), started and stopped by the tests that use them ----


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Postgres]:
    """A PostgreSQL cluster for the session; each test makes its own database (``pg_cluster.database(name)``)."""
    with postgres() as pg:
        yield pg


@pytest.fixture(scope="session")
def celery_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CeleryCluster]:
    """A Redis broker and two dagster-celery workers for the session (the distributed build's tests and the fault
    tests share them, and they stop once those are done: ``stop_with_unit``). Each worker runs its steps in a pool
    process (``--pool prefork --concurrency 1``), so a step whose process is killed is reported lost by its worker,
    as docs/scale-out.md sets workers up. The cluster's ``redis`` can be stopped and started again on the same port
    (a broker lost and back)."""
    tmp = tmp_path_factory.mktemp("celery_cluster")
    with contextlib.ExitStack() as services:
        redis = services.enter_context(redis_process(tmp / "redis"))
        workers = services.enter_context(celery_workers(tmp / "celery", redis.url, 2, pool="prefork"))
        stop_with_unit("celery_cluster", services.close)  # stopped once the group is done (above)
        yield CeleryCluster(redis.url, workers, redis)


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A new redis-server for the test (an empty broker: no task of another test is waiting in it)."""
    with redis_server(tmp_path / "redis") as url:
        yield url


@pytest.fixture
def celery_pair(tmp_path: Path, redis_url: str) -> Iterator[list[CeleryWorker]]:
    """Two dagster-celery workers on the test's Redis (broker and result backend), each in an empty folder."""
    with celery_workers(tmp_path / "celery", redis_url, count=2) as workers:
        yield workers


@pytest.fixture
def juicefs_root(tmp_path: Path) -> Iterator[Path]:
    """A new JuiceFS volume mounted (FUSE) for the test: a shared POSIX folder."""
    with juicefs_volume(tmp_path / "juicefs") as volume, juicefs_mount(volume) as mnt:
        yield mnt
