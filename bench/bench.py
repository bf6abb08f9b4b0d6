"""weatherboard bench: wrk against the server and pgbench against PostgreSQL, side by side, on loopback.

Every figure comes from the same run on the same two cores, so a route is judged by its share of
L = 1 / (1/healthz_rps + 1/pgbench_tps): the HTTP cost plus the database cost of its own SQL.
"""
import json, os, re, signal, subprocess, sys, tempfile, threading, time, urllib.request

from common import seed_posts_sql

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1]
QUICK = os.environ.get("BENCH_QUICK") == "1"
DURATION = 3 if QUICK else 10
CONNS = 32
PORT = int(os.environ.get("BENCH_PORT", "18080"))
BASE = f"http://127.0.0.1:{PORT}"
DB = "weatherboard_bench"
RESULTS = os.path.join(ROOT, "bench", "results")
os.makedirs(RESULTS, exist_ok=True)

def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout

PG = os.path.join(ROOT, "deploy", "local-postgres.sh")
sh(PG, "dropdb", DB); sh(PG, "createdb", DB)
URL = sh(PG, "url", DB).strip()

def psql(sql):
    return sh("psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", URL, "-c", sql).strip()

# The feed needs a weather provider: the fake open-meteo, answering at once (8.5 °C feels-like, rain: `veryCold`).
fake = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "fake_weather.py"), "0", "0"], stdout=subprocess.PIPE, text=True)
fake_port = int(fake.stdout.readline().strip())
env = dict(os.environ, DATABASE_URL=URL, PORT=str(PORT), RATE_LIMITS="off", LOG_LEVEL="warning", **({"DB_POOL_SIZE": os.environ["DB_POOL_SIZE"]} if "DB_POOL_SIZE" in os.environ else {}),
           WEATHER_PROVIDER="open-meteo", WEATHER_BASE_URL=f"http://127.0.0.1:{fake_port}")
sh(BIN, "migrate", env=env)
server = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(RESULTS, "server.log"), "w"))

def rss_kb(field):
    with open(f"/proc/{server.pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0

def http(method, path, body=None, token=None):
    req = urllib.request.Request(BASE + path, method=method, data=json.dumps(body).encode() if body is not None else None)
    req.add_header("Content-Type", "application/json")
    if token: req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read() or b"null")

for _ in range(200):
    try:
        urllib.request.urlopen(BASE + "/healthz"); break
    except Exception:
        time.sleep(0.05)

def wrk(path, script=None, duration=DURATION, conns=CONNS, env_extra=None):
    args = ["wrk", "-t1", f"-c{conns}", f"-d{duration}s", "--latency"]
    if script: args += ["-s", script]
    out = subprocess.run(args + [BASE + path], capture_output=True, text=True, env=dict(os.environ, **(env_extra or {}))).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    def pct(p):
        m = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", out)
        if not m: return float("nan")
        v, unit = float(m.group(1)), m.group(2)
        return v / 1000 if unit == "us" else (v * 1000 if unit == "s" else v)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": pct(50), "p99": pct(99), "non2xx": int(non2xx.group(1)) if non2xx else 0, "raw": out}

def pgbench(sql, conns=CONNS, duration=DURATION, defines=None):
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(sql); path = f.name
    args = ["pgbench", "-n", "-M", "prepared", f"-c{conns}", "-j2", f"-T{duration}", "-f", path]
    for k, v in (defines or {}).items(): args += ["-D", f"{k}={v}"]
    # The server's own session settings (PostgresConnection): generic plans for prepared statements.
    pg_env = dict(os.environ, PGOPTIONS="-c plan_cache_mode=force_generic_plan")
    out = subprocess.run(args + [URL], capture_output=True, text=True, env=pg_env)
    m = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out.stdout)
    if not m:
        print(out.stdout, out.stderr, file=sys.stderr); return float("nan")
    return float(m.group(1))

def lua(name, text):
    path = os.path.join(tempfile.gettempdir(), f"wb-{name}.lua")
    open(path, "w").write(text); return path

rows = []
def route(name, path, sql=None, script=None, defines=None, env_extra=None):
    # The machine's speed drifts within minutes, so each database route's L uses a /healthz run made right
    # before it, next to its own wrk and pgbench runs.
    h = wrk("/healthz")["rps"] if sql and rows else None
    r = wrk(path, script, env_extra=env_extra)
    tps = pgbench(sql, defines=defines) if sql else None
    r.update(name=name, tps=tps, healthz=h)
    rows.append(r)
    print(f"  {name:<34} {r['rps']:>9.0f} req/s  p99 {r['p99']:>7.2f} ms" + (f"  pgbench {tps:>9.0f} tps" if tps else ""), file=sys.stderr, flush=True)
    return r

