#!/usr/bin/env bash
# The test suite: environment (as run.sh), then pytest.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup-env.sh
exec .venv/bin/python -m pytest "$@"
