"""The UI tests' code server: ``dagster api grpc``, its runs forked from a process that has imported the definitions.

Dagster's gRPC code server starts each run it is asked for in a new process with ``multiprocessing``'s "spawn" (a
hard-coded context): the run imports Dagster's CLI and the definitions again, and the UI tests start a dozen. Run as
``python -m tests.assets.code_server api grpc ...`` (the arguments of ``dagster``), the same code server starts them
from Python's forkserver preloaded with ``assets.definitions``, as ``prove build --parallel`` starts its workers
(``assets/orchestrate.py``): the UI files took 130.5 CPU-s against 155.6, alone (bench/OPTIMISATIONS.md, sixth
pass). Everything after the start is Dagster's own: the run worker, its events, its termination event, the instance
it writes.

What this leaves out, the spawn start itself, is what ``prove ui`` users run: ``tests/assets/test_dev_stop.py``
starts ``prove ui`` (``dagster dev``) and a run in it, spawned as Dagster does, twice."""

from __future__ import annotations

import multiprocessing
import sys

# the module a run needs first, imported once by the forkserver (a run child forked from it finds it imported)
PRELOAD = ["assets.definitions"]


def main() -> int:
    from dagster._cli import main as dagster_main  # the `dagster` command's own entry point
    from dagster._grpc import server  # private: tests only (the context is an attribute Dagster sets itself)

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    init = server.DagsterApiServer.__init__

    def forking_init(self, *args, **kwargs) -> None:
        init(self, *args, **kwargs)
        self._mp_ctx = ctx

    server.DagsterApiServer.__init__ = forking_init
    sys.argv[0] = "dagster"
    return dagster_main()


if __name__ == "__main__":  # not when a run child imports this module as its __mp_main__
    sys.exit(main())
