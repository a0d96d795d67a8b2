#!/usr/bin/env bash
# GPU smoke run of the training path, offline (see scripts/gpu_smoke.py and docs/training.md).
# On a machine without this project's packages, put their wheels in .whl/ first (docs/training.md lists them);
# they are installed into /tmp/prove-site, nothing else is touched.
#   scripts/gpu-smoke.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if compgen -G ".whl/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/prove-site .whl/*.whl
  export PYTHONPATH="/tmp/prove-site:$PWD"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 TRL_EXPERIMENTAL_SILENCE=1
exec "$PY" scripts/gpu_smoke.py --out "${1:-data/runs/gpu-smoke}"