# ---- data: accounts and posts --------------------------------------------------------------------
anon = http("POST", "/v1/accounts")
TOKEN, ME = anon["token"], anon["account"]["id"]
# 10,000 posts, conditions on three in four (common.seed_posts_sql).
psql(seed_posts_sql(ME, 10000))
# Two images on every 'mist' post (CONTRACT §8): the list of 20 posts with 2 images each (issue #15).
psql(f"""INSERT INTO media (owner_id, post_id, position, storage_key, width, height, byte_size, preview_byte_size, blurhash, alt)
SELECT {ME}, p.id, k, md5(p.id::text || '-' || k), 2048, 1536, 412345, 41234, 'LEHV6nWB2yk8pyo0adR*.7kCMdnj', '창밖의 안개 ' || k
FROM posts p CROSS JOIN generate_series(0, 1) AS k WHERE p.weather_type = 'mist'""")
psql("ANALYZE posts"); psql("ANALYZE media")
POST_ID = psql("SELECT max(id) FROM posts")

TOKEN_HASH_SQL = f"SELECT encode(sha256(convert_to('{TOKEN}', 'UTF8')), 'hex')"
token_hash = psql(TOKEN_HASH_SQL)

SELECT_POST = open(os.path.join(ROOT, "bench", "sql", "post_by_id.sql")).read()
LIST_POSTS = open(os.path.join(ROOT, "bench", "sql", "list_posts.sql")).read()
CREATE_POST = open(os.path.join(ROOT, "bench", "sql", "create_post.sql")).read()

print(f"==> routes (wrk -t1 -c{CONNS} -d{DURATION}s; pgbench -M prepared -c{CONNS} -j2 -T{DURATION})", file=sys.stderr)
health = route("GET /healthz", "/healthz")
route("GET /readyz", "/readyz", sql="SELECT 1;\n")
route("GET /v1/posts/{id}", f"/v1/posts/{POST_ID}", sql=SELECT_POST, defines={"id": POST_ID})
route("GET /v1/posts?weatherType=rain", "/v1/posts?weatherType=rain", sql=LIST_POSTS, defines={"wt": "rain", "lim": 21})
route("GET /v1/posts?weatherType=mist (2 images each)", "/v1/posts?weatherType=mist", sql=LIST_POSTS, defines={"wt": "mist", "lim": 21})
create_lua = lua("create", f"""
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer {TOKEN}"
wrk.body = '{{"weatherType":"snow","category":"outfit","title":"패딩","body":"눈 오는 날엔 롱패딩","regionId":"1835848"}}'
""")
route("POST /v1/posts", "/v1/posts", sql=CREATE_POST, script=create_lua, defines={"author": ME, "token_hash": token_hash})
accounts_lua = lua("accounts", 'wrk.method = "POST"\n')
route("POST /v1/accounts", "/v1/accounts", script=accounts_lua,
      sql=open(os.path.join(ROOT, "bench", "sql", "create_account.sql")).read())

