#!/usr/bin/env bash
# Makes sure the machine's PostgreSQL answers on 127.0.0.1:5432 (the PostgreSQL driver's tests and
# the replica process tests use it; each test run works in a schema of its own and drops it).
# Idempotent: does nothing when it already answers; else starts the Debian cluster, installing
# PostgreSQL from apt when it is absent.
set -euo pipefail
host=${PGHOST:-127.0.0.1}
port=${PGPORT:-5432}
ready() { pg_isready -q -h "$host" -p "$port" 2>/dev/null; }
if command -v pg_isready >/dev/null && ready; then
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
if ! command -v pg_ctlcluster >/dev/null; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
fi
version=$(ls /etc/postgresql | sort -n | tail -1)
$sudo pg_ctlcluster "$version" main start || true
for _ in $(seq 1 30); do
  if ready; then
    # Trust auth for the postgres user over TCP and a database named test, as the tests expect.
    psql -h "$host" -p "$port" -U postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 ||
      psql -h "$host" -p "$port" -U postgres -c "CREATE DATABASE test" >/dev/null
    exit 0
  fi
  sleep 1
done
echo "PostgreSQL does not answer on $host:$port" >&2
exit 1
