#!/usr/bin/env bash
# A PostgreSQL primary and a hot standby on loopback (streaming replication), for the replication tests, demos,
# drills and bench/replica (CONTRACT §12). Two clusters, A and B, on 127.0.0.1:${WB_REPLICA_PORT:-54340} and the
# next port; which of them is the primary is kept in a state file, since `promote` and `rebuild` swap the roles.
#
#   deploy/local-replica.sh start            create both (first time) and start both; waits until the standby streams
#   deploy/local-replica.sh stop             stop both (fast shutdown)
#   deploy/local-replica.sh status           each one's role, port and state (exit 3 if either is stopped)
#   deploy/local-replica.sh url [DB]         DATABASE_URL for writes: both hosts, target_session_attrs=read-write
#   deploy/local-replica.sh read-url [DB]    DATABASE_READ_URL: the standby
#   deploy/local-replica.sh primary-url [DB] / standby-url [DB]   one host each
#   deploy/local-replica.sh createdb DB / dropdb DB   on the primary (the standby follows)
#   deploy/local-replica.sh psql primary|standby [args]   psql as the superuser
#   deploy/local-replica.sh delay MS         recovery_min_apply_delay on the standby (a real, deterministic lag); 0 clears
#   deploy/local-replica.sh standby-stop / standby-start
#   deploy/local-replica.sh promote          kill the primary (immediate shutdown, as if it died), promote the standby
#   deploy/local-replica.sh rebuild          after a promote: the old primary follows the new one (pg_rewind, or a clone)
#   deploy/local-replica.sh reset            stop both and delete them (a fresh pair next start)
#
# DB defaults to weatherboard. As deploy/local-postgres.sh: PostgreSQL refuses to run as root, so when run as root
# everything runs as the `postgres` user, with the data under .local/replica (ignored by git), or under
# /var/tmp/weatherboard-replica-<hash> when the postgres user cannot enter the checkout (WB_REPLICA_DIR overrides).
# Loopback only; the app role `weatherboard` and the replication role `weatherboard_replication` have their passwords
# in files next to the clusters; the standby streams through the physical slot `weatherboard_standby`. Data
# checksums are on, so that pg_rewind can turn an old primary into a standby. PostgreSQL's defaults otherwise.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SELF="$ROOT/deploy/local-replica.sh"
# The postgres user may not be able to enter the caller's working directory.
cd /
PORT_A="${WB_REPLICA_PORT:-54340}"
[[ "$PORT_A" =~ ^[0-9]+$ ]] && [ "$PORT_A" -ge 1024 ] && [ "$PORT_A" -le 65534 ] \
  || { echo "local-replica: WB_REPLICA_PORT must be a port number (1024-65534)" >&2; exit 2; }
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
  # A checkout the postgres user cannot enter (a clone inside `mktemp -d`, or under /root) cannot hold the data
  # directories: keep them in a directory of their own, named after the checkout, so each checkout has one pair.
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
STATE="$BASE/primary"   # A or B: which cluster is the primary now

log() { echo "local-replica: $*" >&2; }
die() { log "$*"; exit 1; }

data() { echo "$BASE/$1/data"; }
port() { if [ "$1" = A ]; then echo "$PORT_A"; else echo "$PORT_B"; fi; }
other() { if [ "$1" = A ]; then echo B; else echo A; fi; }
primary() { if [ -f "$STATE" ]; then cat "$STATE"; else echo A; fi; }
standby() { other "$(primary)"; }
set_primary() { echo "$1" > "$STATE.tmp"; mv "$STATE.tmp" "$STATE"; }
created() { [ -f "$(data "$1")/PG_VERSION" ]; }
is_standby() { [ -f "$(data "$1")/standby.signal" ]; }
running() { as_owner "$PGBIN/pg_ctl" -D "$(data "$1")" status >/dev/null 2>&1; }
su_psql() { local node="$1"; shift; as_owner "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$(port "$node")" -U postgres -d postgres "$@"; }
need_pair() { [ -f "$PWFILE" ] && created "$(primary)" || die "no pair yet under $BASE: run '$SELF start'"; }

# With `try`, a cluster that does not start is said by the exit status instead of failing.
pg_start() {
  local node="$1"
  running "$node" && return 0
  # The port is given at start (not only in the configuration), so WB_REPLICA_PORT always applies.
  if ! as_owner "$PGBIN/pg_ctl" -D "$(data "$node")" -l "$BASE/$node/postgres.log" -o "-p $(port "$node")" -w -t 60 start >/dev/null; then
    [ "${2:-}" = try ] && return 1
    tail -n 20 "$BASE/$node/postgres.log" >&2 || true
    die "the cluster on port $(port "$node") did not start"
  fi
}

