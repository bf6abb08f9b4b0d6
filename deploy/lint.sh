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
#             the temp dir.
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
trap 'rm -rf "$TMP"' EXIT

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
    for key in 'DynamicUser=yes' 'ProtectSystem=strict' 'ProtectHome=yes' 'PrivateTmp=yes' 'PrivateDevices=yes' \
               'NoNewPrivileges=yes' 'CapabilityBoundingSet=' 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX' \
               'SystemCallFilter=@system-service' 'MemoryDenyWriteExecute=yes' 'LockPersonality=yes' \
               'RestrictNamespaces=yes' 'ProtectKernelTunables=yes' 'ProtectKernelModules=yes' 'ProtectKernelLogs=yes' \
               'ProtectControlGroups=yes' 'ProtectClock=yes' 'RestrictRealtime=yes' 'RestrictSUIDSGID=yes' 'UMask=0077' \
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
    for script in "$DEPLOY/backup.sh" "$DEPLOY/lint.sh"; do
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
lint_docker
lint_shell

if [ "$SKIPPED" -gt 0 ]; then
  echo "lint: $PASSED passed, $FAILED failed, $SKIPPED skipped"
else
  echo "lint: $PASSED passed, $FAILED failed"
fi
[ "$FAILED" -eq 0 ]