def route_table(H):
    print(f"| route | req/s | p99 ms | /healthz just before | pgbench tps | L = 1/(1/healthz + 1/pgbench) | share of L |")
    print(f"|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if r["tps"]:
            h = r["healthz"] or H
            L = 1 / (1 / h + 1 / r["tps"])
            print(f"| {r['name']} | {r['rps']:.0f} | {r['p99']:.2f} | {h:.0f} | {r['tps']:.0f} | {L:.0f} | {r['rps'] / L:.2f} |")
        else:
            print(f"| {r['name']} | {r['rps']:.0f} | {r['p99']:.2f} | | | | {r['rps'] / H:.2f} of healthz |")

# ---- issue #20: the hot list, and a helpful mark (a new one every request: 200 markers over every post) -------------
LIST_POSTS_HOT = open(os.path.join(ROOT, "bench", "sql", "list_posts_hot.sql")).read()
MARK_HELPFUL = open(os.path.join(ROOT, "bench", "sql", "mark_helpful.sql")).read()
markers = [http("POST", "/v1/accounts") for _ in range(200)]
marker_ids = sorted(int(m["account"]["id"]) for m in markers)
helpful_lua = lua("helpful", f"""
wrk.method = "PUT"
local tokens = {{}}
for t in string.gmatch(os.getenv("TOKENS"), "[^,]+") do table.insert(tokens, t) end
local i = 0
request = function()
  i = i + 1
  local t = tokens[(i % #tokens) + 1]
  local post = 1 + (math.floor(i / #tokens) % {int(POST_ID) - 1})
  return wrk.format(nil, "/v1/posts/" .. post .. "/helpful", {{["Authorization"] = "Bearer " .. t}})
end
""")
marker_hash = psql(f"SELECT encode(sha256(convert_to('{markers[0]['token']}', 'UTF8')), 'hex')")
FEED_FIT = open(os.path.join(ROOT, "bench", "sql", "feed_fit.sql")).read()
http("GET", "/v1/regions/1835848/weather")  # Seoul's weather in the server's memory: the feed's weather is a cache hit
def issue20_routes():
    route("GET /v1/posts?weatherType=rain&sort=hot", "/v1/posts?weatherType=rain&sort=hot", sql=LIST_POSTS_HOT, defines={"wt": "rain", "lim": 21})
    route("GET /v1/feed?regionId=1835848 (fit)", "/v1/feed?regionId=1835848", sql=FEED_FIT, defines={"wt": "rain", "band": "veryCold", "lim": 21})
    route("PUT /v1/posts/{id}/helpful (new marks)", "/v1/posts/1/helpful", sql=MARK_HELPFUL, script=helpful_lua,
          env_extra={"TOKENS": ",".join(m["token"] for m in markers)},
          defines={"token_hash": marker_hash, "amin": marker_ids[0], "amax": marker_ids[-1], "maxpost": int(POST_ID) - 1})
issue20_routes()

# BENCH_CORE=1: the core routes only (the performance floor), repeated BENCH_REPEAT times, then stop.
if os.environ.get("BENCH_CORE") == "1":
    for _ in range(int(os.environ.get("BENCH_REPEAT", "1")) - 1):
        route("GET /v1/posts/{id}", f"/v1/posts/{POST_ID}", sql=SELECT_POST, defines={"id": POST_ID})
        route("GET /v1/posts?weatherType=rain", "/v1/posts?weatherType=rain", sql=LIST_POSTS, defines={"wt": "rain", "lim": 21})
        route("GET /v1/posts?weatherType=mist (2 images each)", "/v1/posts?weatherType=mist", sql=LIST_POSTS, defines={"wt": "mist", "lim": 21})
        route("POST /v1/posts", "/v1/posts", sql=CREATE_POST, script=create_lua, defines={"author": ME, "token_hash": token_hash})
        issue20_routes()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)
    fake.kill()
    print()
    route_table(health["rps"])
    sys.exit(0)

# ---- login burst: scrypt-bound; memory bounded by the hashing threads --------------------------------
user = "bench_" + str(int(time.time()))
reg = http("POST", "/v1/accounts/me/credentials", {"username": user, "password": "bench password 123"}, token=http("POST", "/v1/accounts")["token"])
login_lua = lua("login", f"""
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{{"username":"{user}","password":"bench password 123"}}'
""")
rss_before = rss_kb("VmRSS")
health_during = {}
def health_probe():
    health_during.update(wrk("/healthz", duration=DURATION, conns=4))
t = threading.Thread(target=health_probe); t.start()
login = wrk("/v1/sessions", login_lua)
t.join()
rss_login_peak = rss_kb("VmHWM")
print(f"  POST /v1/sessions (login)          {login['rps']:>9.1f} req/s  p99 {login['p99']:>7.0f} ms; /healthz p99 during it {health_during['p99']:.2f} ms", file=sys.stderr)

