#!/usr/bin/env bash
# A project-local PostgreSQL cluster for development, tests and benches.
#
#   deploy/local-postgres.sh start     create (first time) and start the cluster; idempotent
#   deploy/local-postgres.sh stop      stop it (fast shutdown)
#   deploy/local-postgres.sh restart   stop, then start (used by the fault drills)
#   deploy/local-postgres.sh status    say whether it runs
#   deploy/local-postgres.sh url [DB]  print the DATABASE_URL for database DB (default weatherboard)
#   deploy/local-postgres.sh createdb DB   create database DB owned by the app role, if missing
#   deploy/local-postgres.sh dropdb DB     drop database DB, if present
#   deploy/local-postgres.sh dropdbs DB    drop DB and the plan tests' databases made from it (DB_plan_…)
#   deploy/local-postgres.sh psql [args]   psql as the superuser
#
# PostgreSQL refuses to run as root, so when run as root everything runs as the `postgres` user, in a data
# directory it owns under .local/pg (ignored by git). It listens on 127.0.0.1:${WB_PG_PORT:-54329} only, a
# port that does not collide with a system server on 5432, and on a socket inside its own directory.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SELF="$ROOT/deploy/local-postgres.sh"
# The postgres user may not be able to enter the caller's working directory.
cd /
PORT="${WB_PG_PORT:-54329}"
BASE="${WB_PG_DIR:-$ROOT/.local/pg}"
DATA="$BASE/data"
SOCK="$BASE/run"
LOG="$BASE/log/postgres.log"
ROLE=weatherboard
PWFILE="$BASE/app-password"

PGBIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
[ -n "$PGBIN" ] || { echo "local-postgres: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

if [ "$(id -u)" = 0 ]; then
  OWNER=postgres
  as_owner() { runuser -u postgres -- "$@"; }
  # A checkout the postgres user cannot enter (a clone inside `mktemp -d`, or under /root) cannot hold the data
  # directory: keep the cluster in a directory of its own, named after the checkout, so each checkout has one.
  if [ -z "${WB_PG_DIR:-}" ] && ! runuser -u postgres -- test -x "$ROOT" 2>/dev/null; then
    BASE="/var/tmp/weatherboard-pg-$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)"
    DATA="$BASE/data"; SOCK="$BASE/run"; LOG="$BASE/log/postgres.log"; PWFILE="$BASE/app-password"
  fi
else
  OWNER="$(id -un)"
  as_owner() { "$@"; }
fi

superuser_psql() { as_owner "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U postgres -d postgres "$@"; }

running() { as_owner "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }

init_cluster() {
  [ -f "$DATA/PG_VERSION" ] && return 0
  mkdir -p "$BASE"
  # The postgres user must be able to reach and own its directories.
  chmod 755 "$BASE"
  for d in "$DATA" "$SOCK" "$(dirname "$LOG")"; do
    install -d -o "$OWNER" -m 700 "$d"
  done
  chmod 755 "$SOCK"
  if [ ! -f "$PWFILE" ]; then
    umask 077
    head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$PWFILE"
  fi
  local suPw; suPw="$(mktemp)"
  head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$suPw"
  chown "$OWNER" "$suPw"
  as_owner "$PGBIN/initdb" -D "$DATA" -U postgres --pwfile="$suPw" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$suPw"
  cat >> "$DATA/postgresql.conf" <<CONF
# weatherboard local cluster
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$SOCK'
max_connections = 1000
shared_buffers = 256MB
synchronous_commit = on
fsync = on
log_min_duration_statement = 1000
CONF
}

start() {
  init_cluster
  if ! running; then
    # The port is given at start (not only at init), so WB_PG_PORT always applies.
    as_owner "$PGBIN/pg_ctl" -D "$DATA" -l "$LOG" -o "-p $PORT" -w -t 60 start >/dev/null
  fi
  # The application role and database (idempotent).
  local pw; pw="$(cat "$PWFILE")"
  superuser_psql -v pw="$pw" <<SQL
SELECT format('CREATE ROLE $ROLE LOGIN CREATEDB PASSWORD %L', :'pw') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$ROLE') \gexec
SELECT format('ALTER ROLE $ROLE PASSWORD %L', :'pw') \gexec
-- The plan tests copy a migrated template into a database of their own (CREATE DATABASE … TEMPLATE).
ALTER ROLE $ROLE CREATEDB;
SQL
  createdb weatherboard
}

createdb() {
  local db="$1"
  superuser_psql -v db="$db" <<SQL
SELECT format('CREATE DATABASE %I OWNER $ROLE', :'db') WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') \gexec
SQL
}

dropdb() {
  local db="$1"
  superuser_psql -v db="$db" -c "SELECT 1" >/dev/null
  superuser_psql -v db="$db" <<SQL
SELECT format('DROP DATABASE IF EXISTS %I WITH (FORCE)', :'db') \gexec
SQL
}

# Drops DB and every database named DB_plan_… (the plan tests' template and copies).
dropdbs() {
  local db="$1"
  dropdb "$db"
  superuser_psql -v prefix="${db}_plan_" <<'SQL'
SELECT format('DROP DATABASE IF EXISTS %I WITH (FORCE)', datname) FROM pg_database WHERE left(datname, length(:'prefix')) = :'prefix' \gexec
SQL
}

url() {
  local db="${1:-weatherboard}"
  echo "postgresql://$ROLE:$(cat "$PWFILE")@127.0.0.1:$PORT/$db"
}

case "${1:-}" in
  start) start ;;
  stop) if running; then as_owner "$PGBIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null; fi ;;
  restart) "$SELF" stop; "$SELF" start ;;
  status) if running; then echo "running on 127.0.0.1:$PORT ($DATA)"; else echo "stopped"; exit 3; fi ;;
  url) url "${2:-weatherboard}" ;;
  createdb) createdb "${2:?database name}" ;;
  dropdb) dropdb "${2:?database name}" ;;
  dropdbs) dropdbs "${2:?database name}" ;;
  psql) shift; superuser_psql "$@" ;;
  *) sed -n '2,15p' "$SELF"; exit 2 ;;
esac
