#!/usr/bin/env bash
# Makes sure the real servers the integration tests need are installed and, for PostgreSQL and
# MariaDB, running. Tests start their own nats-server processes on free ports; PostgreSQL and
# MariaDB are shared and each test run creates (and drops) its own databases.
set -euo pipefail

need_apt=()
command -v nats-server >/dev/null 2>&1 || need_apt+=(nats-server)
command -v psql >/dev/null 2>&1 || need_apt+=(postgresql postgresql-client)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
[ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server mariadb-client)
# The console's browser tests (docs/console.md) drive Debian's Chromium through playwright-core;
# nothing is downloaded by playwright itself.
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
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

# MariaDB (the SQL filter proofs run in it too, docs/filter.md): root over the local socket, or
# over 127.0.0.1 without a password as these machines set it up.
maria_up() { mariadb-admin -uroot ping --silent >/dev/null 2>&1 || mariadb-admin -h127.0.0.1 -uroot ping --silent >/dev/null 2>&1; }
if ! maria_up; then
  echo "ensure-services: starting MariaDB" >&2
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd >&2 || true
  for _ in $(seq 1 30); do maria_up && break; sleep 1; done
fi
maria_up || { echo "ensure-services: MariaDB is not reachable (socket or 127.0.0.1:3306, user root)" >&2; exit 1; }
