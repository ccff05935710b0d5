#!/usr/bin/env bash
# `npm run lint`: eslint over the tree (fails on any error), then the prettier format check.
# The format check is advisory (it counts the files that differ and does not fail) until the
# tree has been formatted once; SVC_FORMAT_STRICT=1 makes it fail, like `npm run format:check`.
# Both keep a cache under node_modules/.cache/, so a second run only reads the changed files.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
echo "lint: eslint..." >&2
node_modules/.bin/eslint --cache --cache-location node_modules/.cache/eslint/ .
echo "lint: prettier check..." >&2
if [ "${SVC_FORMAT_STRICT:-0}" = 1 ]; then
  node_modules/.bin/prettier --cache --check .
else
  differ=$(node_modules/.bin/prettier --cache --list-different . || true)
  if [ -n "$differ" ]; then
    echo "lint: $(printf '%s\n' "$differ" | wc -l) files differ from the prettier format (advisory: npm run format:check lists them)" >&2
  fi
fi
echo "lint: done in $((SECONDS - started)) s" >&2
