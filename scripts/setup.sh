#!/usr/bin/env bash
# Installs the npm dependencies when they are missing or stale and builds dist/.
# Used by `npm start` and `npm test`; safe to run again (it only does what is needed).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi

# tsc is incremental: a second build with no change takes about a second.
node_modules/.bin/tsc -p tsconfig.json
