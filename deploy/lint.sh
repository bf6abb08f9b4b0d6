#!/usr/bin/env bash
# Lints the deployment files that can be checked on a machine without systemd running, without a Docker
# engine and without the real binary:
#
#   systemd   `systemd-analyze verify` of both units inside a throwaway root (a stub
#             /usr/local/bin/weatherboard and an empty /etc/weatherboard/weatherboard.env, plus the host's
#             own unit directory so sysinit.target & co. resolve); any warning fails. Then
#             `systemd-analyze security --offline` must rate the sandbox at exposure <= 2.0.
#   env       every variable AppConfiguration.swift and the contract read is documented in
#             weatherboard.env.example and OPERATIONS.md (catches drift when the code grows a variable).
#   nginx     `nginx -t` of a minimal nginx.conf that includes deploy/nginx/weatherboard.conf, with the
#             certificate paths pointed at a self-signed certificate made with openssl, and log paths in
#             the temp dir. Then that site runs for real on loopback in front of a stub upstream, and curl
#             checks that nothing under /metrics gets through (/metrics/, //metrics, /%6detrics, …) while
#             /healthz and /v1/posts do, and that the event streams (/v1/stream) are not buffered.
#   docker    no Docker engine here (so no build, no `docker compose config`): compose.yaml is parsed with
#             PyYAML and checked structurally; the Dockerfile's stages, COPY sources and ignore file are
#             checked against the repository.
#   shell     `bash -n` on every shell script under deploy/, and `shellcheck` on ours if it is installed;
#             backup.sh's usage paths.
#
# Non-interactive; exits non-zero if anything failed. Installs systemd / nginx / openssl with apt-get when
# the command is missing (root only). Last line: `lint: N passed, M failed`.
set -uo pipefail

DEPLOY="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$DEPLOY/.." && pwd)"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/weatherboard-lint.XXXXXX")"
trap 'stop_live_nginx; rm -rf "$TMP"' EXIT

PASSED=0
FAILED=0
SKIPPED=0
pass() { PASSED=$((PASSED + 1)); echo "ok    $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL  $1"; [ -z "${2:-}" ] || sed 's/^/      /' <<<"$2"; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "skip  $1"; }

APT_UPDATED=
ensure() { # ensure COMMAND DEBIAN-PACKAGE
  command -v "$1" >/dev/null 2>&1 && return 0
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
  echo "      installing $2 (for $1)"
  if [ -z "$APT_UPDATED" ]; then apt-get update -qq >/dev/null 2>&1 || true; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null 2>&1 || return 1
  command -v "$1" >/dev/null 2>&1
}

