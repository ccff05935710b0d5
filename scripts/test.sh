#!/usr/bin/env bash
# `npm test`: set up what is missing (every npm package, dev and test ones included; the build;
# the servers and the browser the integration tests talk to), lint (eslint, prettier check), type-check the
# tests, then run every test with node:test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --full
bash scripts/ensure-services.sh
bash scripts/lint.sh
node_modules/.bin/tsc -p tsconfig.test.json
node_modules/.bin/tsc -p console/tsconfig.json
exec node scripts/run-tests.mjs "$@"