pg_stop() {
  local node="$1" mode="${2:-fast}"
  if created "$node" && running "$node"; then as_owner "$PGBIN/pg_ctl" -D "$(data "$node")" -m "$mode" -w -t 60 stop >/dev/null; fi
}

secret() {
  [ -f "$1" ] && return 0
  (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$1")
}

# The first time only: cluster A, the first primary.
init_primary() {
  local node=A
  created "$node" && return 0
  install -d -m 755 "$BASE"
  # The postgres user must be able to reach the socket directory and own the data directories.
  install -d -o "$OWNER" -m 755 "$SOCK"
  install -d -o "$OWNER" -m 700 "$BASE/$node" "$(data $node)"
  secret "$PWFILE"
  secret "$REPLPW"
  local suPw; suPw="$(mktemp)"
  head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$suPw"
  chown "$OWNER" "$suPw"
  # Data checksums, so that pg_rewind can bring an old primary back as a standby (the alternative is wal_log_hints).
  as_owner "$PGBIN/initdb" -D "$(data $node)" -U postgres --pwfile="$suPw" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 --data-checksums >/dev/null
  rm -f "$suPw"
  # pg_basebackup copies this file (and pg_hba.conf) to the standby: both clusters run with the same settings.
  cat >> "$(data $node)/postgresql.conf" <<CONF
# weatherboard local replication pair (deploy/local-replica.sh)
listen_addresses = '127.0.0.1'
unix_socket_directories = '$SOCK'
max_connections = 300
wal_level = replica
max_wal_senders = 10
wal_keep_size = 256MB
hot_standby = on
hot_standby_feedback = on
CONF
  echo "host replication $REPL 127.0.0.1/32 scram-sha-256" >> "$(data $node)/pg_hba.conf"
  set_primary A
}

# On the primary, every start (idempotent): the roles with the passwords of the files, the slot, the app database.
ensure_roles() {
  local node="$1" pw rpw
  pw="$(cat "$PWFILE")"; rpw="$(cat "$REPLPW")"
  su_psql "$node" -v pw="$pw" -v rpw="$rpw" <<SQL
SELECT format('CREATE ROLE $ROLE LOGIN CREATEDB PASSWORD %L', :'pw') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$ROLE') \gexec
SELECT format('ALTER ROLE $ROLE PASSWORD %L', :'pw') \gexec
SELECT format('CREATE ROLE $REPL LOGIN REPLICATION PASSWORD %L', :'rpw') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$REPL') \gexec
SELECT format('ALTER ROLE $REPL PASSWORD %L', :'rpw') \gexec
SQL
  ensure_slot "$node"
  createdb weatherboard
}

# The standby's slot on the primary, reserving WAL from now on (so a standby rebuilt later finds it).
ensure_slot() {
  su_psql "$1" -c "SELECT pg_create_physical_replication_slot('$SLOT', true) WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = '$SLOT')" >/dev/null
}

createdb() {
  su_psql "$(primary)" -v db="$1" <<SQL
SELECT format('CREATE DATABASE %I OWNER $ROLE', :'db') WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') \gexec
SQL
}

dropdb() {
  su_psql "$(primary)" -v db="$1" <<SQL
SELECT format('DROP DATABASE IF EXISTS %I WITH (FORCE)', :'db') \gexec
SQL
}

# `node` (stopped) becomes a standby of the current primary: standby.signal, primary_conninfo through the replication
# role, primary_slot_name. Settings an earlier life left in postgresql.auto.conf (pg_basebackup and pg_rewind copy the
# source's: its own primary_conninfo if it was a standby once, a `delay`) are dropped; a standby starts undelayed.
follow_primary() {
  local node="$1" p; p="$(primary)"
  local auto; auto="$(data "$node")/postgresql.auto.conf"
  as_owner sed -i -E '/^[[:space:]]*(primary_conninfo|primary_slot_name|recovery_min_apply_delay)[[:space:]]*=/d' "$auto"
  as_owner tee -a "$auto" >/dev/null <<CONF
primary_conninfo = 'host=127.0.0.1 port=$(port "$p") user=$REPL password=$(cat "$REPLPW") application_name=weatherboard_standby'
primary_slot_name = '$SLOT'
CONF
  as_owner touch "$(data "$node")/standby.signal"
}

# A fresh copy of the primary in `node`'s directory: pg_basebackup -R through the slot.
base_backup() {
  local node="$1" p; p="$(primary)"
  rm -rf "${BASE:?}/$node"
  install -d -o "$OWNER" -m 700 "$BASE/$node" "$(data "$node")"
  ensure_slot "$p"
  as_owner env PGPASSWORD="$(cat "$REPLPW")" "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$(port "$p")" -U "$REPL" -D "$(data "$node")" \
    -R -S "$SLOT" -X stream -c fast >/dev/null
  follow_primary "$node"
}

# `node` (stopped; an old primary, or a standby of one) is rewound onto the primary's timeline, set to follow it.
rewind() {
  local node="$1" p; p="$(primary)"
  # pg_rewind reads the source's timeline from its control file, which a promoted server updates only at its first
  # checkpoint: without one, pg_rewind finds "the same timeline", rewinds nothing, and the standby cannot follow.
  su_psql "$p" -c CHECKPOINT >/dev/null
  ensure_slot "$p"
  if as_owner "$PGBIN/pg_rewind" -D "$(data "$node")" --source-server="host=$SOCK port=$(port "$p") user=postgres dbname=postgres" \
       >"$BASE/rewind.log" 2>&1; then
    follow_primary "$node"
  else
    log "pg_rewind of the cluster on port $(port "$node") failed (see $BASE/rewind.log)"
    return 1
  fi
}

# The standby of the moment is made to follow the primary, started, and streaming: pg_rewind when it has data; a fresh
# base backup when it has none, or when pg_rewind fails, or when the rewound cluster does not start or follow.
refollow() {
  local s; s="$(standby)"
  pg_stop "$s" fast
  if created "$s" && rewind "$s"; then
    if pg_start "$s" try && wait_streaming try; then return 0; fi
    log "the rewound cluster on port $(port "$s") does not follow the primary"
    pg_stop "$s" immediate
  fi
  if created "$s"; then log "taking a fresh base backup for port $(port "$s") instead"; fi
  base_backup "$s"
  pg_start "$s"
  wait_streaming
}

# The standby up and streaming (the primary runs): started if it is one; otherwise, or when it does not follow (an old
# primary after a promote, a standby left on an old timeline), rebuilt.
standby_up() {
  local s; s="$(standby)"
  if created "$s" && is_standby "$s"; then
    if pg_start "$s" try && wait_streaming try; then return 0; fi
    log "the standby on port $(port "$s") does not follow the primary on port $(port "$(primary)"): rebuilding it"
  elif created "$s"; then
    log "the cluster on port $(port "$s") was the primary before a promote: rebuilding it as a standby of port $(port "$(primary)")"
  fi
  refollow
}

# Until the standby streams from the primary and has received everything the primary had flushed when we began
# (on the primary's timeline: a standby stuck on an old timeline never gets there). written_lsn, not
# pg_last_wal_receive_lsn(): a walreceiver that has just started may hold the flush of what it received for seconds.
# With `try`, says so by its exit status instead of failing (after 30 s instead of 60 s).
wait_streaming() {
  local p s target tries=600; p="$(primary)"; s="$(standby)"
  [ "${1:-}" = try ] && tries=300
  target="$(su_psql "$p" -Atc "SELECT pg_current_wal_flush_lsn()")"
  for _ in $(seq 1 "$tries"); do
    if [ "$(su_psql "$s" -Atc "SELECT status = 'streaming' AND written_lsn >= '$target'::pg_lsn FROM pg_stat_wal_receiver" 2>/dev/null || true)" = t ]; then
      return 0
    fi
    sleep 0.1
  done
  [ "${1:-}" = try ] && return 1
  tail -n 20 "$BASE/$s/postgres.log" >&2 || true
  die "the standby on port $(port "$s") does not stream from the primary on port $(port "$p") (see $BASE/$s/postgres.log)"
}

start() {
  init_primary
  local p; p="$(primary)"
  pg_start "$p"
  ensure_roles "$p"
  standby_up
}

standby_start() {
  need_pair
  running "$(primary)" || die "the primary on port $(port "$(primary)") is stopped: run '$SELF start'"
  standby_up
}

# The primary dies (immediate shutdown: no shutdown checkpoint, clients cut off) and the standby takes over.
promote() {
  need_pair
  local p s; p="$(primary)"; s="$(standby)"
  is_standby "$s" && running "$s" || die "no running standby to promote (after a promote, run '$SELF rebuild' first)"
  pg_stop "$p" immediate
  as_owner "$PGBIN/pg_ctl" -D "$(data "$s")" -w -t 60 promote >/dev/null
  set_primary "$s"
  local ok=
  for _ in $(seq 1 600); do
    # Assigning a transaction id fails while the server is still read-only.
    if [ "$(su_psql "$s" -Atc "SELECT pg_current_xact_id() IS NOT NULL" 2>/dev/null || true)" = t ]; then ok=1; break; fi
    sleep 0.1
  done
  [ -n "$ok" ] || die "the promoted cluster on port $(port "$s") does not accept writes"
  # A `delay` it had as a standby means nothing on a primary (rewind runs the CHECKPOINT pg_rewind needs).
  su_psql "$s" -c "ALTER SYSTEM RESET recovery_min_apply_delay" -c "SELECT pg_reload_conf()" >/dev/null
  ensure_slot "$s"
}

# After a promote: the old primary follows the new one (pg_rewind; a fresh clone if that fails). Also repairs a
# standby that does not follow.
rebuild() {
  need_pair
  pg_start "$(primary)"
  refollow
}

delay() {
  local ms="$1" s; s="$(standby)"
  [[ "$ms" =~ ^[0-9]+$ ]] || die "delay: milliseconds, a whole number (0 clears it)"
  need_pair
  running "$s" || die "the standby on port $(port "$s") is stopped"
  if [ "$ms" = 0 ]; then
    su_psql "$s" -c "ALTER SYSTEM RESET recovery_min_apply_delay" -c "SELECT pg_reload_conf()" >/dev/null
  else
    su_psql "$s" -c "ALTER SYSTEM SET recovery_min_apply_delay = '${ms}ms'" -c "SELECT pg_reload_conf()" >/dev/null
  fi
  # The reload is asynchronous: wait until a new session sees the value (the startup process was signalled with it).
  for _ in $(seq 1 100); do
    [ "$(su_psql "$s" -Atc "SELECT setting FROM pg_settings WHERE name = 'recovery_min_apply_delay'")" = "$ms" ] && return 0
    sleep 0.05
  done
  die "the standby on port $(port "$s") did not take recovery_min_apply_delay = ${ms}ms"
}

status() {
  local n role rc=0 p; p="$(primary)"
  if ! created A; then echo "not created ($BASE)"; return 3; fi
  for n in "$p" "$(other "$p")"; do
    role=standby; [ "$n" = "$p" ] && role=primary
    if ! created "$n"; then echo "$role: not created (127.0.0.1:$(port "$n"))"; rc=3; continue; fi
    if ! running "$n"; then echo "$role: stopped (127.0.0.1:$(port "$n"))"; rc=3; continue; fi
    if [ "$role" = primary ]; then
      echo "$role: running on 127.0.0.1:$(port "$n") ($(su_psql "$n" -Atc "SELECT CASE WHEN pg_is_in_recovery() THEN 'in recovery!' \
        ELSE 'timeline ' || timeline_id || ', standbys streaming: ' || (SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming') END \
        FROM pg_control_checkpoint()" 2>/dev/null || echo '?'))"
    else
      echo "$role: running on 127.0.0.1:$(port "$n") ($(su_psql "$n" -Atc "SELECT CASE WHEN NOT pg_is_in_recovery() THEN 'not in recovery: run rebuild' \
        ELSE coalesce((SELECT status || ' from port ' || sender_port FROM pg_stat_wal_receiver), 'not streaming') \
          || ', replay ' || coalesce(pg_size_pretty(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())), '?') || ' behind receive' \
          || ', recovery_min_apply_delay ' || current_setting('recovery_min_apply_delay') END" 2>/dev/null || echo '?'))"
    fi
  done
  return "$rc"
}

uri() { echo "postgresql://$ROLE:$(cat "$PWFILE")@$1/${2:-weatherboard}"; }

usage() { sed -n '2,18p' "$SELF"; exit 2; }

case "${1:-}" in
  start) start ;;
  stop) if created B || created A; then pg_stop "$(standby)"; pg_stop "$(primary)"; fi ;;
  status) status ;;
  url) need_pair; echo "$(uri "127.0.0.1:$(port "$(primary)"),127.0.0.1:$(port "$(standby)")" "${2:-}")?target_session_attrs=read-write&connect_timeout=2" ;;
  read-url|standby-url) need_pair; uri "127.0.0.1:$(port "$(standby)")" "${2:-}" ;;
  primary-url) need_pair; uri "127.0.0.1:$(port "$(primary)")" "${2:-}" ;;
  createdb) need_pair; createdb "${2:?database name}" ;;
  dropdb) need_pair; dropdb "${2:?database name}" ;;
  psql)
    case "${2:-}" in
      primary) shift 2; su_psql "$(primary)" "$@" ;;
      standby) shift 2; su_psql "$(standby)" "$@" ;;
      *) die "psql primary|standby [psql arguments]" ;;
    esac ;;
  delay) delay "${2:?milliseconds (0 clears)}" ;;
  standby-stop) need_pair; pg_stop "$(standby)" ;;
  standby-start) standby_start ;;
  promote) promote ;;
  rebuild) rebuild ;;
  reset) pg_stop "$(standby)" immediate || true; pg_stop "$(primary)" immediate || true; rm -rf "${BASE:?}" ;;
  *) usage ;;
esac
