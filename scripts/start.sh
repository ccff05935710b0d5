#!/usr/bin/env bash
# `npm start [-- flags]`: set up what is missing, then run the server in the foreground.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec node dist/bin/svc-server.js "$@"