# ---------------------------------------------------------------- systemd
lint_systemd() {
  if ! ensure systemd-analyze systemd; then fail "systemd: systemd-analyze not available"; return; fi
  local root="$TMP/sysroot"
  mkdir -p "$root/usr/local/bin" "$root/etc/weatherboard" "$root/etc/systemd/system" "$root/usr/lib/systemd"
  # The unit's commands must exist and be executable for `verify`; the real binary is not installed here.
  printf '#!/bin/sh\nexit 0\n' >"$root/usr/local/bin/weatherboard"
  chmod 755 "$root/usr/local/bin/weatherboard"
  : >"$root/etc/weatherboard/weatherboard.env"
  # Dependencies (sysinit.target, network-online.target, …) come from the host's unit directory.
  local sysunits
  for sysunits in /usr/lib/systemd/system /lib/systemd/system; do
    [ -d "$sysunits" ] && { cp -a "$sysunits" "$root/usr/lib/systemd/"; break; }
  done
  cp "$DEPLOY/systemd/weatherboard.service" "$DEPLOY/systemd/weatherboard@.service" "$root/etc/systemd/system/"

  local unit out rc
  for unit in weatherboard.service weatherboard@8080.service; do
    out="$(systemd-analyze verify --root="$root" "$unit" 2>&1)"; rc=$?
    if [ $rc -eq 0 ] && [ -z "$out" ]; then pass "systemd: verify $unit"
    else fail "systemd: verify $unit (rc=$rc)" "$out"; fi
  done

  # Exposure 0.0 (locked down) … 10.0 (unsafe); --threshold is in tenths.
  for unit in weatherboard.service weatherboard@8080.service; do
    out="$(systemd-analyze security --offline=yes --root="$root" --threshold=20 --no-pager "$unit" 2>&1)"; rc=$?
    local level; level="$(grep -o 'Overall exposure level.*' <<<"$out")"
    if [ $rc -eq 0 ]; then pass "systemd: security $unit (${level#Overall exposure level for })"
    else fail "systemd: security $unit above 2.0 (rc=$rc)" "$(grep -E '✗|Overall' <<<"$out")"; fi
  done

  # The settings the deployment relies on are present in both units.
  local key missing
  for unit in weatherboard.service weatherboard@.service; do
    missing=""
    for key in 'User=weatherboard' 'RemoveIPC=yes' 'StateDirectoryMode=0750' 'ProtectSystem=strict' 'ProtectHome=yes' 'PrivateTmp=yes' 'PrivateDevices=yes' \
               'NoNewPrivileges=yes' 'CapabilityBoundingSet=' 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX' \
               'SystemCallFilter=@system-service' 'MemoryDenyWriteExecute=yes' 'LockPersonality=yes' \
               'RestrictNamespaces=yes' 'ProtectKernelTunables=yes' 'ProtectKernelModules=yes' 'ProtectKernelLogs=yes' \
               'ProtectControlGroups=yes' 'ProtectClock=yes' 'RestrictRealtime=yes' 'RestrictSUIDSGID=yes' 'UMask=0027' \
               'LimitNOFILE=' 'EnvironmentFile=/etc/weatherboard/weatherboard.env' \
               'ExecStartPre=/usr/local/bin/weatherboard migrate' 'ExecStart=/usr/local/bin/weatherboard serve' \
               'KillSignal=SIGTERM' 'TimeoutStopSec=30' 'Restart=on-failure'; do
      grep -q "^${key}" "$DEPLOY/systemd/$unit" || missing+=" $key"
    done
    if [ -z "$missing" ]; then pass "systemd: $unit has the required hardening and lifecycle settings"
    else fail "systemd: $unit lacks:$missing"; fi
  done
}

# ---------------------------------------------------------------- env documentation
lint_env() {
  local config="$ROOT/Sources/WeatherboardServer/AppConfiguration.swift"
  local vars
  vars="$( { grep -oE '(string|int)\("[A-Z][A-Z0-9_]+"' "$config" 2>/dev/null | grep -oE '[A-Z][A-Z0-9_]+'
             grep -oE 'environment\["[A-Z][A-Z0-9_]+"\]' "$ROOT"/Sources/*/*.swift 2>/dev/null | grep -oE '[A-Z][A-Z0-9_]+"' | tr -d '"'
             echo DATABASE_URL HOST PORT WEATHER_PROVIDER WEATHER_BASE_URL OPENWEATHERMAP_API_KEY KMA_SERVICE_KEY \
                  WEATHER_TTL_SECONDS WEATHER_COLD_PER_MINUTE WEATHER_UPSTREAM_PER_MINUTE REPORT_HIDE_THRESHOLD REPORT_TRUST_AGE_SECONDS TRUSTED_PROXIES RATE_LIMITS \
                  DB_POOL_SIZE DB_STATEMENT_TIMEOUT_MS LOG_LEVEL LOG_FORMAT WEATHERBOARD_SQL_DIR | tr ' ' '\n'
           } | sort -u)"
  local file name missing
  for file in "$DEPLOY/systemd/weatherboard.env.example" "$DEPLOY/OPERATIONS.md"; do
    missing=""
    for name in $vars; do
      grep -qE "(^|[^A-Z_])${name}([^A-Z_]|$)" "$file" 2>/dev/null || missing+=" $name"
    done
    if [ -z "$missing" ]; then pass "env: all $(wc -w <<<"$vars") variables documented in ${file#"$ROOT"/}"
    else fail "env: ${file#"$ROOT"/} does not mention:$missing"; fi
  done
  # The example must be loadable as a systemd EnvironmentFile: only comments, blanks and KEY=value lines.
  local bad
  bad="$(grep -nvE '^(#.*|[[:space:]]*|[A-Z][A-Z0-9_]*=.*)$' "$DEPLOY/systemd/weatherboard.env.example")"
  if [ -z "$bad" ]; then pass "env: weatherboard.env.example is KEY=value / comments only"
  else fail "env: weatherboard.env.example has malformed lines" "$bad"; fi
}

# ---------------------------------------------------------------- nginx
lint_nginx() {
  if ! ensure nginx nginx; then fail "nginx: nginx not available"; return; fi
  if ! ensure openssl openssl; then fail "nginx: openssl not available"; return; fi
  local dir="$TMP/nginx"
  mkdir -p "$dir/logs" "$dir/tmp"
  if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
         -subj "/CN=api.weatherboard.example" -keyout "$dir/privkey.pem" -out "$dir/fullchain.pem" >"$dir/openssl.log" 2>&1; then
    fail "nginx: self-signed test certificate" "$(cat "$dir/openssl.log")"; return
  fi
  # The site as shipped, with only the certificate and log paths pointed into the temp dir.
  sed -e "s#/etc/letsencrypt/live/[^/]*/fullchain.pem#$dir/fullchain.pem#" \
      -e "s#/etc/letsencrypt/live/[^/]*/privkey.pem#$dir/privkey.pem#" \
      -e "s#/var/log/nginx/#$dir/logs/#g" \
      "$DEPLOY/nginx/weatherboard.conf" >"$dir/weatherboard.conf"
  local mime=/etc/nginx/mime.types
  [ -f "$mime" ] || { echo 'types { application/json json; }' >"$dir/mime.types"; mime="$dir/mime.types"; }
  cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 64; }
