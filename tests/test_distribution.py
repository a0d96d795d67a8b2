"""The suite's spread over xdist workers (tests/conftest.py) keeps what must share a worker together."""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import FIRST, SHARED_WORKER, unit_done, unit_order, work_unit

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("fixture", ["dagster_ui", "celery_cluster"])
def test_every_file_that_uses_a_shared_groups_fixture_is_in_its_group(fixture):
    """Their services stop once the group's last test is done: a file outside the group would find them stopped."""
    takes_it = re.compile(rf"^def \w+\([^)]*\b{fixture}\b", re.M)  # a test or fixture with the fixture as a parameter
    users = sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py") if takes_it.search(p.read_text())
    )
    assert users and users == sorted(f for f, g in SHARED_WORKER.items() if g == fixture)
    assert {work_unit(f"{f}::test_x") for f in users} == {fixture}


def test_any_other_test_is_grouped_with_its_own_file_only():
    a, b = "tests/pipeline/test_graph.py", "tests/pipeline/test_chains.py"
    assert work_unit(f"{a}::test_one") == work_unit(f"{a}::test_two[case]") == a != work_unit(f"{b}::test_one")


def test_torch_in_a_worker_runs_on_the_threads_the_conftest_set_before_it_loaded():
    import torch

    # tests/conftest.py set it (unless the caller did) before any test module imported torch
    assert torch.get_num_threads() == int(os.environ["OMP_NUM_THREADS"])


def test_the_longest_units_start_first_and_the_rest_keep_xdists_order():
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py"))
    units = list(dict.fromkeys(work_unit(f"{f}::test_x") for f in files))
    assert set(FIRST) <= set(units), set(FIRST) - set(units)  # each names a file or a group that exists
    rest = [u for u in reversed(units) if u not in FIRST]
    assert unit_order([*rest[:3], *reversed(FIRST), *rest[3:]]) == [*FIRST, *rest]


def _items(nodeids: list[str], **config) -> list[SimpleNamespace]:
    """Stand-ins for a run's collected items: what :func:`unit_done` reads of them."""
    cfg = SimpleNamespace(**({"workerinput": config} if config else {}))  # an xdist worker's input, or no worker
    session = SimpleNamespace(items=[])
    session.items = [SimpleNamespace(nodeid=n, config=cfg, session=session) for n in nodeids]
    return session.items


def test_a_shared_groups_services_stop_after_its_last_test_even_where_its_files_are_apart():
    ui = "tests/assets/test_browser.py::test_a", "tests/assets/test_webserver_automation.py::test_b"
    other = "tests/assets/test_cli_build.py::test_c"
    one_process = _items([ui[0], other, ui[1]])  # -n 0: the files in their order, another file between the group's
    assert not unit_done(one_process[0], one_process[1])  # a test of the group is still to come
    assert unit_done(one_process[2], None)
    worker = _items([ui[0], ui[1], other], dist="loadfile")  # an xdist worker is sent the group whole
    assert not unit_done(worker[0], worker[1]) and unit_done(worker[1], worker[2])
    elsewhere = _items([ui[0], other], dist="load")  # another --dist: more of the group may still be sent
    assert not unit_done(elsewhere[0], elsewhere[1])
