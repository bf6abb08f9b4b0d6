#!/usr/bin/env bash
# Conformance: schemathesis (pinned, in a virtualenv under .local/) against a live server and the served
# openapi.yaml, with a fixed seed, a bounded number of examples per operation, an authenticated moderator
# account and rate limits off. Expected result: zero failures. Called by `deploy/dev test`.
#
#   Tests/Conformance/schemathesis.sh BIN     BIN = a built `weatherboard` binary
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="$1"
PORT="${CONFORMANCE_PORT:-18383}"
DB="${CONFORMANCE_DB:-weatherboard_conformance}"
VENV="$ROOT/.local/venv"
SCHEMATHESIS_VERSION=4.32.5

if [ ! -x "$VENV/bin/schemathesis" ] || ! "$VENV/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
  echo "==> installing schemathesis $SCHEMATHESIS_VERSION into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

"$ROOT/deploy/local-postgres.sh" dropdb "$DB" >/dev/null
"$ROOT/deploy/local-postgres.sh" createdb "$DB"
export DATABASE_URL="$("$ROOT/deploy/local-postgres.sh" url "$DB")"
"$BIN" migrate >/dev/null

# A fake open-meteo on loopback, so weather routes answer (and its failures are tested in the swift tests).
FAKE_PORT="${CONFORMANCE_FAKE_WEATHER_PORT:-18384}"
python3 "$ROOT/bench/fake_weather.py" "$FAKE_PORT" 0 >/dev/null &
FAKE=$!
LOG="$(mktemp)"
PORT="$PORT" RATE_LIMITS=off LOG_LEVEL=warning WEATHER_PROVIDER=open-meteo WEATHER_BASE_URL="http://127.0.0.1:$FAKE_PORT" "$BIN" serve 2>"$LOG" &
SERVER=$!
cleanup() {
  kill -TERM "$SERVER" "$FAKE" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  cd "$ROOT"
  "$ROOT/deploy/local-postgres.sh" dropdb "$DB" >/dev/null || true
}
trap cleanup EXIT
BASE="http://127.0.0.1:$PORT"
for _ in $(seq 1 200); do curl -fsS "$BASE/healthz" >/dev/null 2>&1 && break; sleep 0.05; done

json() { python3 -c "import sys, json; print(json.load(sys.stdin)$1)"; }
# A registered moderator, so the moderator API is exercised too, and one post to read, edit and report; replies to it
# (CONTRACT §13): another account's (the moderator's inbox, a reply to report and decide on) and the moderator's own
# (a reply to edit).
ANON="$(curl -fsS -X POST "$BASE/v1/accounts" | json "['token']")"
USER="conformance_$RANDOM"
TOKEN="$(curl -fsS -X POST "$BASE/v1/accounts/me/credentials" -H "Authorization: Bearer $ANON" -H 'Content-Type: application/json' \
  -d "{\"username\":\"$USER\",\"password\":\"conformance password 1\"}" | json "['token']")"
"$BIN" roles grant "$USER" moderator >/dev/null
POST_ID="$(curl -fsS -X POST "$BASE/v1/posts" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"weatherType":"rain","category":"food","body":"conformance post","regionId":"1835848"}' | json "['id']")"
OTHER="$(curl -fsS -X POST "$BASE/v1/accounts" | json "['token']")"
curl -fsS -X POST "$BASE/v1/posts/$POST_ID/replies" -H "Authorization: Bearer $OTHER" -H 'Content-Type: application/json' \
  -d '{"body":"conformance reply"}' >/dev/null
curl -fsS -X POST "$BASE/v1/posts/$POST_ID/replies" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"body":"conformance reply by the moderator"}' >/dev/null

echo "==> schemathesis against $BASE" >&2
cd "$(mktemp -d)"
# Operations that end the session would log the fuzzer out; they are covered by the swift tests. The live board's
# event streams are read for a bounded time each (schemathesis.toml) and every event checked against its schema.
CHECKS=not_a_server_error,status_code_conformance,response_schema_conformance,negative_data_rejection
run_schemathesis() {
  local config="$1" seed="$2"
  shift 2
  "$VENV/bin/schemathesis" --config-file "$ROOT/Tests/Conformance/$config" run "$BASE/openapi.yaml" --url "$BASE" \
    -H "Authorization: Bearer $TOKEN" \
    --seed "$seed" --max-examples 25 --phases examples,coverage,fuzzing --workers 1 --no-color \
    --exclude-operation-id deleteMe --exclude-operation-id logout --exclude-operation-id register "$@"
}
# schemathesis itself sometimes fails inside hypothesis ("Runtime Error": "AST constructor recursion depth mismatch",
# a KeyError while describing a lambda) without any API failure. That is CPython 3.11's ast module used from two
# threads at once, hence one worker; should it still happen, such a run is repeated once, with the next seed, since
# with the same seed the same internal error can come back. API failures never are.
run_checked() {
  local config="$1" out status=0
  shift
  out="$(mktemp)"
  run_schemathesis "$config" 20261123 "$@" 2>&1 | tee "$out" || status=$?
  if [ "$status" -ne 0 ] && ! grep -q "^Failures:" "$out" && grep -q "Runtime Error" "$out"; then
    echo "==> schemathesis hit an internal error (no API failure); running it once more" >&2
    status=0
    run_schemathesis "$config" 20261124 "$@" 2>&1 | tee "$out" || status=$?
  fi
  return "$status"
}
status=0
run_checked schemathesis.toml --checks "$CHECKS" || status=$?
# The request bodies people write most, checked the other way too (positive_data_acceptance): a body their schema
# allows must not be refused, so each schema states the server's real rules (schemathesis-positive.toml says what a
# schema cannot).
echo "==> schemathesis: request schemas no looser than the server" >&2
SCHEMATHESIS_HOOKS=hooks_positive PYTHONPATH="$ROOT/Tests/Conformance" \
  run_checked schemathesis-positive.toml --checks "$CHECKS,positive_data_acceptance" \
  --include-operation-id createPost --include-operation-id createReply --include-operation-id reportPost \
  --include-operation-id reportReply --include-operation-id markInboxRead || status=$?
# A server that died under the fuzzer (a trap) shows up to schemathesis only as connection errors, which can
# read like one of its internal errors: the server must still be up, whatever schemathesis said.
if ! kill -0 "$SERVER" 2>/dev/null || ! curl -fsS "$BASE/healthz" >/dev/null 2>&1; then
  echo "==> the server died during the conformance run; its log:" >&2
  tail -n 60 "$LOG" >&2
  exit 1
fi
exit "$status"
