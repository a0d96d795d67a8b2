#!/usr/bin/env bash
# Install the MCP project's four reference servers, mcp-server-duckdb (a SQL server of another dialect, one
# statement tool) and mcp-postgres-server (PostgreSQL: query/execute statement tools, information_schema listings),
# at pinned versions into .published/ (ignored), as a user would: the two npm packages with npm, each PyPI server
# into a venv of its own (mcp-server-sqlite, mcp-server-duckdb and mcp-postgres-server need mcp<2, prove uses mcp 2).
# Quick when already there (a stamp file holds the pins). examples/published-servers.yaml runs them from here; docs/third-party-servers.md has the recipe per server.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
dest=${PROVE_PUBLISHED_DIR:-.published}
NPM_PACKAGES=("@modelcontextprotocol/server-filesystem@2026.8.31" "@modelcontextprotocol/server-memory@2026.8.31")
GIT_PIN="mcp-server-git==2026.10.19"
SQLITE_PIN="mcp-server-sqlite==2025.4.25 mcp<2"   # it asks for mcp>=1.0 but breaks on mcp 2 (its low-level Server API)
DUCKDB_PIN="mcp-server-duckdb==1.1.0 duckdb==2.0.1 mcp<2"   # the same low-level Server API; duckdb pinned: the seed's format
# mcp.server.fastmcp, gone in mcp 2; small: psycopg (3, on the system's libpq), psycopg-pool, pydantic-settings, loguru
POSTGRES_PIN="mcp-postgres-server==0.1.2 mcp<2"
want=$(printf '%s\n' "${NPM_PACKAGES[@]}" "$GIT_PIN" "$SQLITE_PIN" "$DUCKDB_PIN" "$POSTGRES_PIN" | sha256sum | cut -c1-16)
stamp="$dest/.installed"
# the seed state (.published/seeds/<server>), rebuilt when its sources change
seeds_want=$(cat scripts/published_seeds.py $(find examples/published/seeds -type f | LC_ALL=C sort) | sha256sum | cut -c1-16)
seeds_stamp="$dest/.seeded"
seed() {
  if [ -f "$seeds_stamp" ] && [ "$(cat "$seeds_stamp")" = "$seeds_want" ]; then
    return 0
  fi
  "$PY" scripts/published_seeds.py "$dest/seeds" && echo "$seeds_want" >"$seeds_stamp"
}
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  seed
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-published: npm is missing; the filesystem and memory servers are npm packages: install Node.js 18 or later (it brings npm), e.g. 'apt-get install -y nodejs npm', then run this again" >&2
  exit 1
fi
mkdir -p "$dest"
log="$dest/install.log"
: >"$log"
echo "install-published: installing the six published MCP servers into $dest (log: $log)" >&2
fail() {
  tail -n 20 "$log" >&2
  echo "install-published: $1 failed (last lines above; the whole output is in $log)" >&2
  exit 1
}
# uv installs (the one in prove's .venv, which scripts/setup-env.sh installs first): seconds where pip takes half a
# minute per server; pip (bootstrapped into the venv) where uv is not there or fails
UV=${PROVE_UV:-.venv/bin/uv}
pip_install() {
  local py=$1
  shift
  if [ -x "$UV" ] && "$UV" pip install -q --python "$py" "$@"; then
    return 0
  fi
  "$py" -m pip --version >/dev/null 2>&1 || "$py" -m ensurepip || return 1
  "$py" -m pip install -q "$@"
}
[ -f "$dest/node/package.json" ] || { mkdir -p "$dest/node" && echo '{"private": true}' >"$dest/node/package.json"; }
# npm in the background while uv installs the PyPI servers (3 s of a fresh clone's set-up); its output joins the log
npm_log="$dest/npm.log"
npm install --prefix "$dest/node" --no-audit --no-fund --save-exact "${NPM_PACKAGES[@]}" >"$npm_log" 2>&1 &
npm_pid=$!
npm_then_fail() { wait "$npm_pid" || true; fail "$1"; }  # no npm left running behind a failure
for spec in "git:$GIT_PIN" "sqlite:$SQLITE_PIN" "duckdb:$DUCKDB_PIN" "postgres:$POSTGRES_PIN"; do
  name=${spec%%:*}
  pin=${spec#*:}
  venv="$dest/$name-venv"
  [ -x "$venv/bin/python" ] || "$PY" -m venv --without-pip "$venv" >>"$log" 2>&1 ||
    npm_then_fail "python -m venv $venv"
  # shellcheck disable=SC2086 # a pin may hold several requirements
  pip_install "$venv/bin/python" $pin >>"$log" 2>&1 || npm_then_fail "installing $pin"
done
npm_ok=0
wait "$npm_pid" || npm_ok=$?
cat "$npm_log" >>"$log"
rm -f "$npm_log"
[ "$npm_ok" = 0 ] || fail "npm install ${NPM_PACKAGES[*]}"
echo "$want" >"$stamp"
seed
