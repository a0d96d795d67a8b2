#!/usr/bin/env bash
# The main job: environment, corpus on built-in servers (offline defaults), tiny policy, scored on fixed suites.
# With no arguments, the demo: 1,500 examples on three built-in servers (banking, retail_chain, trading), enough
# for the tiny policy to learn on this machine in a few minutes (docs/training.md); any arguments go to
# `prove build` as they are (e.g. ./run.sh --examples 500 --servers banking,crm).
set -euo pipefail
cd "$(dirname "$0")"
unset PYTHONDONTWRITEBYTECODE  # each module compiled once, by the first process that imports it (as test.sh)
bash scripts/setup-env.sh
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/data/dagster_home}"
if [ "$#" -eq 0 ]; then
  set -- --examples 1500 --servers banking,retail_chain,trading
fi
exec .venv/bin/prove build "$@"
