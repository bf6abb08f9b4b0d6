#!/usr/bin/env bash
# The generated-client walk: builds this package (swift-openapi-generator's build plugin generates `Client` from
# the served `Sources/WeatherboardServer/openapi.yaml`, which `Sources/ClientWalk/openapi.yaml` links to), starts a
# live server on a throwaway database with a fake open-meteo on loopback and rate limits on, and runs `ClientWalk`
# against it over URLSessionTransport (the live board's event streams over `EventStreamTransport`: on Linux,
# URLSessionTransport collects a whole body before it returns). Fails on any undocumented status or undecodable body,
# or when a streamed post's event does not arrive within 20 s. Called by
# `deploy/dev test` after the swift tests.
#
#   Tests/GeneratedClient/walk.sh BIN     BIN = a built `weatherboard` binary
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="$1"
PORT="${GENERATED_CLIENT_PORT:-18385}"
FAKE_PORT="${GENERATED_CLIENT_FAKE_WEATHER_PORT:-18386}"
DB="${GENERATED_CLIENT_DB:-weatherboard_generated_client}"
SCRATCH="$ROOT/.build-generated-client"

echo "==> building the generated client (swift-openapi-generator plugin, scratch path .build-generated-client)" >&2
start=$(date +%s)
swift build --package-path "$ROOT/Tests/GeneratedClient" --scratch-path "$SCRATCH" --product ClientWalk
echo "==> generated client built in $(( $(date +%s) - start )) s" >&2
WALK="$(swift build --package-path "$ROOT/Tests/GeneratedClient" --scratch-path "$SCRATCH" --show-bin-path)/ClientWalk"

"$ROOT/deploy/local-postgres.sh" dropdb "$DB" >/dev/null
"$ROOT/deploy/local-postgres.sh" createdb "$DB"
export DATABASE_URL="$("$ROOT/deploy/local-postgres.sh" url "$DB")"
"$BIN" migrate >/dev/null

python3 "$ROOT/bench/fake_weather.py" "$FAKE_PORT" 0 >/dev/null &
FAKE=$!
LOG="$(mktemp)"
PORT="$PORT" RATE_LIMITS=on LOG_LEVEL=warning WEATHER_PROVIDER=open-meteo WEATHER_BASE_URL="http://127.0.0.1:$FAKE_PORT" "$BIN" serve 2>"$LOG" &
SERVER=$!
cleanup() {
  kill -TERM "$SERVER" "$FAKE" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  "$ROOT/deploy/local-postgres.sh" dropdb "$DB" >/dev/null || true
}
trap cleanup EXIT
BASE="http://127.0.0.1:$PORT"
for _ in $(seq 1 200); do curl -fsS "$BASE/healthz" >/dev/null 2>&1 && break; sleep 0.05; done

echo "==> generated client walk against $BASE" >&2
status=0
"$WALK" "$BASE" || status=$?
if [ "$status" -ne 0 ]; then
  echo "==> server log:" >&2
  tail -n 40 "$LOG" >&2
fi
exit "$status"