http {
    include $mime;
    default_type application/octet-stream;
    access_log $dir/logs/access.log;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    include $dir/weatherboard.conf;
}
CONF
  local out rc
  out="$(nginx -t -q -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log" 2>&1)"; rc=$?
  if [ $rc -eq 0 ] && ! grep -q '\[warn\]\|\[emerg\]' <<<"$out"; then pass "nginx: nginx -t with deploy/nginx/weatherboard.conf"
  else fail "nginx: nginx -t (rc=$rc)" "$out"; fi

  # Decisions the brief pins down, so an edit cannot drop them silently.
  local conf="$DEPLOY/nginx/weatherboard.conf" missing="" pattern
  while IFS= read -r pattern; do
    [ -n "$pattern" ] || continue
    grep -qE "$pattern" "$conf" || missing+=$'\n'"$pattern"
  done <<'PATTERNS'
^\s*server 127\.0\.0\.1:8080
^\s*server 127\.0\.0\.1:8081
^\s*keepalive [0-9]+;
^\s*client_max_body_size 64k;
^\s*proxy_set_header X-Forwarded-For \$remote_addr;
^\s*proxy_set_header X-Forwarded-Proto \$scheme;
^\s*proxy_set_header Host \$host;
^\s*proxy_set_header X-Request-Id \$weatherboard_request_id;
^\s*proxy_set_header Connection "";
^\s*proxy_http_version 1\.1;
^\s*proxy_next_upstream error timeout;
Strict-Transport-Security
return 301 https://
PATTERNS
  if grep -qE '^\s*proxy_next_upstream .*non_idempotent' "$conf"; then missing+=$'\n'"proxy_next_upstream must not list non_idempotent"; fi
  if grep -qE '^\s*proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for' "$conf"; then missing+=$'\n'"X-Forwarded-For must replace, not append"; fi
  if [ -z "$missing" ]; then pass "nginx: upstreams, proxy headers, body limit, retries, HSTS, redirect"
  else fail "nginx: required settings missing or wrong" "${missing#$'\n'}"; fi
}

