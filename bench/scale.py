"""weatherboard scale bench: every list shape, for every kind of reader, at 10k, 1M and 10M posts.

    bench/scale BIN                       (bench/scale builds the release binary and calls this)
    SCALE_SIZES=10000,1000000 bench/scale  the sizes to measure (default 10k, 1M, 10M)

PostgreSQL runs with its default settings (jit on, jit_above_cost 100000; the local cluster only sets
shared_buffers = 256MB). The board grows in place (bench/sql/seed_scale.sql), so every size is measured on the
same server and database. Each shape runs `wrk -t1 -c16` for SCALE_SECONDS (5) seconds, after a /healthz run of
its own; the ratio against 10k is printed raw and with /healthz's drift taken out (the machine's speed changes
within minutes). The issue's floor: every shape keeps >= 0.9 of its 10k throughput.
"""
import json, os, re, signal, subprocess, sys, time, urllib.request

from common import http_json  # noqa: E402
from common import wrk as common_wrk

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1]
SIZES = [int(s) for s in os.environ.get("SCALE_SIZES", "10000,1000000,10000000").split(",")]
SECONDS = int(os.environ.get("SCALE_SECONDS", "5"))
CONNS = 16
PORT = int(os.environ.get("BENCH_PORT", "18090"))
BASE = f"http://127.0.0.1:{PORT}"
DB = "weatherboard_scale"
RESULTS = os.path.join(ROOT, "bench", "results")
os.makedirs(RESULTS, exist_ok=True)
PG = os.path.join(ROOT, "deploy", "local-postgres.sh")


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


def log(*a):
    print(*a, file=sys.stderr, flush=True)


sh(PG, "dropdb", DB)
sh(PG, "createdb", DB)
URL = sh(PG, "url", DB).strip()


def psql(sql):
    return sh("psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", URL, "-c", sql).strip()


fake = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "fake_weather.py"), "0", "0"], stdout=subprocess.PIPE, text=True)
fake_port = int(fake.stdout.readline().strip())
env = dict(os.environ, DATABASE_URL=URL, PORT=str(PORT), RATE_LIMITS="off", LOG_LEVEL="warning", WEATHER_PROVIDER="open-meteo",
           WEATHER_BASE_URL=f"http://127.0.0.1:{fake_port}")
sh(BIN, "migrate", env=env)
server = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(RESULTS, "scale-server.log"), "w"))


def http(method, path, body=None, token=None):
    return http_json(BASE, method, path, body, token)


for _ in range(400):
    try:
        urllib.request.urlopen(BASE + "/healthz")
        break
    except Exception:
        time.sleep(0.05)


def wrk(path, token=None):
    return common_wrk(BASE + path, CONNS, SECONDS, token)


# ---- readers ---------------------------------------------------------------------------------------------
me = http("POST", "/v1/accounts")
member = http("POST", "/v1/accounts")
moderator = http("POST", "/v1/accounts")
psql(f"UPDATE accounts SET role = 'moderator' WHERE id = {moderator['account']['id']}")
ME = me["account"]["id"]
SEOUL = psql("SELECT id FROM regions ORDER BY population DESC, id LIMIT 1")


def grow(target):
    t0 = time.time()
    sh("psql", "-X", "-q", "-v", f"target={target}", "-v", f"me={ME}", "-f", os.path.join(ROOT, "bench", "sql", "seed_scale.sql"), URL)
    log(f"==> {target:,} posts ({time.time() - t0:.0f} s to seed)")


grow(SIZES[0])
AUTHOR = psql("SELECT id FROM accounts WHERE display_name = 'scale-author-500'")
# The member blocks ten authors; the moderator blocks one (CONTRACT §3: blocks hold for staff).
for a in psql("SELECT id FROM accounts WHERE display_name LIKE 'scale-author-%' ORDER BY id LIMIT 10").split():
    http("POST", "/v1/accounts/me/blocks", {"accountId": a}, token=member["token"])