# ---- moderation: report creations/s, and the queue with 10,000 open reports ---------------------------
report_lua = lua("report", f"""
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local tokens = {{}}
for t in string.gmatch(os.getenv("TOKENS"), "[^,]+") do table.insert(tokens, t) end
local i = 0
request = function()
  i = i + 1
  local t = tokens[(i % #tokens) + 1]
  local post = 1 + (i % {int(POST_ID) - 1})
  return wrk.format(nil, "/v1/posts/" .. post .. "/reports", {{["Authorization"] = "Bearer " .. t}}, '{{"reason":"spam","note":"bench"}}')
end
""")
reporters = [http("POST", "/v1/accounts")["token"] for _ in range(50)]
route("POST /v1/posts/{id}/reports", "/v1/posts/1/reports", script=report_lua, env_extra={"TOKENS": ",".join(reporters)})
psql(f"""INSERT INTO reports (post_id, reporter_id, reason, reported_title, reported_body)
SELECT p.id, NULL, 'spam', p.title, p.body FROM posts p ORDER BY p.id LIMIT 10000""")
psql("ANALYZE reports")
mod = http("POST", "/v1/accounts")
psql(f"UPDATE accounts SET role = 'moderator' WHERE id = {mod['account']['id']}")
queue_lua = lua("queue", f'wrk.headers["Authorization"] = "Bearer {mod["token"]}"\n')
open_reports = psql("SELECT count(*) FROM reports WHERE status = 'open'")
queue = route(f"GET /v1/moderation/queue ({open_reports} open)", "/v1/moderation/queue", script=queue_lua)

# ---- weather and regions (bench/weather.sh: a second instance against a fake open-meteo) -----------------
print("==> weather and regions", file=sys.stderr, flush=True)
weather_run = subprocess.run(["bash", os.path.join(ROOT, "bench", "weather.sh")], capture_output=True, text=True,
                             env=dict(os.environ, BASE_URL=BASE, DATABASE_URL=URL, SERVER_PID=str(server.pid), WEATHER_BENCH_DURATION=str(DURATION)))
weather_lines = weather_run.stdout.strip()
print(weather_lines or weather_run.stderr[-2000:], file=sys.stderr, flush=True)

# ---- scale: the list at 10k and at 1M posts ----------------------------------------------------------
scale = {}
def list_latency(label):
    r = wrk("/v1/posts?weatherType=rain", conns=8)
    scale[label] = r
    print(f"  list at {label:<6} p50 {r['p50']:.2f} ms  p99 {r['p99']:.2f} ms  ({r['rps']:.0f} req/s at 8 connections)", file=sys.stderr)