# ---------------------------------------------------------------- nginx, running
# The site as shipped, served by a real nginx on loopback in front of a stub upstream (a few lines of
# Python answering 200 "stub <path>"): nothing under /metrics may get through, however the path is spelled,
# and ordinary paths must reach the upstream. Uses lint_nginx's certificate; stopped (by pid) when done.
NGINX_PID=
STUB_PID=
stop_live_nginx() {
  if [ -n "$NGINX_PID" ]; then kill -QUIT "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null; NGINX_PID=; fi
  if [ -n "$STUB_PID" ]; then kill "$STUB_PID" 2>/dev/null; wait "$STUB_PID" 2>/dev/null; STUB_PID=; fi
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
lint_nginx_live() {
  local dir="$TMP/nginx" run="$TMP/nginx-live"
  if ! command -v nginx >/dev/null 2>&1 || [ ! -f "$dir/fullchain.pem" ]; then
    skip "nginx live: nginx or the test certificate is not available (see the nginx checks above)"; return
  fi
  if ! ensure curl curl; then skip "nginx live: curl not available and cannot be installed"; return; fi
  if ! command -v python3 >/dev/null 2>&1; then skip "nginx live: python3 not available for the stub upstream"; return; fi
  mkdir -p "$run/logs" "$run/tmp"
  local stub_port https_port http_port
  if ! { stub_port="$(free_port)" && https_port="$(free_port)" && http_port="$(free_port)"; }; then
    fail "nginx live: no free loopback port"; return
  fi

  # The stub upstream logs every path it is asked for; none may name /metrics.
  cat >"$run/stub.py" <<'PY'
import sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
log = open(sys.argv[2], "a", buffering=1)
class Stub(BaseHTTPRequestHandler):
    def do_GET(self):
        log.write(self.path + "\n")
        if self.path.split("?")[0] in ("/v1/stream", "/v1/moderation/stream"):
            # An event stream as the app sends it (without X-Accel-Buffering, so that nginx's own settings are
            # what is tested): the first message at once, then the response held open.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.write(b"retry: 2000\nid: 1-1\n\n")
            self.wfile.flush()
            time.sleep(3)
            return
        body = ("stub " + self.path + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Stub).serve_forever()
PY
  : >"$run/stub.log"
  python3 "$run/stub.py" "$stub_port" "$run/stub.log" 2>"$run/stub.err" &
  STUB_PID=$!

  # The shipped site with only what a throwaway run needs changed: loopback listeners on free ports (no
  # IPv6), both upstream servers pointed at the stub, the lint certificate and logs in the temp dir.
  sed -e "s#/etc/letsencrypt/live/[^/]*/fullchain.pem#$dir/fullchain.pem#" \
      -e "s#/etc/letsencrypt/live/[^/]*/privkey.pem#$dir/privkey.pem#" \
      -e "s#/var/log/nginx/#$run/logs/#g" \
      -e "s#^\(\s*\)listen 443 ssl#\1listen 127.0.0.1:$https_port ssl#" \
      -e "s#^\(\s*\)listen 80;#\1listen 127.0.0.1:$http_port;#" \
      -e '/^\s*listen \[::\]/d' \
      -e "s#^\(\s*\)server 127\.0\.0\.1:808[01] #\1server 127.0.0.1:$stub_port #" \
      -e "s#/var/lib/weatherboard/media/#$run/media/#" \
      "$DEPLOY/nginx/weatherboard.conf" >"$run/weatherboard.conf"
  # MEDIA_DIR as the app lays it out: a public image nginx must serve, a private one it must never reach.
  mkdir -p "$run/media/public" "$run/media/private"
  printf 'public-jpeg' >"$run/media/public/0123456789abcdefghijklmnop.jpg"
  printf 'private-jpeg' >"$run/media/private/0123456789abcdefghijklmnop.jpg"
  # nginx's workers (nobody, when run as root) must reach it through the temp directories.
  chmod -R a+rX "$run/media"
  chmod a+x "$TMP" "$run"
  local mime=/etc/nginx/mime.types user_line=""
  [ -f "$mime" ] || { echo 'types { application/json json; }' >"$run/mime.types"; mime="$run/mime.types"; }
  # Started as root, the workers drop to nobody (Debian has no group "nobody").
  [ "$(id -u)" = 0 ] && user_line="user nobody $(id -gn nobody 2>/dev/null || echo nogroup);"
  cat >"$run/nginx.conf" <<CONF
$user_line
daemon off;
worker_processes 1;
pid $run/nginx.pid;
error_log $run/logs/error.log warn;
events { worker_connections 64; }
http {
    include $mime;
    default_type application/octet-stream;
    access_log $run/logs/access.log;
    client_body_temp_path $run/tmp/body;
    proxy_temp_path $run/tmp/proxy;
    fastcgi_temp_path $run/tmp/fastcgi;
    uwsgi_temp_path $run/tmp/uwsgi;
    scgi_temp_path $run/tmp/scgi;
    include $run/weatherboard.conf;
}
CONF
  nginx -p "$run" -c "$run/nginx.conf" -e "$run/logs/error.log" >"$run/nginx.out" 2>&1 &
  NGINX_PID=$!

  # Wait (up to ~5 s) for both to answer.
  local _
  for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$stub_port/ready" && curl -s -o /dev/null "http://127.0.0.1:$http_port/" && break
    kill -0 "$NGINX_PID" 2>/dev/null || break
    sleep 0.1
  done
  if ! kill -0 "$NGINX_PID" 2>/dev/null || ! kill -0 "$STUB_PID" 2>/dev/null; then
    fail "nginx live: nginx or the stub did not start" "$(cat "$run/nginx.out" "$run/logs/error.log" "$run/stub.err" 2>/dev/null)"
    stop_live_nginx; return
  fi
  : >"$run/stub.log"

  # probe PATH → "status body" over HTTPS with the site's name; --path-as-is keeps //, /./ and %xx as typed.
  probe() {
    curl -sk --path-as-is --max-time 5 --resolve "api.weatherboard.example:$https_port:127.0.0.1" \
      -w '%{http_code}' -D "$run/headers" -o "$run/body" "https://api.weatherboard.example:$https_port$1" 2>/dev/null
  }
  local path status leaked="" reached=""
  for path in /metrics /metrics/ /metrics/x '/metrics?x=1' //metrics /%6detrics /%6Detrics /./metrics \
              /v1/../metrics /metrics%2F /Metrics /METRICS/x; do
    status="$(probe "$path")"
    if { [ "$status" = 404 ] || [ "$status" = 403 ]; } && ! grep -q '^stub ' "$run/body" 2>/dev/null; then :
    else leaked+=$'\n'"$path → ${status:-no answer} $(head -c 80 "$run/body" 2>/dev/null)"; fi
  done
  # The refusal looks like the app's own 404, with the headers every response carries.
  status="$(probe /metrics/)"
  grep -qi '^x-request-id: ' "$run/headers" && grep -qi '^strict-transport-security: ' "$run/headers" &&
    grep -q '"code":"not_found"' "$run/body" || leaked+=$'\n'"/metrics/ → $status without X-Request-Id, HSTS or the JSON not_found body"
  if [ -z "$leaked" ] && ! grep -qi 'metrics\|%6d' "$run/stub.log"; then
    pass "nginx live: /metrics, /metrics/, /metrics/x, /metrics?x=1, //metrics, /%6detrics, /./metrics & co. refused"
  else
    fail "nginx live: /metrics reachable through nginx" "${leaked#$'\n'}"$'\n'"upstream saw: $(tr '\n' ' ' <"$run/stub.log")"
  fi
  for path in /healthz /readyz /v1/posts '/v1/posts?limit=5' /v1/metrics /metricsx; do
    status="$(probe "$path")"
    if [ "$status" = 200 ] && grep -qxF "stub $path" "$run/body" 2>/dev/null; then :
    else reached+=$'\n'"$path → ${status:-no answer} $(head -c 80 "$run/body" 2>/dev/null)"; fi
  done
  if [ -z "$reached" ]; then pass "nginx live: /healthz, /readyz, /v1/posts… reach the upstream unchanged"
  else fail "nginx live: ordinary paths do not reach the upstream" "${reached#$'\n'}"; fi
  # /media/: the public side of MEDIA_DIR straight from disk, immutable, with an ETag and the usual headers; a
  # missing image is the JSON 404; no spelling of a path reaches the private side.
  local media_ok=""
  status="$(probe /media/0123456789abcdefghijklmnop.jpg)"
  [ "$status" = 200 ] && grep -qx 'public-jpeg' <(cat "$run/body"; echo) && grep -qi '^etag: ' "$run/headers" &&
    grep -qi '^cache-control: public, max-age=31536000, immutable' "$run/headers" && grep -qi '^x-request-id: ' "$run/headers" &&
    grep -qi '^content-type: image/jpeg' "$run/headers" || media_ok+=$'\n'"/media/<key>.jpg → $status $(head -c 80 "$run/body")"
  status="$(probe /media/missing.jpg)"
  [ "$status" = 404 ] && grep -q '"code":"not_found"' "$run/body" && grep -qi '^x-request-id: ' "$run/headers" ||
    media_ok+=$'\n'"/media/missing.jpg → $status $(head -c 80 "$run/body")"
  for path in /media/../private/0123456789abcdefghijklmnop.jpg /media/..%2fprivate/0123456789abcdefghijklmnop.jpg \
              /media/%2e%2e/private/0123456789abcdefghijklmnop.jpg /media../private/0123456789abcdefghijklmnop.jpg /media/; do
    status="$(probe "$path")"
    if grep -q 'private-jpeg' "$run/body" 2>/dev/null || [ "$status" = 200 ] && ! grep -q '^stub ' "$run/body"; then
      media_ok+=$'\n'"$path → $status $(head -c 80 "$run/body")"
    fi
  done
  if [ -z "$media_ok" ]; then pass "nginx live: /media/ serves the public images from disk (immutable, ETag); 404 JSON; private side unreachable"
  else fail "nginx live: /media/" "${media_ok#$'\n'}"; fi
  status="$(curl -s --max-time 5 -o /dev/null -w '%{http_code} %{redirect_url}' -H 'Host: api.weatherboard.example' "http://127.0.0.1:$http_port/v1/posts")"
  if [ "$status" = "301 https://api.weatherboard.example/v1/posts" ]; then pass "nginx live: plain HTTP redirects to HTTPS"
  else fail "nginx live: plain HTTP answered '$status', want a 301 to https"; fi
  # The live board's event streams pass through unbuffered: the stub sends the first message and holds the
  # response open for 3 s; curl, cut off after 1.5 s, must already have it.
  local streamed=""
  for path in '/v1/stream?weatherType=rain' /v1/moderation/stream; do
    : >"$run/body"
    curl -sk --max-time 1.5 --resolve "api.weatherboard.example:$https_port:127.0.0.1" -D "$run/headers" -o "$run/body" \
      "https://api.weatherboard.example:$https_port$path" 2>/dev/null
    grep -qx 'id: 1-1' "$run/body" && grep -qi '^content-type: text/event-stream' "$run/headers" ||
      streamed+=$'\n'"$path → nothing within 1.5 s: $(head -c 80 "$run/body" 2>/dev/null)"
  done
  if [ -z "$streamed" ]; then pass "nginx live: /v1/stream and /v1/moderation/stream reach the client unbuffered"
  else fail "nginx live: event streams held back by nginx" "${streamed#$'\n'}"; fi
  stop_live_nginx
}

# ---------------------------------------------------------------- docker
lint_docker() {
  local py=python3
  if ! "$py" -c 'import yaml' 2>/dev/null; then
    if /usr/bin/python3 -c 'import yaml' 2>/dev/null; then py=/usr/bin/python3
    elif ! { ensure /usr/bin/python3 python3 && [ "$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-yaml >/dev/null 2>&1 && py=/usr/bin/python3 && "$py" -c 'import yaml'; }; then
      fail "docker: PyYAML not available for compose.yaml"; return
    fi
  fi
  local out
  if out="$("$py" - "$DEPLOY/docker/compose.yaml" 2>&1 <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
problems = []
def need(cond, what):
    if not cond: problems.append(what)
svc = doc.get("services") or {}
db, app = svc.get("db") or {}, svc.get("app") or {}
need(str(db.get("image", "")).startswith("postgres:15"), "db.image must be postgres:15*")
need(any(str(v).split(":")[0] == "pgdata" for v in db.get("volumes", [])), "db needs the pgdata volume")
need("pgdata" in (doc.get("volumes") or {}), "top-level volumes must declare pgdata")
need("pg_isready" in str((db.get("healthcheck") or {}).get("test")), "db.healthcheck must use pg_isready")
need(((app.get("depends_on") or {}).get("db") or {}).get("condition") == "service_healthy", "app must depend on db being healthy")
cmd = " ".join(app.get("command", [])) if isinstance(app.get("command"), list) else str(app.get("command", ""))
need("migrate" in cmd and "serve" in cmd and cmd.index("migrate") < cmd.index("serve"), "app command must migrate then serve")
env = app.get("environment") or {}
need(isinstance(env, dict) and "DATABASE_URL" in env and "@db:" in str(env["DATABASE_URL"]), "app needs DATABASE_URL pointing at db")
need(str(env.get("HOST")) == "0.0.0.0", "app must listen on 0.0.0.0 inside the container")
build = app.get("build") or {}
need(build.get("dockerfile") == "deploy/docker/Dockerfile", "app.build.dockerfile must be deploy/docker/Dockerfile")
need(str(app.get("stop_grace_period", "")) in ("30s", "35s", "40s"), "app.stop_grace_period must cover the 25 s drain")
for name, s in svc.items():
    for k in s:
        need(k in {"image","build","restart","environment","volumes","healthcheck","depends_on","command","ports",
                   "stop_signal","stop_grace_period","read_only","tmpfs","security_opt","cap_drop","user","init",
                   "entrypoint","networks","env_file","logging","deploy"}, f"services.{name}: unexpected key {k!r}")
if problems:
    print("\n".join(problems)); sys.exit(1)
print(f"{len(svc)} services")
PY
)"; then pass "docker: compose.yaml parses and is well-formed ($out)"
  else fail "docker: compose.yaml" "$out"; fi

  local df="$DEPLOY/docker/Dockerfile" problems="" src
  grep -qE '^FROM swift:6\.3-bookworm AS build' "$df" || problems+=$'\n'"no 'FROM swift:6.3-bookworm AS build' stage"
  grep -qE '^FROM debian:bookworm-slim' "$df" || problems+=$'\n'"no debian:bookworm-slim runtime stage"
  grep -qE '^USER [^r0]' "$df" || problems+=$'\n'"runtime does not switch to a non-root USER"
  grep -qE '^ENV HOST=0\.0\.0\.0' "$df" || problems+=$'\n'"ENV HOST=0.0.0.0 missing"
  grep -q 'HEALTHCHECK' "$df" || problems+=$'\n'"no HEALTHCHECK"
  for pkg in libpq-dev libcurl4-openssl-dev libssl-dev pkg-config libpq5 libcurl4 libssl3 ca-certificates tzdata; do
    grep -qE "(^|[[:space:]])$pkg([[:space:]]|$)" "$df" || problems+=$'\n'"package $pkg not installed"
  done
  # Every COPY source that is not from another stage must exist in the build context (the repo root).
  while read -r src; do
    [ -n "$src" ] || continue
    compgen -G "$ROOT/$src" >/dev/null || problems+=$'\n'"COPY source '$src' not in the repository"
  done < <(grep -E '^COPY ' "$df" | grep -v -- '--from=' | sed -E 's/^COPY +//; s/ +[^ ]+$//' | tr ' ' '\n' | grep -v '^Package.resolved\*$')
  local ignore="$DEPLOY/docker/Dockerfile.dockerignore" entry
  for entry in .build .local .git; do
    grep -qxF "$entry" "$ignore" 2>/dev/null || problems+=$'\n'"Dockerfile.dockerignore does not exclude $entry"
  done
  if [ -z "$problems" ]; then pass "docker: Dockerfile stages, packages, COPY sources, user, healthcheck, ignore file"
  else fail "docker: Dockerfile" "${problems#$'\n'}"; fi
}

# ---------------------------------------------------------------- shell
lint_shell() {
  local script out
  for script in "$DEPLOY"/*.sh "$DEPLOY/dev"; do
    [ -f "$script" ] || continue
    if out="$(bash -n "$script" 2>&1)"; then pass "shell: bash -n ${script#"$ROOT"/}"
    else fail "shell: bash -n ${script#"$ROOT"/}" "$out"; fi
  done
  if command -v shellcheck >/dev/null 2>&1; then
    for script in "$DEPLOY/backup.sh" "$DEPLOY/lint.sh" "$DEPLOY/local-postgres.sh" "$DEPLOY/local-replica.sh"; do
      if out="$(shellcheck -S warning "$script" 2>&1)"; then pass "shell: shellcheck ${script#"$ROOT"/}"
      else fail "shell: shellcheck ${script#"$ROOT"/}" "$out"; fi
    done
  else
    skip "shell: shellcheck not installed (apt-get install shellcheck)"
  fi
  # backup.sh: usage on bad invocations (exit 2), help (exit 0), and a missing file is refused before
  # anything touches a database.
  local rc1 rc2 rc3 rc4
  "$DEPLOY/backup.sh" >/dev/null 2>&1; rc1=$?
  "$DEPLOY/backup.sh" help >/dev/null 2>&1; rc2=$?
  "$DEPLOY/backup.sh" restore >/dev/null 2>&1; rc3=$?
  DATABASE_URL=postgresql://lint.invalid/none "$DEPLOY/backup.sh" restore "$TMP/no-such.dump" >/dev/null 2>&1; rc4=$?
  if [ $rc1 -eq 2 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 2 ] && [ $rc4 -eq 1 ]; then pass "shell: backup.sh usage and argument checks"
  else fail "shell: backup.sh exit codes (no args=$rc1 want 2, help=$rc2 want 0, restore w/o file=$rc3 want 2, missing file=$rc4 want 1)"; fi
}

lint_systemd
lint_env
lint_nginx
lint_nginx_live
lint_docker
lint_shell

if [ "$SKIPPED" -gt 0 ]; then
  echo "lint: $PASSED passed, $FAILED failed, $SKIPPED skipped"
else
  echo "lint: $PASSED passed, $FAILED failed"
fi
[ "$FAILED" -eq 0 ]
