#!/usr/bin/env bash
# The test suite: environment (as run.sh), then pytest on one worker more than the machine has cores (at most 4):
# many tests wait on services, retries and subprocesses, and the extra worker runs another file meanwhile (on this
# 2-core machine 456 s against 494 s with one per core; two or three extra did not help: 326 s and 351 s against
# 318 s). tests/conftest.py keeps each test file, and the files sharing a session service, on one worker, and starts
# the longest first. `./test.sh -n 0` runs it in one process.
set -euo pipefail
cd "$(dirname "$0")"
# each module is compiled once, by the first process that imports it (this project's machines set the variable, and
# then each of the suite's ~2,000 processes compiled what it imported from source again; scripts/setup-env.sh)
unset PYTHONDONTWRITEBYTECODE
bash scripts/setup-env.sh
workers=$(( $(.venv/bin/python -c 'import os; print(len(os.sched_getaffinity(0)))') + 1 ))
exec .venv/bin/python -m pytest -n "$(( workers < 4 ? workers : 4 ))" --dist loadfile "$@"
