#!/usr/bin/env python3
"""A create in a cold region does not slow the creates of other regions (issue #20, CONTRACT §9).

A create records its region's weather (`conditions`): from the cache when it is fresh, else one upstream call of
up to the provider timeout, during which the create holds no database connection. This bench makes the provider
answer in COLD_DELAY_MS (default 2000) and measures `POST /v1/posts` in a warm region (Seoul, cached) with
`wrk -t1 -c16`, first alone, then while a second client keeps COLD_CONNS (default 32) creates in flight, each in a
region never asked before (so each waits the whole delay upstream). Prints both, their ratio, and how many cold
creates were made and got conditions. The weather budgets are lifted (RATE_LIMITS=off, WEATHER_UPSTREAM_PER_MINUTE)
so every cold create really goes upstream.

    bench/cold_create.py <weatherboard binary>      (bench/run builds it; or swift build -c release)
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1]
PORT = int(os.environ.get("BENCH_PORT", "18091"))
BASE = f"http://127.0.0.1:{PORT}"
DELAY = int(os.environ.get("COLD_DELAY_MS", "2000"))
COLD_CONNS = int(os.environ.get("COLD_CONNS", "32"))
SECONDS = int(os.environ.get("COLD_SECONDS", "10"))
DB = "weatherboard_cold"
PG = os.path.join(ROOT, "deploy", "local-postgres.sh")
SEOUL = 1835848


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


sh(PG, "dropdb", DB)
sh(PG, "createdb", DB)
URL = sh(PG, "url", DB).strip()


def psql(sql):
    return sh("psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", URL, "-c", sql).strip()


fake = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "fake_weather.py"), "0", str(DELAY)], stdout=subprocess.PIPE, text=True)
fake_port = int(fake.stdout.readline().strip())
env = dict(os.environ, DATABASE_URL=URL, PORT=str(PORT), RATE_LIMITS="off", LOG_LEVEL="warning", WEATHER_PROVIDER="open-meteo",
           WEATHER_BASE_URL=f"http://127.0.0.1:{fake_port}", WEATHER_UPSTREAM_PER_MINUTE="1000000")
sh(BIN, "migrate", env=env)
server = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(400):
    try:
        urllib.request.urlopen(BASE + "/healthz")
        break
    except Exception:
        time.sleep(0.05)


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import http_json  # noqa: E402


def http(method, path, body=None, token=None):
    return http_json(BASE, method, path, body, token)


def lua(name, text):
    path = os.path.join(tempfile.gettempdir(), f"wb-{name}.lua")
    open(path, "w").write(text)
    return path


def wrk(script, conns, seconds):
    out = subprocess.run(["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--latency", "--timeout", "10s", "-s", script, BASE + "/v1/posts"],
                         capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    m = re.search(r"\s99%\s+([\d.]+)(us|ms|s)", out)
    p99 = float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)] if m else float("nan")
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, p99, int(bad.group(1)) if bad else 0


token = http("POST", "/v1/accounts")["token"]
http("GET", f"/v1/regions/{SEOUL}/weather")  # Seoul is warm from here on
cold = psql(f"SELECT string_agg(id::text, ',' ORDER BY population DESC, id) FROM (SELECT id, population FROM regions WHERE id <> {SEOUL} ORDER BY population DESC, id LIMIT 3000) r")
headers = f"""wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer {token}"
"""
warm_lua = lua("warm-create", headers + f"""wrk.body = '{{"weatherType":"snow","category":"outfit","body":"warm region","regionId":"{SEOUL}"}}'\n""")
cold_lua = lua("cold-create", headers + f"""
local regions = {{}}
for r in string.gmatch("{cold}", "[^,]+") do table.insert(regions, r) end
local i = 0
request = function()
  i = i + 1
  return wrk.format(nil, nil, nil, '{{"weatherType":"rain","category":"food","body":"cold region","regionId":"' .. regions[i] .. '"}}')
end
""")

alone = wrk(warm_lua, 16, SECONDS)
print(f"warm creates alone:            {alone[0]:8.0f} req/s  p99 {alone[1]:8.2f} ms  non-2xx {alone[2]}", flush=True)
cold_result = {}
t = threading.Thread(target=lambda: cold_result.update(r=wrk(cold_lua, COLD_CONNS, SECONDS + 4)))
t.start()
time.sleep(2)  # the cold client's first creates are all waiting upstream before the warm run starts
during = wrk(warm_lua, 16, SECONDS)
t.join()
cold_rps, cold_p99, cold_bad = cold_result["r"]
made = psql("SELECT count(*), count(conditions_band) FROM posts WHERE body = 'cold region'").split("|")
print(f"warm creates beside cold ones: {during[0]:8.0f} req/s  p99 {during[1]:8.2f} ms  non-2xx {during[2]}")
print(f"cold creates ({COLD_CONNS} in flight, provider {DELAY} ms): {cold_rps:.1f} req/s  p99 {cold_p99:.0f} ms  non-2xx {cold_bad}; "
      f"{made[0]} made, {made[1]} with conditions; upstream calls {urllib.request.urlopen(f'http://127.0.0.1:{fake_port}/__count').read().decode().strip()}")
print(f"ratio (beside / alone): {during[0] / alone[0]:.2f}")
server.send_signal(signal.SIGTERM)
server.wait(timeout=30)
fake.kill()
