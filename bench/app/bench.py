"""The app's own requests (issue #33): each read shape with no token, with an anonymous account's token, and with a
registered member's token who blocks 50 accounts, side by side in one run.

    bench/app/run            (release build, local PostgreSQL with its default settings, ~6 minutes)

Every iOS client sends a token on every request, so the token-less read that bench/run quotes is almost none of the
real traffic. Shapes: GET a post, the list (`weatherType=rain`), the feed (fit, Seoul), the outfit posts (Seoul), a
post's replies, and the inbox (a token only: its twin is the replies list). For each shape and reader:

- `wrk -t1 -c32` on the route, after a `/healthz` run of its own, as bench/bench.py does;
- `pgbench -M prepared -c32 -j2` with exactly the statements the server ran for that request, captured from a second
  server instance with `log_statement = all` (their `$n` parameters become pgbench variables with the logged values,
  so pgbench runs them as the server does: prepared, with the server's generic plans);
- L = 1/(1/healthz + 1/pgbench) and the route's share of it, and its req/s against the token-less twin's.

Seed: 10,000 posts by 100 authors (conditions on three in four, as bench/bench.py), 20 replies on each of the newest
500 posts, 200 replies to each reader's own posts (the inbox), the member's 50 blocks among the authors, and 100,000
more accounts with a session each (every install has one).
"""
import json, os, re, signal, statistics, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import PG, RESULTS, ROOT, fresh_database, log, logged_statements, seed_posts_sql, sh, start_server, stop_server  # noqa: E402
from common import wrk as common_wrk  # noqa: E402

BIN = sys.argv[1]
DURATION = int(os.environ.get("APP_SECONDS", "10"))
ROUNDS = int(os.environ.get("APP_ROUNDS", "1"))
CONNS = 32
PORT = int(os.environ.get("BENCH_PORT", "18090"))
BASE = f"http://127.0.0.1:{PORT}"
DB = "weatherboard_app_bench"
URL, psql = fresh_database(DB)

fake = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "fake_weather.py"), "0", "0"], stdout=subprocess.PIPE, text=True)
fake_port = int(fake.stdout.readline().strip())
ENV = dict(os.environ, DATABASE_URL=URL, RATE_LIMITS="off", LOG_LEVEL="warning",
           WEATHER_PROVIDER="open-meteo", WEATHER_BASE_URL=f"http://127.0.0.1:{fake_port}")
sh(BIN, "migrate", env=ENV)


def start(port):
    return start_server(BIN, ENV, port)


stop = stop_server


def http(method, path, body=None, token=None, base=BASE, expect=None):
    req = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body is not None else None)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req) as r:
        if expect and r.status != expect:
            raise RuntimeError(f"{method} {path}: {r.status}")
        return json.loads(r.read() or b"null")


server = start(PORT)

# ---- seed ---------------------------------------------------------------------------------------------------------
authors = [http("POST", "/v1/accounts")["account"]["id"] for _ in range(100)]
anon = http("POST", "/v1/accounts")
member_anon = http("POST", "/v1/accounts")
username = f"app_bench_{int(time.time())}"
member = http("POST", "/v1/accounts/me/credentials", {"username": username, "password": "app bench password 123"}, token=member_anon["token"])
member["account"] = member_anon["account"]
for a in authors[:50]:
    http("POST", "/v1/accounts/me/blocks", {"accountId": str(a)}, token=member["token"])
A0 = authors[0]
psql("ALTER TABLE posts DISABLE TRIGGER posts_stream_insert")
psql(seed_posts_sql(f"(ARRAY[{','.join(map(str, authors))}])[1 + i % 100]", 10000))
# Each reader's own posts (10 each), answered by the authors: the inbox.
for reader in (anon, member):
    psql(f"""INSERT INTO posts (author_id, region_id, weather_type, category, title, body)
    SELECT {reader['account']['id']}, 1835848, 'rain', 'food', 'my post ' || i, '내 글 ' || i FROM generate_series(1, 10) AS i""")