list_latency("10k")
if not QUICK:
    print("==> seeding 1,000,000 posts", file=sys.stderr)
    # Seeded posts are not live board events (sql/0024's deferred triggers would queue one per row until the commit).
    psql("ALTER TABLE posts DISABLE TRIGGER posts_stream_insert")
    psql(f"""INSERT INTO posts (author_id, region_id, weather_type, category, title, body, created_at)
    SELECT {ME}, (ARRAY[1835848,1838524,1843564,1835329,1846266])[1 + i % 5],
           (ARRAY['clearSky','fewClouds','scatteredClouds','brokenClouds','showerRain','rain','thunderStorm','snow','mist'])[1 + i % 9],
           (ARRAY['food','place','music','outfit','activity'])[1 + i % 5], NULL, 'seeded post ' || i, now()
    FROM generate_series(1, 990000) AS i""")
    psql("ALTER TABLE posts ENABLE TRIGGER posts_stream_insert")
    psql("VACUUM ANALYZE posts")
    list_latency("1M")
    plans = {}
    # The shape PostgresPostStore writes: the walked column as a range, ordered by it, then id.
    for name, where, order in [("all", "", "id DESC"),
                               ("weatherType", "AND weather_type >= 'rain' AND weather_type <= 'rain'", "weather_type, id DESC"),
                               ("category", "AND category >= 'food' AND category <= 'food'", "category, id DESC"),
                               ("regionId", "AND region_id >= 1835848 AND region_id <= 1835848", "region_id, id DESC"),
                               ("weatherType+category", "AND weather_type >= 'rain' AND weather_type <= 'rain' AND category = 'food'", "weather_type, category, id DESC"),
                               ("regionId+weatherType+category", "AND region_id >= 1835848 AND region_id <= 1835848 AND weather_type = 'rain' AND category = 'food'",
                                "region_id, weather_type, id DESC")]:
        plan = psql(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT id FROM posts WHERE status = 'visible' AND deleted_at IS NULL {where} ORDER BY {order} LIMIT 21")
        plans[name] = ("Sort" not in plan, plan.splitlines()[0])
    for name, (nosort, first) in plans.items():
        print(f"  plan {name:<30} {'no sort' if nosort else 'SORTS'}: {first}", file=sys.stderr)

# ---- account deletion (10,000 posts, 10,000 sessions, 50 reported posts kept as evidence) and one purger pass --
print("==> account deletion and the purger", file=sys.stderr)
victim = http("POST", "/v1/accounts")
VID = victim["account"]["id"]
psql(f"""INSERT INTO posts (author_id, region_id, weather_type, category, title, body)
SELECT {VID}, 1835848, 'rain', 'food', 'to delete ' || i, 'deleted with the account ' || i FROM generate_series(1, 10000) AS i""")
psql(f"""INSERT INTO sessions (account_id, token_hash, token_prefix)
SELECT {VID}, encode(sha256(convert_to('bench-delete-' || i, 'UTF8')), 'hex'), 'wb_bench' FROM generate_series(1, 10000) AS i""")
psql(f"""INSERT INTO reports (post_id, reporter_id, reason, reported_title, reported_body)
SELECT id, {ME}, 'spam', title, body FROM posts WHERE author_id = {VID} ORDER BY id LIMIT 50""")
psql("ANALYZE")
total_posts = psql("SELECT count(*) FROM posts")
t0 = time.perf_counter()
http("DELETE", "/v1/accounts/me", token=victim["token"])
delete_ms = (time.perf_counter() - t0) * 1000
kept = psql(f"SELECT count(*) FROM posts WHERE author_id = {VID}")
print(f"  DELETE /v1/accounts/me: {delete_ms:.0f} ms ({total_posts} posts in the table; {kept} kept as evidence)", file=sys.stderr)
psql("""INSERT INTO idempotency_keys (scope, key, request_hash, created_at)
SELECT 'bench', md5(i::text), '', now() - interval '25 hours' FROM generate_series(1, 100000) AS i""")
psql("""INSERT INTO rate_limits (bucket, hits, expires_at)
SELECT 'bench:' || i, ARRAY[1::int8], now() - interval '1 minute' FROM generate_series(1, 100000) AS i""")
psql(f"""INSERT INTO sessions (account_id, token_hash, token_prefix, revoked_at)
SELECT {ME}, encode(sha256(convert_to('bench-revoked-' || i, 'UTF8')), 'hex'), 'wb_bench', now() - interval '2 days' FROM generate_series(1, 10000) AS i""")
psql("ANALYZE")
t0 = time.perf_counter()
purge_out = sh(BIN, "purge", env=env).strip()
purge_ms = (time.perf_counter() - t0) * 1000
print(f"  one purger pass (weatherboard purge, process start included): {purge_ms:.0f} ms: {purge_out}", file=sys.stderr)

peak = rss_kb("VmHWM")
server.send_signal(signal.SIGTERM)
code = server.wait(timeout=30)
fake.kill()

# ---- table ------------------------------------------------------------------------------------------------
H = health["rps"]
print()
route_table(H)
print()
print(f"- logins: {login['rps']:.1f}/s, p99 {login['p99']:.0f} ms (scrypt N=2^17, 2 hashing threads); /healthz p99 during the burst {health_during['p99']:.2f} ms")
print(f"- server RSS: before the login burst {rss_before/1024:.0f} MiB, peak after it {rss_login_peak/1024:.0f} MiB (bound: base + 2 × 128 MiB scrypt), peak overall {peak/1024:.0f} MiB")
if "1M" in scale:
    a, b = scale["10k"], scale["1M"]
    print(f"- list `weatherType=rain` at 10k posts: p50 {a['p50']:.2f} ms, p99 {a['p99']:.2f} ms; at 1M: p50 {b['p50']:.2f} ms, p99 {b['p99']:.2f} ms "
          f"(×{b['p50']/a['p50']:.2f} p50, ×{b['p99']/a['p99']:.2f} p99)")
print()
print("Weather and regions (bench/weather.sh, exit %d):" % weather_run.returncode)
print("```")
print(weather_lines)
print("```")
print(f"- account deletion with 10,000 posts and 10,000 sessions ({total_posts} posts in the table): {delete_ms:.0f} ms")
print(f"- one purger pass over 100,000 expired idempotency keys, 100,000 expired rate-limit buckets, 10,000 revoked sessions: {purge_ms:.0f} ms ({purge_out})")
errors = sum(r["non2xx"] for r in rows)
print(f"- non-2xx responses during the route runs: {errors}; server exit code after SIGTERM: {code}")
json.dump({"rows": [{k: v for k, v in r.items() if k != "raw"} for r in rows], "login": {k: v for k, v in login.items() if k != "raw"},
           "scale": {k: {kk: vv for kk, vv in v.items() if kk != "raw"} for k, v in scale.items()}, "peak_rss_kb": peak},
          open(os.path.join(RESULTS, "latest.json"), "w"), indent=1)
