#!/usr/bin/env bash
# A PostgreSQL primary and a hot standby on loopback (streaming replication), for the replication tests, demos and
# bench/replica (CONTRACT §12). Two clusters, A and B, on ports ${WB_REPLICA_PORT:-54340} and the next one; which one
# is the primary is kept in a state file (it changes with `promote` and `rebuild`).
#
#   deploy/local-replica.sh start            create (first time) and start both; waits until the standby streams
#   deploy/local-replica.sh stop             stop both (fast)
#   deploy/local-replica.sh status
#   deploy/local-replica.sh url [DB]         multi-host URI for writes (both hosts, target_session_attrs=read-write)
#   deploy/local-replica.sh read-url [DB]    URI of the standby
#   deploy/local-replica.sh primary-url [DB] / standby-url [DB]
#   deploy/local-replica.sh createdb DB / dropdb DB   (on the primary; replicated)
#   deploy/local-replica.sh psql primary|standby [args]
#   deploy/local-replica.sh delay MS         recovery_min_apply_delay on the standby (0 clears it)
#   deploy/local-replica.sh standby-stop / standby-start
#   deploy/local-replica.sh promote          stop the primary (immediate, as if it died) and promote the standby
#   deploy/local-replica.sh rebuild          after promote: the old primary follows the new one (a fresh clone)
#   deploy/local-replica.sh reset            stop both and delete them
#
# As deploy/local-postgres.sh: run as root, everything runs as the `postgres` user, data under .local/replica (or
# /var/tmp when the checkout cannot be entered), loopback only, PostgreSQL's defaults otherwise.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SELF="$ROOT/deploy/local-replica.sh"
cd /
PORT_A="${WB_REPLICA_PORT:-54340}"
PORT_B="$((PORT_A + 1))"
BASE="${WB_REPLICA_DIR:-$ROOT/.local/replica}"
ROLE=weatherboard
REPL=weatherboard_replication
SLOT=weatherboard_standby

PGBIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
[ -n "$PGBIN" ] || { echo "local-replica: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

if [ "$(id -u)" = 0 ]; then
  OWNER=postgres
  as_owner() { runuser -u postgres -- "$@"; }
  if [ -z "${WB_REPLICA_DIR:-}" ] && ! runuser -u postgres -- test -x "$ROOT" 2>/dev/null; then
    BASE="/var/tmp/weatherboard-replica-$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)"
  fi
else
  OWNER="$(id -un)"
  as_owner() { "$@"; }
fi
SOCK="$BASE/run"
PWFILE="$BASE/app-password"
REPLPW="$BASE/replication-password"
STATE="$BASE/primary"   # A or B

data() { echo "$BASE/$1/data"; }
port() { if [ "$1" = A ]; then echo "$PORT_A"; else echo "$PORT_B"; fi; }
other() { if [ "$1" = A ]; then echo B; else echo A; fi; }
primary() { cat "$STATE" 2>/dev/null || echo A; }
standby() { other "$(primary)"; }
running() { as_owner "$PGBIN/pg_ctl" -D "$(data "$1")" status >/dev/null 2>&1; }
su_psql() { local node="$1"; shift; as_owner "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$(port "$node")" -U postgres -d postgres "$@"; }

pg_start() {
  local node="$1"
  running "$node" || as_owner "$PGBIN/pg_ctl" -D "$(data "$node")" -l "$BASE/$node/postgres.log" -o "-p $(port "$node")" -w -t 60 start >/dev/null
}

pg_stop() {
  local node="$1" mode="${2:-fast}"
  if running "$node"; then as_owner "$PGBIN/pg_ctl" -D "$(data "$node")" -m "$mode" -w -t 60 stop >/dev/null; fi
}

secret() {
  [ -f "$1" ] && return 0
  (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$1")
  chown "$OWNER" "$1"
}

# The standby's connection to the primary (through the password file of the postgres user's own).
conninfo() { echo "host=127.0.0.1 port=$(port "$1") user=$REPL password=$(cat "$REPLPW") application_name=weatherboard_standby"; }

init_primary() {
  local node=A
  [ -f "$(data $node)/PG_VERSION" ] && return 0
  install -d -m 755 "$BASE"
  install -d -o "$OWNER" -m 755 "$SOCK"
  install -d -o "$OWNER" -m 700 "$BASE/$node" "$(data $node)"
  secret "$PWFILE"
  secret "$REPLPW"
  local suPw; suPw="$(mktemp)"; head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$suPw"; chown "$OWNER" "$suPw"
  # Checksums, so that pg_rewind can bring an old primary back as a standby.
  as_owner "$PGBIN/initdb" -D "$(data $node)" -U postgres --pwfile="$suPw" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 --data-checksums >/dev/null
  rm -f "$suPw"
  cat >> "$(data $node)/postgresql.conf" <<CONF
# weatherboard local replication pair (deploy/local-replica.sh)
listen_addresses = '127.0.0.1'
unix_socket_directories = '$SOCK'
max_connections = 300
wal_keep_size = 256MB
hot_standby = on
hot_standby_feedback = on
CONF
  echo "host replication $REPL 127.0.0.1/32 scram-sha-256" >> "$(data $node)/pg_hba.conf"
  echo A > "$STATE"
  pg_start A
  local pw rpw; pw="$(cat "$PWFILE")"; rpw="$(cat "$REPLPW")"
  su_psql A -v pw="$pw" -v rpw="$rpw" <<SQL
SELECT format('CREATE ROLE $ROLE LOGIN CREATEDB PASSWORD %L', :'pw') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$ROLE') \gexec
SELECT format('CREATE ROLE $REPL LOGIN REPLICATION PASSWORD %L', :'rpw') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$REPL') \gexec
SELECT pg_create_physical_replication_slot('$SLOT') WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = '$SLOT') \gset
SQL
}

# A fresh standby of the primary in `node`'s directory: pg_basebackup -R through the slot.
base_backup() {
  local node="$1" from; from="$(other "$1")"
  rm -rf "${BASE:?}/$node"
  install -d -o "$OWNER" -m 700 "$BASE/$node" "$(data "$node")"
  as_owner env PGPASSWORD="$(cat "$REPLPW")" "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$(port "$from")" -U "$REPL" -D "$(data "$node")" \
    -R -S "$SLOT" -X stream -c fast >/dev/null
}

wait_streaming() {
  local node; node="$(standby)"
  for _ in $(seq 1 300); do
    if [ "$(su_psql "$node" -Atc "SELECT pg_is_in_recovery() AND pg_last_wal_receive_lsn() IS NOT NULL" 2>/dev/null || true)" = t ]; then return 0; fi
    sleep 0.1
  done
  echo "local-replica: the standby on $(port "$node") does not stream" >&2
  return 1
}

start() {
  init_primary
  local p s; p="$(primary)"; s="$(standby)"
  pg_start "$p"
  [ -f "$(data "$s")/PG_VERSION" ] || base_backup "$s"
  pg_start "$s"
  wait_streaming
}

uri() { echo "postgresql://$ROLE:$(cat "$PWFILE")@$1/${2:-weatherboard}"; }

promote() {
  local p s; p="$(primary)"; s="$(standby)"
  pg_stop "$p" immediate
  as_owner "$PGBIN/pg_ctl" -D "$(data "$s")" -w -t 60 promote >/dev/null
  for _ in $(seq 1 300); do
    [ "$(su_psql "$s" -Atc "SELECT NOT pg_is_in_recovery()" 2>/dev/null || true)" = t ] && break
    sleep 0.1
  done
  su_psql "$s" -c "SELECT pg_create_physical_replication_slot('$SLOT') WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = '$SLOT')" >/dev/null
  echo "$s" > "$STATE"
}

# The old primary (stopped) follows the new one. Here it is cloned afresh (pg_basebackup -R): the local databases are
# small, and a clone always works; on real data, rewind it instead (`pg_rewind`, deploy/OPERATIONS.md §14).
rebuild() {
  local s; s="$(standby)"
  pg_stop "$s" fast
  base_backup "$s"
  pg_start "$s"
  wait_streaming
}

case "${1:-}" in
  start) start ;;
  stop) pg_stop "$(standby)"; pg_stop "$(primary)" ;;
  status)
    for n in A B; do
      role=standby; [ "$n" = "$(primary)" ] && role=primary
      if running "$n"; then echo "$role: running on 127.0.0.1:$(port "$n")"; else echo "$role: stopped (127.0.0.1:$(port "$n"))"; fi
    done ;;
  url) echo "$(uri "127.0.0.1:$(port "$(primary)"),127.0.0.1:$(port "$(standby)")" "${2:-}")?target_session_attrs=read-write&connect_timeout=2" ;;
  read-url|standby-url) uri "127.0.0.1:$(port "$(standby)")" "${2:-}" ;;
  primary-url) uri "127.0.0.1:$(port "$(primary)")" "${2:-}" ;;
  createdb) su_psql "$(primary)" -v db="${2:?database name}" <<SQL
SELECT format('CREATE DATABASE %I OWNER $ROLE', :'db') WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') \gexec
SQL
    ;;
  dropdb) su_psql "$(primary)" -v db="${2:?database name}" <<SQL
SELECT format('DROP DATABASE IF EXISTS %I WITH (FORCE)', :'db') \gexec
SQL
    ;;
  psql) node="${2:?primary or standby}"; shift 2
        if [ "$node" = primary ]; then su_psql "$(primary)" "$@"; else su_psql "$(standby)" "$@"; fi ;;
  delay) su_psql "$(standby)" -c "ALTER SYSTEM SET recovery_min_apply_delay = '${2:?milliseconds}ms'" -c "SELECT pg_reload_conf()" >/dev/null ;;
  standby-stop) pg_stop "$(standby)" ;;
  standby-start) pg_start "$(standby)"; wait_streaming ;;
  promote) promote ;;
  rebuild) rebuild ;;
  reset) pg_stop B immediate || true; pg_stop A immediate || true; rm -rf "${BASE:?}" ;;
  *) sed -n '2,20p' "$SELF"; exit 2 ;;
esac
