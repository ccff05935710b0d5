#!/usr/bin/env bash
# `npm run lint`: eslint over the tree and the prettier format check, side by side; either one
# failing fails the lint (`npx prettier --write .` formats the tree). Both keep a cache under
# node_modules/.cache/, so a second run only reads the changed files.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x node_modules/.bin/eslint ] || [ ! -x node_modules/.bin/prettier ]; then
  echo "lint: eslint and prettier are dev dependencies: install them with bash scripts/setup.sh --full (npm test does)" >&2
  exit 2
fi
started=$SECONDS
echo "lint: eslint and prettier check..." >&2
differ=$(mktemp)
trap 'rm -f "$differ"' EXIT
node_modules/.bin/prettier --cache --list-different . > "$differ" &
prettier_pid=$!
eslint_rc=0
node_modules/.bin/eslint --cache --cache-location node_modules/.cache/eslint/ . || eslint_rc=$?
# prettier --list-different exits 1 when a file differs, 2 when it could not check.
prettier_rc=0
wait "$prettier_pid" || prettier_rc=$?
[ "$eslint_rc" = 0 ] || { echo "lint: eslint found errors" >&2; exit "$eslint_rc"; }
[ "$prettier_rc" -le 1 ] || { echo "lint: prettier failed (exit $prettier_rc)" >&2; exit "$prettier_rc"; }
if [ -s "$differ" ]; then
  cat "$differ" >&2
  echo "lint: $(wc -l < "$differ") files differ from the prettier format: run npx prettier --write . (or on those files)" >&2
  exit 1
fi
echo "lint: done in $((SECONDS - started)) s" >&2
