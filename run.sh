#!/usr/bin/env bash
# The main job: environment, corpus on the built-in servers (offline defaults), tiny policy.
# Extra arguments go to `prove build` (e.g. ./run.sh --examples 500 --servers banking,crm).
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup-env.sh
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/data/dagster_home}"
exec .venv/bin/prove build "$@"
