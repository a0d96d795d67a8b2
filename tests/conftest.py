"""How ``./test.sh`` spreads the suite over pytest-xdist workers (``-n auto --dist loadfile``).

Each test file goes to one worker, so a file's module-scoped fixtures are built once; the files that share
the session-scoped Dagster webserver (``tests/assets/conftest.py``) go to the same worker, so it starts once.
(xdist's own ``loadgroup`` cannot say that here: it tags node ids, which pytest 9 no longer lets it do.)
Without xdist, or with another ``--dist``, this changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

# files whose tests must run on one worker: a session fixture too slow to start twice
SHARED_WORKER = {
    "tests/assets/test_browser.py": "dagster_ui",
    "tests/assets/test_webserver.py": "dagster_ui",
    "tests/assets/test_webserver_automation.py": "dagster_ui",  # after the two above: it adds runs and versions
}


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to: its file, or the shared group its file is in."""
    path = nodeid.split("::", 1)[0]
    return SHARED_WORKER.get(path, path)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ByFile(config, log)