http("POST", "/v1/accounts/me/blocks", {"accountId": AUTHOR}, token=moderator["token"])
# 2,000 open reports on 1,000 posts (the queue's size does not grow with the board).
psql(f"""INSERT INTO reports (post_id, reporter_id, reason, reported_title, reported_body)
SELECT p.id, r.id, 'spam', p.title, p.body FROM (SELECT id, title, body FROM posts ORDER BY id LIMIT 1000) p
CROSS JOIN (SELECT id FROM accounts WHERE display_name IN ('scale-author-1', 'scale-author-2')) r""")
psql("ANALYZE reports")

FILTERS = [("no filter", ""), ("weatherType", "weatherType=rain"), ("category", "category=food"), ("regionId", f"regionId={SEOUL}"),
           ("authorId", f"authorId={AUTHOR}"), ("weatherType+category", "weatherType=rain&category=food"),
           ("regionId+weatherType", f"regionId={SEOUL}&weatherType=rain")]
READERS = [("anonymous", None), ("member", member["token"]), ("moderator", moderator["token"])]


def shapes():
    out = []
    for reader, token in READERS:
        for name, q in FILTERS:
            out.append((f"{reader}, {name}", "/v1/posts?" + q, token))
        out.append((f"{reader}, feed (fit)", f"/v1/feed?regionId={SEOUL}", token))
        out.append((f"{reader}, sort=hot", "/v1/posts?sort=hot", token))
        out.append((f"{reader}, outfit posts (fit)", f"/v1/regions/{SEOUL}/outfit", token))
        # The second page of the unfiltered list, from the first page's cursor.
        cursor = http("GET", "/v1/posts", token=token)["nextCursor"]
        out.append((f"{reader}, no filter, page 2", f"/v1/posts?cursor={cursor}", token))
    out.append(("my posts (a tenth of the board)", "/v1/accounts/me/posts", me["token"]))
    out.append(("moderator queue (1,000 posts, 2,000 reports)", "/v1/moderation/queue", moderator["token"]))
    post = psql("SELECT max(id) FROM posts WHERE status = 'visible' AND deleted_at IS NULL")
    out.append(("one post", f"/v1/posts/{post}", None))
    return out


results = {}
for i, size in enumerate(SIZES):
    if i > 0:
        grow(size)
    health = wrk("/healthz")[0]
    log(f"  /healthz {health:,.0f} req/s")
    for name, path, token in shapes():
        h = wrk("/healthz")[0]
        rps, p99, bad = wrk(path, token)
        results.setdefault(name, {})[size] = {"rps": rps, "p99": p99, "non2xx": bad, "healthz": h}
        log(f"  {size:>10,}  {name:<46} {rps:>8,.0f} req/s  p99 {p99:>7.2f} ms  /healthz {h:>7,.0f}" + (f"  NON-2XX {bad}" if bad else ""))

server.send_signal(signal.SIGTERM)
server.wait(timeout=30)
fake.kill()

base = SIZES[0]
head = "| shape | " + " | ".join(f"{s:,} req/s" for s in SIZES) + " | " + " | ".join(f"{s:,} / {base:,} (drift-corrected)" for s in SIZES[1:]) + " |"
print(head)
print("|---|" + "---:|" * (len(SIZES) + len(SIZES) - 1))
worst = 9.9
for name, by in results.items():
    cells = [f"{by[s]['rps']:,.0f}" for s in SIZES if s in by]
    ratios = []
    for s in SIZES[1:]:
        if s in by and base in by:
            raw = by[s]["rps"] / by[base]["rps"]
            corrected = raw * by[base]["healthz"] / by[s]["healthz"]
            worst = min(worst, corrected)
            ratios.append(f"×{raw:.2f} ({corrected:.2f})")
    print(f"| {name} | " + " | ".join(cells + ratios) + " |")
print()
print(f"- worst drift-corrected ratio: ×{worst:.2f}; non-2xx responses: {sum(v['non2xx'] for by in results.values() for v in by.values())}")
json.dump(results, open(os.path.join(RESULTS, "scale.json"), "w"), indent=1)
