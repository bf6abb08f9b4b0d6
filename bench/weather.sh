#!/usr/bin/env bash
# Weather and regions bench (issue 6). Called by the main bench, or alone:
#
#   BASE_URL=http://127.0.0.1:18080 DATABASE_URL=postgresql://… SERVER_PID=<pid> bench/weather.sh
#
# The main bench's server answers from its own fake provider, so this script starts a second instance of the
# same binary (found from SERVER_PID, or WEATHERBOARD_BIN, or the release build) on the same database,
# pointed at a fake open-meteo on loopback (bench/fake_weather.py), and measures with wrk -t1 -c32:
#   - /healthz on that instance (the reference: the goal is cached weather ≥ 0.8× healthz);
#   - cached GET /v1/regions/{id}/weather;
#   - region search (rotating Korean/English prefixes), on BASE_URL;
#   - a cold-cache storm: 1,000 requests over 100 regions, 100 at a time; asserts exactly 100 upstream calls.
# Output: one line per route, `route  rps  p99_ms`, then the storm's line. Exit status 1 if the storm
# assertion fails.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
DURATION="${WEATHER_BENCH_DURATION:-10}"
SERVER_PID="${SERVER_PID:-${1:-}}"
: "${DATABASE_URL:?DATABASE_URL is required}"

if [ -n "${WEATHERBOARD_BIN:-}" ]; then
  BIN="$WEATHERBOARD_BIN"
elif [ -n "$SERVER_PID" ] && [ -e "/proc/$SERVER_PID/exe" ]; then
  BIN="$(readlink "/proc/$SERVER_PID/exe")"
else
  BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)/weatherboard"
fi
[ -x "$BIN" ] || { echo "weather bench: no weatherboard binary at $BIN" >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

# The fake provider.
FIFO="$(mktemp -u)"; mkfifo "$FIFO"
python3 "$HERE/fake_weather.py" 0 "${FAKE_DELAY_MS:-50}" > "$FIFO" &
PIDS+=($!)
read -r FAKE_PORT < "$FIFO"; rm -f "$FIFO"
FAKE="http://127.0.0.1:$FAKE_PORT"

# A second server on the same database, with the fake as its provider.
PORT2="$(free_port)"
WB="http://127.0.0.1:$PORT2"
export DATABASE_URL
"$BIN" migrate >/dev/null
PORT="$PORT2" RATE_LIMITS=off LOG_LEVEL=warning WEATHER_PROVIDER=open-meteo WEATHER_BASE_URL="$FAKE" WEATHER_TTL_SECONDS=600 \
  "$BIN" serve > /dev/null 2> "${TMPDIR:-/tmp}/weatherboard-weather-bench.log" &
PIDS+=($!)
for _ in $(seq 200); do curl -fsS "$WB/healthz" >/dev/null 2>&1 && break; sleep 0.05; done
BASE_URL="${BASE_URL:-$WB}"

measure() { # route-label url [wrk args…]
  local label="$1" url="$2"; shift 2
  local out; out="$(wrk -t1 -c32 -d"${DURATION}s" --latency "$@" "$url")"
  local rps p99
  rps="$(awk '/Requests\/sec:/ {print $2}' <<<"$out")"
  p99="$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us$/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v=v*1000}; printf "%.2f", v}' <<<"$out")"
  local errors; errors="$(awk '/Non-2xx/ {print $NF}' <<<"$out")"
  printf '%-44s %10s %8s%s\n' "$label" "$rps" "$p99" "${errors:+  non2xx=$errors}"
}

# Forget earlier bench runs' cached weather, so the storm starts cold.
psql -X -q -t -A "$DATABASE_URL" -c "DELETE FROM weather_cache WHERE provider = 'open-meteo'" >/dev/null
curl -fsS -X POST "$FAKE/__reset" >/dev/null

# 101 regions: the most populous for the cached route, the next 100 for the storm.
mapfile -t IDS < <(curl -fsS "$WB/v1/regions?limit=100" | python3 -c 'import json,sys; print("\n".join(i["id"] for i in json.load(sys.stdin)["items"]))')
mapfile -t MORE < <(curl -fsS "$WB/v1/regions?limit=1&cursor=$(curl -fsS "$WB/v1/regions?limit=100" | python3 -c 'import json,sys; print(json.load(sys.stdin)["nextCursor"])')" | python3 -c 'import json,sys; print("\n".join(i["id"] for i in json.load(sys.stdin)["items"]))')
HOT="${MORE[0]}"
curl -fsS "$WB/v1/regions/$HOT/weather" >/dev/null

printf '%-44s %10s %8s\n' route rps p99_ms
measure "GET /healthz (weather instance)" "$WB/healthz"
measure "GET /v1/regions/{id}/weather (cached)" "$WB/v1/regions/$HOT/weather"
measure "GET /v1/regions?q= (search)" "$BASE_URL/v1/regions" -s "$HERE/search.lua"
measure "GET /v1/regions/nearest" "$BASE_URL/v1/regions/nearest?lat=37.5663&lon=126.9779"

curl -fsS -X POST "$FAKE/__reset" >/dev/null
STORM="$(python3 "$HERE/storm.py" "$WB" 1000 100 "${IDS[@]}")"
CALLS="$(curl -fsS "$FAKE/__count" | python3 -c 'import json,sys; print(json.load(sys.stdin)["calls"])')"
echo "cold storm: 1000 requests over ${#IDS[@]} regions: $STORM upstream_calls=$CALLS (expected ${#IDS[@]})"
if [ "$CALLS" != "${#IDS[@]}" ]; then
  echo "weather bench: FAILED: $CALLS upstream calls for ${#IDS[@]} cold regions" >&2
  exit 1
fi
