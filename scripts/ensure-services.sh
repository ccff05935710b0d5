#!/usr/bin/env bash
# Makes sure the real servers the integration tests need are installed and, for PostgreSQL,
# running. Tests start their own nats-server processes on free ports; PostgreSQL is shared and
# each test run creates (and drops) its own database.
set -euo pipefail

need_apt=()
command -v nats-server >/dev/null 2>&1 || need_apt+=(nats-server)
command -v psql >/dev/null 2>&1 || need_apt+=(postgresql postgresql-client)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "ensure-services: installing ${need_apt[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq "${need_apt[@]}" >&2
fi

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 >/dev/null 2>&1; }
if ! pg_up; then
  echo "ensure-services: starting PostgreSQL" >&2
  if ls /etc/postgresql/*/main >/dev/null 2>&1; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start >&2 || true
  else
    ver=$(ls /usr/lib/postgresql | sort -n | tail -n1)
    pg_createcluster "$ver" main --start >&2 || true
  fi
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
fi
pg_up || { echo "ensure-services: PostgreSQL is not reachable on 127.0.0.1:5432" >&2; exit 1; }
