#!/usr/bin/env bash
# `npm run bench`: installs the bench's own dependencies when missing (peer engines and load
# tools stay out of the main package), installs the load generators (wrk, h2load) and
# nats-server with apt-get when they are missing, builds dist/ through the project's setup
# script, runs the suites, then writes BENCHMARKS.md from the newest result of every suite.
#
# Usage: bash bench/run.sh [suite ...]     (default: every suite, about 16 minutes on 2 cores)
#        npm run bench                      (the same, from the repository root)
# Suites: engine tables calls schema batch http auth shadow declog grpc scale multicore fleet filter diff impact sync-propagation
# Results: bench/results/<suite>-<timestamp>.json; BENCHMARKS.md at the repository root.
# A suite that fails is reported and the others still run; the exit status is then 1.
set -uo pipefail
cd "$(dirname "$0")/.."

ALL_SUITES=(engine tables calls schema batch http auth shadow declog grpc scale multicore fleet filter diff impact sync-propagation console)

if [ ! -f bench/node_modules/.package-lock.json ] || [ bench/package-lock.json -nt bench/node_modules/.package-lock.json ]; then
  echo "bench: installing bench dependencies (npm ci in bench/)" >&2
  (cd bench && npm ci --no-audit --no-fund --loglevel=error >&2) || { echo "bench: npm ci in bench/ failed" >&2; exit 1; }
fi

# Debian packages a suite needs: installed when missing; without them the suite says what it skips.
apt_updated=0
ensure_tool() { # <command> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
    if [ "$apt_updated" = 0 ]; then apt-get update -qq >/dev/null 2>&1 || true; apt_updated=1; fi
    echo "bench: installing $2 (apt-get) for $1" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null 2>&1 || true
  fi
  command -v "$1" >/dev/null 2>&1 || echo "bench: $1 is not available (package $2); the suites that need it skip those rows" >&2
}

suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then suites=("${ALL_SUITES[@]}"); fi
for suite in "${suites[@]}"; do
  case "$suite" in
    http|auth|shadow|declog|scale|multicore) ensure_tool wrk wrk ;;
    fleet) ensure_tool wrk wrk; ensure_tool nats-server nats-server ;;
    grpc) ensure_tool h2load nghttp2-client ;;
    sync-propagation) ensure_tool nats-server nats-server ;;
    console) ensure_tool chromium chromium ;;
  esac
done

bash scripts/setup.sh --full || { echo "bench: build failed" >&2; exit 1; }

failed=()
started=$(date +%s)
for suite in "${suites[@]}"; do
  if [ ! -f "bench/${suite}.ts" ]; then echo "bench: unknown suite '${suite}' (suites: ${ALL_SUITES[*]})" >&2; failed+=("$suite"); continue; fi
  if { [ "$suite" = sync-propagation ] || [ "$suite" = fleet ]; } && ! command -v nats-server >/dev/null 2>&1; then
    echo "bench: skipping ${suite}: nats-server is not installed" >&2
    continue
  fi
  echo "=== bench: ${suite} ($(date -u +%H:%M:%S), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a))"
  t0=$(date +%s)
  if ! node --import tsx "bench/${suite}.ts"; then
    echo "bench: suite ${suite} FAILED" >&2
    failed+=("$suite")
  fi
  echo "=== bench: ${suite} took $(( $(date +%s) - t0 )) s"
done
echo "=== bench: all suites took $(( $(date +%s) - started )) s"

node --import tsx bench/report.ts || failed+=("report")
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench: failed: ${failed[*]}" >&2
  exit 1
fi