psql("ALTER TABLE posts ENABLE TRIGGER posts_stream_insert")
psql("ALTER TABLE replies DISABLE TRIGGER replies_stream_insert")
psql(f"""INSERT INTO replies (post_id, post_author_id, author_id, body, status)
SELECT p.id, p.author_id, (ARRAY[{','.join(map(str, authors))}])[1 + (p.id + k) % 100], '답글 ' || k, 'visible'
FROM (SELECT id, author_id FROM posts WHERE author_id <> ALL (ARRAY[{anon['account']['id']}, {member['account']['id']}]) ORDER BY id DESC LIMIT 500) p
CROSS JOIN generate_series(1, 20) AS k""")
psql(f"""INSERT INTO replies (post_id, post_author_id, author_id, body, status)
SELECT p.id, p.author_id, (ARRAY[{','.join(map(str, authors))}])[1 + (p.id + k) % 100], '내 글에 답글 ' || k, 'visible'
FROM (SELECT id, author_id FROM posts WHERE author_id = ANY (ARRAY[{anon['account']['id']}, {member['account']['id']}])) p
CROSS JOIN generate_series(1, 20) AS k""")
psql("ALTER TABLE replies ENABLE TRIGGER replies_stream_insert")
# Every install of the app makes an account with a session: 100,000 of them, so the session check reads `sessions` and
# `accounts` by key as on a live board (with the readers' few rows alone, its generic plan hashed both tables).
psql("""INSERT INTO accounts (display_name) SELECT '익명 ' || i FROM generate_series(1, 100000) AS i""")
psql("""INSERT INTO sessions (account_id, token_hash, token_prefix)
SELECT id, encode(sha256(('seed ' || id)::bytea), 'hex'), 'wb_seed' FROM accounts WHERE display_name LIKE '익명 %'""")
psql("VACUUM ANALYZE")
POST_ID = psql("SELECT max(id) FROM posts WHERE author_id <> ALL (ARRAY[%s, %s])" % (anon['account']['id'], member['account']['id']))
REPLIED = psql("SELECT max(post_id) FROM replies WHERE post_author_id <> ALL (ARRAY[%s, %s])" % (anon['account']['id'], member['account']['id']))

# A post by an author the member does not block (blocks take `authors[:50]`), for the helpful marks.
MARKED = psql(f"SELECT max(id) FROM posts WHERE author_id = {authors[99]}")
SHAPES = [
    ("GET /v1/posts/{id}", f"/v1/posts/{POST_ID}"),
    ("GET /v1/posts?weatherType=rain", "/v1/posts?weatherType=rain"),
    ("GET /v1/feed?regionId=1835848", "/v1/feed?regionId=1835848"),
    ("GET /v1/regions/1835848/outfit", "/v1/regions/1835848/outfit"),
    ("GET /v1/posts/{id}/replies", f"/v1/posts/{REPLIED}/replies"),
    ("GET /v1/accounts/me/inbox", "/v1/accounts/me/inbox"),
    # Writes (a token only; no token-less twin): repeatable ones, so every request does the same work. A helpful mark
    # after the first is a no-op insert; the inbox marker moves to the reader's newest reply and stays there.
    ("PUT /v1/posts/{id}/helpful", f"/v1/posts/{MARKED}/helpful"),
    ("POST /v1/accounts/me/inbox/read", "/v1/accounts/me/inbox/read"),
]
READERS = [("no token", None), ("anonymous account", anon["token"]), ("member, 50 blocks", member["token"])]
# The newest reply in each reader's inbox: the marker's `upTo`.
NEWEST = {token: psql(f"SELECT max(id) FROM replies WHERE post_author_id = {account['account']['id']}") for token, account in
          ((anon["token"], anon), (member["token"], member))}


def request_of(shape, token):
    """The method and JSON body of `shape` for the reader of `token`."""
    method = shape.split(" ", 1)[0]
    body = {"upTo": str(NEWEST[token])} if shape.endswith("/inbox/read") else None
    return method, body


ONLY = os.environ.get("APP_ONLY")  # a regular expression: the shapes to run (all by default)


def cases():
    for shape, path in SHAPES:
        if ONLY and not re.search(ONLY, shape):
            continue
        for reader, token in READERS:
            if token is None and ("inbox" in path or not shape.startswith("GET")):
                continue
            yield shape, path, reader, token


