#!/usr/bin/env bash
# Create .venv (if missing or stale) and install prove with its train and dev extras.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# The browser tests (tests/assets/test_browser.py) drive Debian's chromium; Playwright downloads no browser.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
      echo "setup-env: /usr/bin/chromium is missing and installing it needs root: run 'sudo apt-get install -y chromium'" >&2
      exit 1
    fi
  fi
  echo "setup-env: installing chromium (apt-get) for the browser tests" >&2
  log=$(mktemp)
  if ! { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
         $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "setup-env: could not install chromium with apt-get (output above); install it by hand: apt-get install -y chromium" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
fi
# the MCP project's four reference servers at pinned versions (npm and PyPI) with their seed state, in .published/
# (tests/pipeline/test_published_servers.py, examples/published-servers.yaml); quick when already there
PYTHON="$PY" scripts/install-published.sh
stamp=.venv/.prove-installed
want=$(cat pyproject.toml | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# pip's own output (warnings included) goes to a log; a failure shows its last lines
install_log=.venv/install.log
echo "setup-env: installing prove and its dependencies into .venv (a few minutes the first time; log: $install_log)" >&2
if ! {
  .venv/bin/python -m pip install -q --upgrade pip &&
  # torch first, pinned: the local CPU build (a looser pin would pull CUDA wheels)
  .venv/bin/python -m pip install -q "torch==2.13.0" &&
  .venv/bin/python -m pip install -q -e ".[train,dev]"
} >"$install_log" 2>&1; then
  tail -n 30 "$install_log" >&2
  echo "setup-env: the install failed (last lines above; the whole output is in $install_log)" >&2
  exit 1
fi
echo "$want" > "$stamp"
