#!/usr/bin/env bash
# Installs the npm dependencies when they are missing or stale, and builds dist/.
#
#   bash scripts/setup.sh          what the server needs (`npm start`, `npm run build`):
#                                  `npm ci --omit=dev`, no native build
#   bash scripts/setup.sh --full   everything, dev dependencies included (`npm test`, bench):
#                                  `npm ci` (test databases' drivers, tsx, eslint, ...)
#
# Each kind of install leaves a marker, node_modules/.svc-install-{prod,full}, holding the hash
# of package-lock.json it was made from; an install is current when its marker holds the hash of
# today's lock file. A full install serves the server too, so `npm start` after `npm test` keeps
# the dev dependencies. Safe to run again: it only does what is needed. Progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=prod
case "${1:-}" in
  --full) mode=full ;;
  '') ;;
  *) echo "setup: unknown argument '$1' (use --full for the dev dependencies)" >&2; exit 2 ;;
esac

started=$SECONDS
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
current() { [ -f "node_modules/.svc-install-$1" ] && [ "$(cat "node_modules/.svc-install-$1")" = "$lock_hash" ]; }

# Runs a long command with a progress line every 15 s, so a slow first install is not silent.
with_progress() { # <label> <command...>
  local label=$1; shift
  local t0=$SECONDS
  (
    trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
    while :; do
      sleep 15 & sleeper=$!
      wait "$sleeper"
      echo "setup: ... still ${label} ($((SECONDS - t0)) s)" >&2
    done
  ) &
  local ticker=$!
  local rc=0
  "$@" || rc=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  return "$rc"
}

npm_install() { # <kind> <npm ci flags...>
  local kind=$1; shift
  with_progress installing npm ci --no-audit --no-fund --loglevel=error "$@" >&2
  # npm ci starts from an empty node_modules, so the other kind's marker is gone already.
  echo "$lock_hash" > "node_modules/.svc-install-$kind"
}

if [ "$mode" = full ]; then
  if ! current full; then
    echo "setup: installing all dependencies, dev and test ones included (npm ci)..." >&2
    npm_install full
  fi
elif ! current full && ! current prod; then
  echo "setup: installing server dependencies (npm ci --omit=dev)..." >&2
  npm_install prod --omit=dev
fi

# tsc is incremental: a second build with no change takes a few seconds.
echo "setup: building dist/ (tsc)..." >&2
with_progress building node_modules/.bin/tsc -p tsconfig.json
# The bin entries of package.json point at these files: executable, as `npm install -g .` and
# `npx` leave them, so they also run as ./dist/bin/<tool>.js.
chmod +x dist/bin/*.js
# The web console (docs/console.md): esbuild bundles console/src into dist/console/ (about a second).
echo "setup: building dist/console/ (esbuild)..." >&2
node scripts/build-console.mjs
echo "setup: done in $((SECONDS - started)) s" >&2
