"""Fault drills against a real server process and the local PostgreSQL. Prints what happened and exits
non-zero when a drill fails.

    python3 bench/drills.py BIN            (bench/drills builds the binary and calls this)

1. SIGKILL during concurrent post creation: every acknowledged post exists after a restart, and retrying
   every request with its Idempotency-Key creates no duplicate.
2. PostgreSQL restart under load: 503s during the outage, recovery without restarting the server.
3. A bad-input corpus against every endpoint: no 5xx, no crash, bounded memory.
4. Every table locked while dozens of requests wait on the database: /healthz still answers fast.
"""
import http.client, json, os, signal, socket, subprocess, sys, threading, time, uuid, urllib.request
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1]
PORT = int(os.environ.get("DRILL_PORT", "18181"))
PG = os.path.join(ROOT, "deploy", "local-postgres.sh")
DB = "weatherboard_drills"

def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout

sh(PG, "dropdb", DB); sh(PG, "createdb", DB)
URL = sh(PG, "url", DB).strip()
ENV = dict(os.environ, DATABASE_URL=URL, PORT=str(PORT), RATE_LIMITS="off", LOG_LEVEL="warning", WEATHER_PROVIDER="none", DB_POOL_SIZE="4")
sh(BIN, "migrate", env=ENV)
failures = []

def psql(sql):
    return sh("psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", URL, "-c", sql).strip()