# ---- the statements each request runs: captured with log_statement = all from a second instance -------------------
# A new pool connection's settings, the term filter's list, the live board's listener: not the request's.
IGNORED = ("SET ", "LISTEN", "SELECT term FROM blocked_terms")


def capture():
    log_file = os.path.join(os.path.dirname(sh(PG, "psql", "-A", "-t", "-c", "SHOW data_directory").strip()), "log", "postgres.log")
    sh(PG, "psql", "-c", f"ALTER DATABASE {DB} SET log_statement = 'all'")
    port = PORT + 1
    base = f"http://127.0.0.1:{port}"
    captured = {}
    p = start(port)
    try:
        for shape, path, reader, token in cases():
            method, body = request_of(shape, token)
            http(method, path, body, token=token, base=base)  # warm: caches, prepared statements
            time.sleep(0.3)
            offset = os.path.getsize(log_file)
            http(method, path, body, token=token, base=base)
            time.sleep(0.5)
            with open(log_file, encoding="utf-8", errors="replace") as f:
                f.seek(offset)
                got = logged_statements(f.read())
            captured[(shape, reader)] = [(sql, params) for pid, sql, params in got
                                         if not sql.startswith(IGNORED) and "FROM stream_events" not in sql and "pg_current_wal" not in sql
                                         and not re.match(r"(BEGIN|COMMIT|ROLLBACK)\b", sql.strip())]
    finally:
        stop(p)
        sh(PG, "psql", "-c", f"ALTER DATABASE {DB} RESET log_statement")
    return captured


def pgbench_file(statements, transaction=False):
    """The statements as a pgbench script: `$n` of statement i as `:s<i>p<n>`, with -D values from the log; a write's
    in one transaction, as the server runs them."""
    lines, defines = (["BEGIN;"] if transaction else []), {}
    for i, (sql, params) in enumerate(statements):
        text = re.sub(r"\$(\d+)", lambda m: f":s{i}p{m.group(1)}", sql.strip().rstrip(";"))
        lines.append(text + ";")
        for n, v in params.items():
            defines[f"s{i}p{n}"] = "" if v is None else v
    if transaction:
        lines.append("COMMIT;")
    return "\n".join(lines) + "\n", defines


def wrk(path, token=None, method="GET", body=None):
    rps, _, non2xx = common_wrk(BASE + path, CONNS, DURATION, token, method, body)
    return rps, non2xx


def pgbench(script, defines, duration=DURATION):
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
        path = f.name
    args = ["pgbench", "-n", "-M", "prepared", f"-c{CONNS}", "-j2", f"-T{duration}", "-f", path]
    for k, v in defines.items():
        args += ["-D", f"{k}={v}"]
    # The server's own session settings (PostgresConnection): generic plans, no JIT.
    out = subprocess.run(args + [URL], capture_output=True, text=True, env=dict(os.environ, PGOPTIONS="-c plan_cache_mode=force_generic_plan -c jit=off"))
    m = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out.stdout)
    if not m:
        log(out.stdout[-2000:], out.stderr[-2000:])
        return float("nan")
    return float(m.group(1))


for shape, path, reader, token in cases():
    method, body = request_of(shape, token)
    http(method, path, body, token=token, expect=200)
statements = capture()
for (shape, reader), st in statements.items():
    log(f"  {shape} · {reader}: {len(st)} statements")

if os.environ.get("APP_EXPLAIN"):
    # APP_EXPLAIN=1: each shape's statements EXPLAINed (ANALYZE, BUFFERS) with the logged values, as the server plans
    # them (generic plans), before the rounds.
    for (shape, reader), st in statements.items():
        for i, (sql, params) in enumerate(st):
            values = ", ".join("NULL" if v is None else "'" + v.replace("'", "''") + "'" for _, v in sorted(params.items(), key=lambda kv: int(kv[0])))
            plan = sh("psql", URL, "-X", "-q", "-c", "SET plan_cache_mode = force_generic_plan", "-c", f"PREPARE s AS {sql.strip().rstrip(';')}",
                      "-c", f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) EXECUTE s{f'({values})' if values else ''}")
            buffers = re.findall(r"Buffers: shared hit=(\d+)", plan)
            log(f"  {shape} · {reader} · statement {i + 1}: {buffers[0] if buffers else '?'} buffers (top node)")
            if os.environ.get("APP_EXPLAIN") == "full":
                log(plan)

