#!/usr/bin/env bash
# Create .venv (if missing or stale) and install prove with its train, dev and distributed extras.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# Debian's packages the tests drive, installed with apt-get when missing: chromium for the browser tests
# (tests/assets/test_browser.py; Playwright downloads no browser), PostgreSQL and redis-server for the distributed
# tests (tests/services.py starts a throwaway cluster and server on loopback, and stops them).
apt_missing=()
[ -x /usr/bin/chromium ] || apt_missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || apt_missing+=(redis-server)
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt_missing+=(postgresql)
fi
if [ "${#apt_missing[@]}" -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
      echo "setup-env: ${apt_missing[*]} missing and installing needs root: run 'sudo apt-get install -y ${apt_missing[*]}'" >&2
      exit 1
    fi
  fi
  echo "setup-env: installing ${apt_missing[*]} (apt-get) for the tests" >&2
  log=$(mktemp)
  if ! { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
         $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_missing[@]}"; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "setup-env: could not install ${apt_missing[*]} with apt-get (output above); install by hand: apt-get install -y ${apt_missing[*]}" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
fi
stamp=.venv/.prove-installed
# BFCL v4 (the bfcl-multi-turn suite) without its requirements: they pin numpy/networkx and pull many SDKs;
# the pin is hashed with pyproject.toml so changing it reruns the install
bfcl_pin="bfcl-eval==2026.3.23"
# uv installs the ~200 wheels in seconds where pip takes minutes; pip where uv cannot (its log says why)
uv_pin="uv==0.13.9"
want=$( (cat pyproject.toml; echo "$bfcl_pin $uv_pin") | sha256sum | cut -c1-16)
# No byte-compiling ahead: ./test.sh and ./run.sh let their processes write bytecode (they unset
# PYTHONDONTWRITEBYTECODE, which this project's machines set), so each module the suite or the build imports is
# compiled once, by the first process that imports it. Compiling all 21,000 files of the venv ahead took 18-40 s
# of a fresh clone's set-up, most of it for modules no process imports.
local_wheels() {
  # the wheel folders pip is configured with (PIP_FIND_LINKS, else pip's config), one per line
  local links
  links=${PIP_FIND_LINKS:-$(.venv/bin/python -m pip config get global.find-links 2>/dev/null || true)}
  for l in $links; do [ -d "$l" ] && echo "$l"; done
  return 0
}
install_torch() {
  # torch pinned, from the machine's own wheel folder (a local CPU build; a looser pin, or an index, would pull
  # CUDA wheels): uv installs it from that folder alone (--no-index; its dependencies come with prove's below),
  # in seconds where pip unpacks its 190 MB again each time; pip, which reads its own config, where there is no
  # such folder or uv fails
  local args=()
  for l in $(local_wheels); do args+=(--find-links "$l"); done
  if [ "${#args[@]}" -gt 0 ] &&
     .venv/bin/uv pip install -q --python .venv/bin/python --no-index --no-deps "${args[@]}" "torch==2.13.0"; then
    return 0
  fi
  .venv/bin/python -m pip install -q "torch==2.13.0"
}
install_prove() {
  # uv is there already where make_venv put it in
  { [ -x .venv/bin/uv ] && [ "$(.venv/bin/uv --version 2>/dev/null | cut -d' ' -f2)" = "${uv_pin#uv==}" ]; } ||
    .venv/bin/python -m pip install -q "$uv_pin" || return 1
  install_torch || return 1
  # uv keeps the torch installed above (it satisfies the pin) and adds its dependencies
  if .venv/bin/uv pip install -q --python .venv/bin/python -e ".[train,dev,distributed]" &&
     .venv/bin/uv pip install -q --python .venv/bin/python --no-deps "$bfcl_pin"; then
    return 0
  fi
  echo "setup-env: uv could not install (above); installing with pip" >&2
  .venv/bin/python -m pip install -q --upgrade pip &&
  .venv/bin/python -m pip install -q -e ".[train,dev,distributed]" &&
  .venv/bin/python -m pip install -q --no-deps "$bfcl_pin"
}
make_venv() {
  # a venv without pip, uv put in by the system Python's pip, then pip put in by uv: 2 s, where `python -m venv`
  # alone takes 3 s (its ensurepip) before pip installs uv; `python -m venv` as before where the system Python has no
  # pip, or a pip without --python (pip < 22.3)
  if "$PY" -m venv --without-pip .venv &&
     "$PY" -m pip --python .venv/bin/python install -q "$uv_pin" >/dev/null 2>&1 &&
     .venv/bin/uv pip install -q --python .venv/bin/python pip >/dev/null 2>&1; then
    return 0
  fi
  rm -rf .venv
  "$PY" -m venv .venv
}
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  [ -x .venv/bin/python ] || make_venv
  # the installers' own output (warnings included) goes to a log; a failure shows its last lines
  install_log=.venv/install.log
  echo "setup-env: installing prove and its dependencies into .venv (a minute or two the first time; log: $install_log)" >&2
  if ! install_prove >"$install_log" 2>&1; then
    tail -n 30 "$install_log" >&2
    echo "setup-env: the install failed (last lines above; the whole output is in $install_log)" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
fi
# prove's own packages, each time (quick: only what changed since is compiled again), for processes started
# outside ./test.sh and ./run.sh with PYTHONDONTWRITEBYTECODE set
.venv/bin/python -m compileall -q -j 0 pipeline assets servers training tests bench >/dev/null 2>&1 || true
# the MCP project's four reference servers, mcp-server-duckdb and mcp-postgres-server at pinned versions (npm and PyPI) with their seed state, in .published/
# (tests/pipeline/test_published_servers.py, examples/published-servers.yaml), installed with .venv's uv; quick when
# already there
PYTHON="$PY" scripts/install-published.sh
