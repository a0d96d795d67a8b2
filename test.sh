#!/usr/bin/env bash
# The test suite: environment (as run.sh), then pytest, one worker per core (at most 4; tests/conftest.py keeps
# each test file, and the two files sharing the Dagster webserver, on one worker). `./test.sh -n 0` runs it in one process.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup-env.sh
exec .venv/bin/python -m pytest -n auto --maxprocesses 4 --dist loadfile "$@"
