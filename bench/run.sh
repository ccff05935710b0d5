#!/usr/bin/env bash
# `npm run bench`: installs the bench's own dependencies when missing (peer engines stay out of
# the main package), builds dist/ through the project's setup script, then runs the suites.
# Usage: bash bench/run.sh [suite ...]   (default: engine). Results go to bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f bench/node_modules/.package-lock.json ] || [ bench/package-lock.json -nt bench/node_modules/.package-lock.json ]; then
  echo "bench: installing bench dependencies (npm ci in bench/)" >&2
  (cd bench && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

bash scripts/setup.sh

suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then suites=(engine); fi
for suite in "${suites[@]}"; do
  node --import tsx "bench/${suite}.ts"
done