def start():
    p = subprocess.Popen([BIN, "serve"], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/healthz", timeout=1); return p
        except Exception:
            time.sleep(0.025)
    raise SystemExit("server did not start")

def call(method, path, body=None, headers=None, timeout=10, raw=None):
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    conn.request(method, path, body=data, headers=h)
    r = conn.getresponse()
    payload = r.read()
    conn.close()
    try:
        return r.status, json.loads(payload) if payload else None
    except ValueError:
        return r.status, payload

def check(name, ok, detail):
    print(f"  [{'pass' if ok else 'FAIL'}] {name}: {detail}", flush=True)
    if not ok: failures.append(name)

def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"): return int(line.split()[1]) / 1024
    return 0

# ---- 1. SIGKILL during concurrent creates --------------------------------------------------------------
print("1. SIGKILL during concurrent post creation", flush=True)
server = start()
_, account = call("POST", "/v1/accounts")
auth = {"Authorization": "Bearer " + account["token"]}
keys = [str(uuid.uuid4()) for _ in range(400)]
acknowledged = {}
lock = threading.Lock()
def create(key):
    try:
        status, post = call("POST", "/v1/posts", {"weatherType": "rain", "category": "food", "body": "drill " + key, "regionId": "1835848"},
                            headers=dict(auth, **{"Idempotency-Key": key}), timeout=5)
        if status == 201:
            with lock: acknowledged[key] = post["id"]
    except Exception:
        pass
killer = threading.Timer(0.4, lambda: server.send_signal(signal.SIGKILL))
killer.start()
with ThreadPoolExecutor(16) as pool:
    list(pool.map(create, keys))
server.wait()
acked = dict(acknowledged)
server = start()
existing = set(psql(f"SELECT string_agg(id::text, ',') FROM posts WHERE author_id = {account['account']['id']}").split(","))
missing = [k for k, i in acked.items() if i not in existing]
check("acknowledged posts survive", not missing, f"{len(acked)} of {len(keys)} acknowledged before the kill; {len(missing)} missing after restart")
acknowledged.clear()
with ThreadPoolExecutor(16) as pool:
    list(pool.map(create, keys))
count = int(psql(f"SELECT count(*) FROM posts WHERE author_id = {account['account']['id']}"))
same = all(acknowledged.get(k) == i for k, i in acked.items())
check("retries create no duplicates", count == len(keys) and same,
      f"{count} posts for {len(keys)} keys after retrying all; earlier acknowledgements replayed with the same ids: {same}")

# ---- 2. PostgreSQL restart under load --------------------------------------------------------------------
print("2. PostgreSQL restart under load", flush=True)
stop = threading.Event()
statuses = []
def load():
    while not stop.is_set():
        try:
            s, _ = call("GET", "/v1/posts?limit=5", timeout=10)
        except Exception:
            s = -1
        with lock: statuses.append((time.time(), s))
threads = [threading.Thread(target=load) for _ in range(8)]
for t in threads: t.start()
time.sleep(1)
t0 = time.time()
sh(PG, "restart")
t1 = time.time()
time.sleep(2)
stop.set()
for t in threads: t.join()
during = [s for (t, s) in statuses if t0 <= t <= t1 + 0.5]
after = [s for (t, s) in statuses if t > t1 + 1.0]
codes = sorted(set(s for _, s in statuses))
check("503s during the outage, nothing else", set(during) <= {200, 503} and -1 not in codes and 500 not in codes,
      f"{len(statuses)} requests, status codes seen {codes}, restart took {t1 - t0:.1f} s, 503s: {sum(1 for _, s in statuses if s == 503)}")
check("recovers without a server restart", after and all(s == 200 for s in after) and server.poll() is None,
      f"{len(after)} requests after recovery, all 200: {all(s == 200 for s in after)}")

# ---- 3. Bad-input corpus --------------------------------------------------------------------------------
print("3. Bad-input corpus", flush=True)
_, acct = call("POST", "/v1/accounts")
tok = {"Authorization": "Bearer " + acct["token"]}
_, post = call("POST", "/v1/posts", {"weatherType": "rain", "category": "food", "body": "target", "regionId": "1835848"}, headers=tok)
pid = post["id"]
endpoints = [("POST", "/v1/accounts"), ("POST", "/v1/accounts/me/credentials"), ("POST", "/v1/sessions"), ("POST", "/v1/posts"),
             ("PATCH", f"/v1/posts/{pid}"), ("POST", f"/v1/posts/{pid}/reports"), ("POST", "/v1/accounts/me/blocks"),
             ("POST", f"/v1/moderation/posts/{pid}/decision"), ("POST", f"/v1/moderation/accounts/{acct['account']['id']}/ban"),
             ("GET", "/v1/posts"), ("GET", f"/v1/posts/{pid}"), ("GET", "/v1/accounts/me/posts"), ("GET", "/v1/moderation/queue")]
bodies = {
    "oversized": b'{"body":"' + b"x" * 200_000 + b'"}',
    "truncated": b'{"weatherType":"rain","body":"abc',
    "not utf-8": b'{"body":"\xff\xfe\xfa"}',
    "deeply nested": b"[" * 100_000 + b"]" * 100_000,
    "nested object": b'{"a":' * 5000 + b"1" + b"}" * 5000,
    "wrong types": json.dumps({"weatherType": 5, "category": [], "body": {}, "regionId": 1.5, "username": None, "password": True, "reason": 7, "action": {}}).encode(),
    "huge numbers": b'{"weatherType":"rain","category":"food","body":"x","location":{"lat":1e400,"lon":-1e999999}}',
    "huge integer id": b'{"accountId":"99999999999999999999999999999"}',
    "empty": b"",
    "null": b"null",
    "array": b"[1,2,3]",
    "nul bytes": b'{"body":"a\\u0000b","weatherType":"rain","category":"food","regionId":"1835848"}',
}
server_errors = []
base_rss = rss_mib(server.pid)
for method, path in endpoints:
    for name, raw in bodies.items():
        try:
            s, _ = call(method, path, headers=tok, raw=raw if method != "GET" else None, timeout=10)
        except Exception as e:
            s = f"cut off ({type(e).__name__})"
        if isinstance(s, int) and s >= 500: server_errors.append((method, path, name, s))
queries = ["?limit=" + "9" * 5000, "?cursor=" + "A" * 20000, "?weatherType=%ff%fe", "?regionId=-1", "?authorId=1e99", "?limit=-5&limit=abc",
           "?" + "&".join(f"x{i}=y" for i in range(2000))]
for q in queries:
    try:
        s, _ = call("GET", "/v1/posts" + q, headers=tok)
    except Exception as e:
        s = f"cut off ({type(e).__name__})"
    if isinstance(s, int) and s >= 500: server_errors.append(("GET", "/v1/posts", q[:30], s))
for header in [{"X-Request-Id": "x" * 100_000}, {"Authorization": "Bearer " + "a" * 100_000}, {"Accept-Language": "ko;" * 20_000}]:
    try:
        s, _ = call("GET", "/v1/posts", headers=header)
    except Exception as e:
        s = f"cut off ({type(e).__name__})"
    if isinstance(s, int) and s >= 500: server_errors.append(("GET", "/v1/posts", list(header)[0], s))
# Slow clients: 50 connections that send half a request and stall; the server must keep serving others.
slow = []
for _ in range(50):
    sock = socket.create_connection(("127.0.0.1", PORT))
    sock.sendall(b"POST /v1/posts HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"bo")
    slow.append(sock)
s, _ = call("GET", "/healthz", timeout=2)
for sock in slow: sock.close()
after_rss = rss_mib(server.pid)
alive = server.poll() is None and call("GET", "/healthz")[0] == 200
check("no 5xx for bad input", not server_errors, f"{len(endpoints) * len(bodies) + len(queries) + 3} bad requests; 5xx: {server_errors[:5]}")
check("serves during 50 stalled slow clients", s == 200, f"/healthz answered {s}")
check("alive, memory bounded", alive and after_rss < base_rss + 200, f"RSS {base_rss:.0f} MiB before, {after_rss:.0f} MiB after")

# ---- 4. Every table locked ------------------------------------------------------------------------------
print("4. Every table locked while requests wait on the database", flush=True)
locker = subprocess.Popen(["psql", "-X", "-q", URL], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
locker.stdin.write("BEGIN; LOCK TABLE posts, accounts, sessions, regions, reports IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(4); COMMIT;\n")
locker.stdin.flush()
time.sleep(0.5)
waiting = []
def blocked():
    try:
        waiting.append(call("GET", "/v1/posts", timeout=15)[0])
    except Exception:
        waiting.append(-1)
ts = [threading.Thread(target=blocked) for _ in range(40)]
for t in ts: t.start()
time.sleep(0.3)
lat = []
for _ in range(20):
    a = time.time(); st, _ = call("GET", "/healthz", timeout=5); lat.append((time.time() - a) * 1000)
for t in ts: t.join()
locker.stdin.close(); locker.wait()
check("/healthz under 250 ms while 40 requests wait on locked tables", max(lat) < 250 and st == 200,
      f"/healthz max {max(lat):.1f} ms, median {sorted(lat)[len(lat)//2]:.1f} ms; the waiting requests answered {sorted(set(waiting))}")

server.send_signal(signal.SIGTERM)
code = server.wait(timeout=30)
check("SIGTERM exits 0", code == 0, f"exit code {code}")
sh(PG, "dropdb", DB)
print(f"drills: {len(failures)} failed" + (f": {failures}" if failures else ""))
sys.exit(1 if failures else 0)
