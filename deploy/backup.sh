#!/usr/bin/env bash
# weatherboard database backup and restore (PostgreSQL custom-format dumps).
#
#   deploy/backup.sh backup DIR      pg_dump -Fc of $DATABASE_URL into DIR/weatherboard-<UTC time>.dump
#   deploy/backup.sh restore FILE    pg_restore FILE into $DATABASE_URL (drops and recreates the objects)
#
# DATABASE_URL is a libpq URI or conninfo, as for `weatherboard serve`; the standard PG* variables also
# work (PGPASSWORD, or better ~/.pgpass / PGPASSFILE). Source the service's environment file first:
#   set -a; . /etc/weatherboard/weatherboard.env; set +a; deploy/backup.sh backup /var/backups/weatherboard
#
# The dump runs in one snapshot while the app keeps serving. A restore replaces the data: stop every app
# instance first (systemctl stop 'weatherboard@*'), restore, run `weatherboard migrate` (a no-op unless
# the dump predates the installed binary), then start them again.
set -euo pipefail

PROG="$(basename "$0")"

usage() {
  cat <<USAGE
usage: $PROG backup DIR       write DIR/weatherboard-YYYYmmddTHHMMSSZ.dump (pg_dump -Fc) from \$DATABASE_URL
       $PROG restore FILE     restore FILE into \$DATABASE_URL (pg_restore --clean --if-exists --no-owner)
       $PROG help             this text

Environment: DATABASE_URL (libpq URI or conninfo; PG* variables also work).
Restore replaces existing objects: stop the app instances first.
USAGE
}

die() { echo "$PROG: $*" >&2; exit 1; }

need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found (apt-get install postgresql-client-15)"; }

# An empty DATABASE_URL means "libpq defaults + PG* variables", as for the server itself.
DB_ARGS=()
if [ -n "${DATABASE_URL:-}" ]; then DB_ARGS=(--dbname="$DATABASE_URL"); fi

backup() {
  local dir="$1"
  need pg_dump
  [ -d "$dir" ] || die "backup directory '$dir' does not exist"
  [ -w "$dir" ] || die "backup directory '$dir' is not writable"
  local stamp file partial
  stamp="$(date -u +%Y%m%dT%H%M%SZ)"
  file="$dir/weatherboard-$stamp.dump"
  partial="$file.partial"
  [ ! -e "$file" ] || die "$file already exists"
  umask 077                                   # dumps contain password hashes and token hashes
  trap 'rm -f "$partial"' EXIT
  # -Fc: compressed, restorable selectively and in parallel. No --no-owner here: that is a restore choice.
  pg_dump --format=custom --compress=6 --no-password "${DB_ARGS[@]}" --file="$partial"
  # Refuse to keep a dump that pg_restore cannot read.
  pg_restore --list "$partial" >/dev/null || die "pg_restore cannot read the new dump; kept nothing"
  mv "$partial" "$file"
  trap - EXIT
  echo "$file ($(du -h "$file" | cut -f1))"
}

restore() {
  local file="$1"
  need pg_restore
  [ -f "$file" ] || die "no such dump file: $file"
  [ -r "$file" ] || die "cannot read $file"
  pg_restore --list "$file" >/dev/null || die "$file is not a pg_dump custom-format archive"
  # --clean --if-exists: drop what the dump contains before recreating it, without errors for objects
  #                      that are not there yet (restoring into an empty database works too).
  # --no-owner:          objects end up owned by the role in DATABASE_URL, whoever owned them before.
  # --no-privileges:     GRANTs of the old cluster's roles may name roles that do not exist here.
  # --single-transaction + --exit-on-error: all or nothing.
  pg_restore --clean --if-exists --no-owner --no-privileges --single-transaction --exit-on-error \
    --no-password "${DB_ARGS[@]}" "$file"
  echo "restored $file"
}

case "${1:-}" in
  backup)
    [ $# -eq 2 ] || { usage >&2; exit 2; }
    backup "$2"
    ;;
  restore)
    [ $# -eq 2 ] || { usage >&2; exit 2; }
    restore "$2"
    ;;
  help|-h|--help)
    usage
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