if os.environ.get("APP_DUMP"):
    # APP_DUMP=dir: each shape's statements with the logged values written in, one file a shape (for psql or pgbench).
    os.makedirs(os.environ["APP_DUMP"], exist_ok=True)
    for (shape, reader), st in statements.items():
        name = re.sub(r"[^a-z0-9]+", "_", f"{shape} {reader}".lower()).strip("_")
        with open(os.path.join(os.environ["APP_DUMP"], name + ".sql"), "w") as f:
            for sql, params in st:
                text = re.sub(r"\$(\d+)", lambda m: "NULL" if params.get(int(m.group(1))) is None else "'" + params[int(m.group(1))].replace("'", "''") + "'", sql.strip().rstrip(";"))
                f.write(text + ";\n")

results = {}
try:
    for rnd in range(ROUNDS):
        log(f"==> round {rnd + 1} of {ROUNDS} (wrk -t1 -c{CONNS} -d{DURATION}s; pgbench -M prepared -c{CONNS} -j2 -T{DURATION})")
        for shape, path, reader, token in cases():
            healthz, _ = wrk("/healthz")
            method, body = request_of(shape, token)
            rps, non2xx = wrk(path, token, method, body)
            script, defines = pgbench_file(statements[(shape, reader)], transaction=method != "GET")
            tps = pgbench(script, defines)
            L = 1 / (1 / healthz + 1 / tps)
            results.setdefault((shape, reader), []).append(dict(rps=rps, non2xx=non2xx, healthz=healthz, tps=tps, L=L, share=rps / L))
            log(f"  {shape:<32} {reader:<18} {rps:>8.0f} req/s  healthz {healthz:>7.0f}  pgbench {tps:>7.0f}  L {L:>7.0f}  share {rps / L:.2f}" + (f"  non-2xx {non2xx}" if non2xx else ""))
finally:
    stop(server)
    fake.kill()

stamp = time.strftime("%Y-%m-%d-%H%M")
commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
out = [f"# App shapes: token-less, an anonymous account's token, a member with 50 blocks ({stamp}, commit {commit})", "",
       f"`bench/app/run`, {ROUNDS} round(s) of {DURATION} s, medians; load at the end {os.getloadavg()[0]:.2f}.", "",
       "| shape | reader | statements | req/s | ×token-less | pgbench tps | L | share of L |", "|---|---|---:|---:|---:|---:|---:|---:|"]
for shape, path, reader, token in cases():
    rs = results[(shape, reader)]
    rps = statistics.median(r["rps"] for r in rs)
    twin = results.get((shape, "no token")) or (results.get(("GET /v1/posts/{id}/replies", "no token")) if "inbox" in shape and shape.startswith("GET") else None)
    ratio = f"×{rps / statistics.median(r['rps'] for r in twin):.2f}" if twin else "–"
    out.append(f"| {shape} | {reader} | {len(statements[(shape, reader)])} | {rps:,.0f} | {ratio} | {statistics.median(r['tps'] for r in rs):,.0f} | "
               f"{statistics.median(r['L'] for r in rs):,.0f} | {statistics.median(r['share'] for r in rs):.2f} |")
out += ["", "The inbox has no token-less twin: its ratio is against the token-less replies list. The writes have none at all;",
        "their statements are run by pgbench in one transaction each, as the server runs them.", "", "<details><summary>the statements of each request</summary>", ""]
for (shape, reader), st in statements.items():
    out.append(f"**{shape} · {reader}**")
    out.append("```sql")
    out += [re.sub(r"\s+", " ", sql).strip() + ";" for sql, _ in st]
    out.append("```")
out.append("</details>")
text = "\n".join(out) + "\n"
print(text)
open(os.path.join(RESULTS, f"app-{stamp}.md"), "w").write(text)
if os.environ.get("APP_KEEP") != "1":  # APP_KEEP=1: leave the database, to EXPLAIN its statements
    sh(PG, "dropdb", DB)
