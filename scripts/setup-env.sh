#!/usr/bin/env bash
# Create .venv (if missing or stale) and install prove with its train and dev extras.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
stamp=.venv/.prove-installed
want=$(cat pyproject.toml | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
# torch first, pinned: the local CPU build (a looser pin would pull CUDA wheels)
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[train,dev]"
echo "$want" > "$stamp"
