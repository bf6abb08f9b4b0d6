"""Replies bench (CONTRACT §13, issue #24): the replies of a post with 10,000 replies, the inbox of an author with
100,000 replies to their posts, the list of posts with replyCount and creating a reply, at 1M posts and 10M replies
against the same routes at 10k posts and 100k replies.

    bench/replies/run                       (builds the release binary, starts the local PostgreSQL, calls this)
    REPLIES_SIZES=10000:100000,1000000:10000000   posts:replies of each board (default); the first is the baseline
    REPLIES_ROUNDS=3                         measuring rounds (each round measures every board in turn; medians reported)
    REPLIES_SECONDS=10                       seconds of each wrk and pgbench run (the /healthz run before each: half)
    REPLIES_KEEP=1                           keep the databases (dropped at the end of a successful run otherwise)
    REPLIES_QUIET=0.25, REPLIES_QUIET_WAIT=120   wait (at most that long) before each measurement until the machine's
                                             CPU use over 2 s is at most that share (others compile and test here)
    REPLIES_CREATE_WARM_SECONDS=12           the warm-up of the create route (one reply to each of its target posts)

Each board lives in its own database (wbreplies10k, wbreplies1m, …) on the local cluster with PostgreSQL's default
settings (deploy/local-postgres.sh). It is loaded with set-based statements (generate_series), ids given explicitly so
that reply i is the i-th of the series:

- accounts: 1,000 authors (`reply-author-N`), the inbox author and the replier (both made through the API, with their
  tokens);
- posts 1..P: the inbox author's are every S-th post (p % S = S/2) — 1,000 posts at P = 1M (S = 1,000), 100 at
  P = 10k (S = 100), never fewer than 100 so that the inbox's newest 101 replies are on ~100 distinct posts at every
  size (the statements look every one of them up; with 10 posts at 10k a memoized lookup made that board's inbox
  twice as cheap per request); the others by author (p % 1000); 1% hidden (reports), 0.5% deleted, spread as
  bench/sql/seed_scale.sql spreads them;
- replies 1..R: reply i goes to the hot post (P/2 + 2) when i % (R/10,000) = 7 — 10,000 replies, spread evenly over
  the whole id range, as a post answered all along; else to one of the inbox author's posts when i % 100 = 3 (1% of
  the replies: 100,000 at R = 10M, 1,000 at R = 100k), in turn; else to post 1 + (7919·i mod P), skipping the hot
  post and the inbox author's posts; written by author (31·i mod 1000); 1% hidden (reports), 0.5% deleted, none of
  them the hot post's or the inbox author's;
- `posts.reply_count`: `replies_counted` is disabled during the load; the visible replies of every post are counted
  from the same mapping into a scratch table first and written with the posts (an UPDATE of every post afterwards
  rewrites each row through the posts' ~57 indexes), then checked against count(*) of the loaded replies;
- the replies' secondary indexes (replies_post_idx, replies_inbox_idx, replies_author_idx) are dropped during the
  load and built again after it (their definitions read back from pg_indexes); `posts_stream_insert` and
  `replies_stream_insert` are disabled during the load (seeded rows are not live board events); then VACUUM ANALYZE.

Before the large board is loaded, each route runs once against the small one with log_statement = all, and the run
stops unless the route's pgbench file holds exactly the statements the server sent (parameters, literals and
whitespace aside; a new pool connection's SETs and the term filter's list, read at most every 5 s, left out): the
store's SQL changed twice while this bench was written.

Measured in ROUNDS rounds, each on fresh servers, one per board (ports BENCH_PORT + n), each route on every board in
turn (the order reversed every other round), so that a ratio compares two measurements a minute apart: a warm-up,
then `/healthz` with wrk, `wrk -t1 -c16 --latency` on the route, and `pgbench -M prepared -c16 -j2` with the route's
own statements (bench/replies/*.sql) under the server's session settings (plan_cache_mode = force_generic_plan,
jit = off); L = 1/(1/healthz + 1/pgbench) as in bench/bench.py. `uptime`'s load and the CPU use of the 2 s before are
recorded with every measurement. Medians over the rounds; ratios are medians of each round's ratio. The table goes to
stdout and bench/results/replies-<date>.md, with each statement's generic plan and buffers (EXPLAIN ANALYZE, BUFFERS).
"""
import base64, json, os, re, signal, statistics, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "bench", "replies")
BIN = sys.argv[1]
SIZES = [tuple(int(x) for x in s.split(":")) for s in os.environ.get("REPLIES_SIZES", "10000:100000,1000000:10000000").split(",")]
ROUNDS = int(os.environ.get("REPLIES_ROUNDS", "3"))
SECONDS = int(os.environ.get("REPLIES_SECONDS", "10"))
HEALTH_SECONDS = max(2, SECONDS // 2)
WARM_SECONDS = 2
# Creating replies: a warm-up long enough to reply once to every target post (10,000 at 1M posts, ~1,000 a second).
# The first reply to a post since the load reads its pages into shared_buffers and dirties them (a full-page image in
# the WAL after each checkpoint); measured cold, wrk paid that on 10,000 posts and the pgbench run right after it did
# not (round 1 of the first runs: 904-994 req/s against pgbench's 1,136-1,796 tps, then 1,458-1,621 once warm).
CREATE_WARM_SECONDS = int(os.environ.get("REPLIES_CREATE_WARM_SECONDS", "12"))
CONNS = 16
KEEP = os.environ.get("REPLIES_KEEP") == "1"
PORT = int(os.environ.get("BENCH_PORT", "18097"))  # board n's server listens on PORT + n
QUIET = float(os.environ.get("REPLIES_QUIET", "0.25"))  # the machine's CPU busy fraction (both cores) a measurement waits for
QUIET_WAIT = int(os.environ.get("REPLIES_QUIET_WAIT", "120"))  # … for at most this many seconds
PG = os.path.join(ROOT, "deploy", "local-postgres.sh")
RESULTS = os.path.join(ROOT, "bench", "results")
os.makedirs(RESULTS, exist_ok=True)
HOT_REPLIES = 10_000
DEEP_AFTER = 9_000  # the deep page: the replies after the hot post's 9,000th (page 451 of 500)


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def label(posts):
    return f"{posts // 1_000_000}m" if posts >= 1_000_000 else f"{posts // 1000}k"


def human(n):
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else (f"{n // 1000}k" if n % 1000 == 0 else str(n))


def cpu_times():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]  # total, idle + iowait


def cpu_busy(seconds):
    t0, i0 = cpu_times()
    time.sleep(seconds)
    t1, i1 = cpu_times()
    return 1 - (i1 - i0) / max(1, t1 - t0)


def wait_quiet():
    """Waits (at most QUIET_WAIT s) until the machine is quiet: other people compile here. Returns (busy, waited)."""
    t0 = time.time()
    while True:
        busy = cpu_busy(2)
        if busy <= QUIET or time.time() - t0 >= QUIET_WAIT:
            return busy, time.time() - t0


def uptime():
    out = sh("uptime").strip()
    m = re.search(r"load average:\s*([\d.]+),\s*([\d.]+),\s*([\d.]+)", out)
    return (float(m.group(1)), float(m.group(2)), float(m.group(3))) if m else (float("nan"),) * 3


class Board:
    """One board: its database, its accounts and tokens, its shapes."""

    def __init__(self, n, posts, replies):
        self.port = PORT + n
        self.base = f"http://127.0.0.1:{self.port}"
        self.server = None
        assert posts % 1000 == 0 and posts >= 10_000 and replies % HOT_REPLIES == 0 and replies % 100 == 0
        self.posts, self.replies = posts, replies
        self.name = f"{human(posts)} posts / {human(replies)} replies"
        self.db = "wbreplies" + label(posts)
        self.hot = posts // 2 + 2  # % 100 = 2: not hidden (17), not deleted (51), not a create target (1), not the inbox author's (500)
        self.hot_every = replies // HOT_REPLIES
        assert self.hot_every >= 10 and self.hot_every % 10 == 0  # i % hot_every = 7 never meets i % 100 in {3, 42} or i % 200 = 51
        self.inbox_replies = replies // 100
        self.inbox_posts = max(100, posts // 1000)
        self.stride = posts // self.inbox_posts
        self.offset = self.stride // 2  # 500 or 50: not hidden (17), deleted (51 of 200), the hot post (2) nor a create target (1)
        assert posts % self.inbox_posts == 0 and self.offset % 100 in (0, 50)
        self.url = None

    def psql(self, sql):
        return sh("psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", self.url, "-c", sql).strip()

    def env(self):
        return dict(os.environ, DATABASE_URL=self.url, PORT=str(self.port), RATE_LIMITS="off", LOG_LEVEL="warning", WEATHER_PROVIDER="none")


def start_server(board):
    board.server = subprocess.Popen([BIN, "serve"], env=board.env(), stdout=subprocess.DEVNULL,
                                    stderr=open(os.path.join(RESULTS, f"replies-server-{board.db}.log"), "a"))
    for _ in range(300):
        try:
            urllib.request.urlopen(board.base + "/healthz")
            return
        except Exception:
            time.sleep(0.05)
    raise RuntimeError("the server did not start")


def stop_server(board):
    if board.server and board.server.poll() is None:
        board.server.send_signal(signal.SIGTERM)
        board.server.wait(timeout=30)
    board.server = None


def http(board, method, path, body=None, token=None):
    req = urllib.request.Request(board.base + path, method=method, data=json.dumps(body).encode() if body is not None else None)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req) as r:
        return r.status, json.loads(r.read() or b"null")


def cursor(reply_id):
    return base64.urlsafe_b64encode(f"c1:{reply_id}".encode()).decode().rstrip("=")


# ---- load -----------------------------------------------------------------------------------------------------

def post_of(b):
    """The post of reply i (an SQL expression of i, bigint)."""
    spread = f"(1 + (i * 7919) % {b.posts})"
    return (f"CASE WHEN i % {b.hot_every} = 7 THEN {b.hot} "
            f"WHEN i % 100 = 3 THEN {b.offset} + {b.stride} * ((i / 100) % {b.inbox_posts}) "
            f"ELSE {spread} + CASE WHEN {spread} % {b.stride} = {b.offset} OR {spread} = {b.hot} THEN 1 ELSE 0 END END")


def author_of_post(b, p):
    return f"CASE WHEN {p} % {b.stride} = {b.offset} THEN {b.inbox} ELSE {b.a0} + {p} % 1000 END"


VISIBLE = "NOT (i % 100 = 42 OR i % 200 = 51)"


def load(b):
    sh(PG, "dropdb", b.db)
    sh(PG, "createdb", b.db)
    b.url = sh(PG, "url", b.db).strip()
    sh(BIN, "migrate", env=b.env())
    # The two accounts the routes are measured with, made as a client makes them.
    start_server(b)
    _, inbox = http(b, "POST", "/v1/accounts")
    _, replier = http(b, "POST", "/v1/accounts")
    stop_server(b)
    b.inbox, b.inbox_token = int(inbox["account"]["id"]), inbox["token"]
    b.replier, b.replier_token = int(replier["account"]["id"]), replier["token"]
    b.inbox_hash = b.psql(f"SELECT encode(sha256(convert_to('{b.inbox_token}', 'UTF8')), 'hex')")
    b.replier_hash = b.psql(f"SELECT encode(sha256(convert_to('{b.replier_token}', 'UTF8')), 'hex')")
    assert int(b.psql("SELECT count(*) FROM posts")) == 0 and int(b.psql("SELECT count(*) FROM replies")) == 0

    steps = []

    def step(name, sql):
        t0 = time.time()
        b.psql(sql)
        steps.append((name, time.time() - t0))
        log(f"    {name}: {time.time() - t0:.1f} s")

    log(f"==> loading {b.name} into {b.db}")
    t_all = time.time()
    step("1,000 authors", "INSERT INTO accounts (display_name) SELECT 'reply-author-' || i FROM generate_series(1, 1000) AS i")
    b.a0 = int(b.psql("SELECT min(id) FROM accounts WHERE display_name LIKE 'reply-author-%'"))
    assert int(b.psql("SELECT max(id) FROM accounts WHERE display_name LIKE 'reply-author-%'")) == b.a0 + 999
    regions = b.psql("SELECT array_agg(id ORDER BY population DESC, id) FROM (SELECT id, population FROM regions ORDER BY population DESC, id LIMIT 200) r")
    step("visible replies per post (scratch table)", f"""
        DROP TABLE IF EXISTS bench_reply_counts;
        CREATE UNLOGGED TABLE bench_reply_counts AS
        SELECT post_id, (count(*) FILTER (WHERE visible))::int AS n
        FROM (SELECT {post_of(b)} AS post_id, {VISIBLE} AS visible FROM generate_series(1::bigint, {b.replies}) AS i) g GROUP BY post_id""")
    # Seeded posts and replies are not live board events (the deferred triggers would queue one per row until the commit).
    step("disable stream triggers and replies_counted", """
        ALTER TABLE posts DISABLE TRIGGER posts_stream_insert;
        ALTER TABLE replies DISABLE TRIGGER replies_stream_insert;
        ALTER TABLE replies DISABLE TRIGGER replies_counted""")
    step(f"{b.posts:,} posts (with reply_count)", f"""
        INSERT INTO posts (id, author_id, region_id, weather_type, category, title, body, status, hidden_reason, deleted_at, deleted_by, created_at, reply_count)
        OVERRIDING SYSTEM VALUE
        SELECT i, {author_of_post(b, 'i')}, ('{regions}'::int8[])[1 + (i / 7) % 200],
               (ARRAY['clearSky','fewClouds','scatteredClouds','brokenClouds','showerRain','rain','thunderStorm','snow','mist'])[1 + i % 9],
               (ARRAY['food','place','music','outfit','activity'])[1 + (i / 9) % 5],
               CASE WHEN i % 3 = 0 THEN NULL ELSE '비 오는 날 ' || i END, '파전에 막걸리, seeded post ' || i,
               CASE WHEN i % 100 = 17 THEN 'hidden' ELSE 'visible' END, CASE WHEN i % 100 = 17 THEN 'reports' END,
               CASE WHEN i % 200 = 51 THEN now() END, CASE WHEN i % 200 = 51 THEN {b.a0} END,
               '2025-06-01'::timestamptz + make_interval(secs => i), coalesce(c.n, 0)
        FROM generate_series(1::bigint, {b.posts}) AS i LEFT JOIN bench_reply_counts c ON c.post_id = i""")
    b.index_defs = b.psql("SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'replies' AND indexname <> 'replies_pkey' ORDER BY indexname").splitlines()
    names = [re.search(r"INDEX (\S+) ON", d).group(1) for d in b.index_defs]
    assert {"replies_post_idx", "replies_inbox_idx", "replies_author_idx"} <= set(names), names
    step("drop the replies' secondary indexes", "; ".join(f"DROP INDEX {n}" for n in names))
    step(f"{b.replies:,} replies", f"""
        INSERT INTO replies (id, post_id, post_author_id, author_id, body, status, hidden_reason, deleted_at, deleted_by, created_at, updated_at)
        OVERRIDING SYSTEM VALUE
        SELECT i, g.post_id, {author_of_post(b, 'g.post_id')}, {b.a0} + (i * 31) % 1000,
               (ARRAY['저도 그렇게 생각해요', '오늘 진짜 춥네요 ㅠㅠ 롱패딩 꺼냈어요', '어디서 사셨어요?', '좋은 정보 감사합니다!', '비 오는 날엔 역시 파전에 막걸리죠'])[1 + i % 5] || ' #' || i,
               CASE WHEN i % 100 = 42 THEN 'hidden' ELSE 'visible' END, CASE WHEN i % 100 = 42 THEN 'reports' END,
               CASE WHEN i % 200 = 51 THEN now() END, CASE WHEN i % 200 = 51 THEN {b.a0} + (i * 31) % 1000 END,
               '2026-01-01'::timestamptz + make_interval(secs => i / 4.0), '2026-01-01'::timestamptz + make_interval(secs => i / 4.0)
        FROM (SELECT i, {post_of(b)} AS post_id FROM generate_series(1::bigint, {b.replies}) AS i) g""")
    for d, n in zip(b.index_defs, names):
        step(f"CREATE INDEX {n}", d)
    step("enable the triggers, identities past the seeded ids", f"""
        ALTER TABLE posts ENABLE TRIGGER posts_stream_insert;
        ALTER TABLE replies ENABLE TRIGGER replies_stream_insert;
        ALTER TABLE replies ENABLE TRIGGER replies_counted;
        SELECT setval(pg_get_serial_sequence('posts', 'id'), {b.posts});
        SELECT setval(pg_get_serial_sequence('replies', 'id'), {b.replies});
        DROP TABLE bench_reply_counts""")
    step("VACUUM ANALYZE posts", "VACUUM ANALYZE posts")
    step("VACUUM ANALYZE replies", "VACUUM ANALYZE replies")
    step("ANALYZE accounts", "ANALYZE accounts")
    b.load_seconds = time.time() - t_all
    b.steps = steps

    # What was loaded is what was meant.
    t0 = time.time()
    hot = int(b.psql(f"SELECT count(*) FROM replies WHERE post_id = {b.hot} AND status = 'visible' AND deleted_at IS NULL"))
    inbox_n = int(b.psql(f"SELECT count(*) FROM replies WHERE post_author_id = {b.inbox} AND status = 'visible' AND deleted_at IS NULL AND author_id <> post_author_id"))
    inbox_posts = int(b.psql(f"SELECT count(*) FROM posts WHERE author_id = {b.inbox}"))
    wrong_counts = int(b.psql("""SELECT count(*) FROM posts p LEFT JOIN (SELECT post_id, count(*) AS n FROM replies WHERE status = 'visible' AND deleted_at IS NULL GROUP BY post_id) c
                                 ON c.post_id = p.id WHERE p.reply_count <> coalesce(c.n, 0)"""))
    wrong_authors = int(b.psql("SELECT count(*) FROM replies r JOIN posts p ON p.id = r.post_id WHERE r.post_author_id <> p.author_id"))
    b.totals = b.psql("SELECT (SELECT count(*) FROM posts) || ' ' || (SELECT count(*) FROM replies) || ' ' || (SELECT count(*) FROM replies WHERE status = 'visible' AND deleted_at IS NULL)").split()
    b.sizes = b.psql("""SELECT string_agg(c || ' ' || pg_size_pretty(pg_relation_size(c)), ', ' ORDER BY c)
                        FROM unnest(ARRAY['posts', 'replies', 'replies_pkey', 'replies_post_idx', 'replies_inbox_idx', 'replies_author_idx']) AS c""")
    b.hot_reply_ids = [int(x) for x in b.psql(f"SELECT id FROM replies WHERE post_id = {b.hot} ORDER BY id").split()]
    log(f"    checks ({time.time() - t0:.0f} s): hot post {hot:,} replies; inbox {inbox_n:,} replies on {inbox_posts:,} posts; "
        f"reply_count wrong on {wrong_counts} posts; post_author_id wrong on {wrong_authors} replies; {b.sizes}")
    assert hot == HOT_REPLIES and inbox_n == b.inbox_replies and inbox_posts == b.inbox_posts, (hot, inbox_n, inbox_posts)
    assert wrong_counts == 0 and wrong_authors == 0
    log(f"    {b.name}: loaded in {b.load_seconds:.0f} s")


# ---- measure ---------------------------------------------------------------------------------------------------

def wrk(board, path, duration, script=None, token=None):
    args = ["wrk", "-t1", f"-c{CONNS}", f"-d{duration}s", "--latency"]
    if token:
        args += ["-H", f"Authorization: Bearer {token}"]
    if script:
        args += ["-s", script]
    out = subprocess.run(args + [board.base + path], capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    m = re.search(r"\s99%\s+([\d.]+)(us|ms|s)\b", out)
    p99 = float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)] if m else float("nan")
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {"rps": rps, "p99": p99, "non2xx": int(non2xx.group(1)) if non2xx else 0, "socket_errors": errors.group(1) if errors else ""}


PG_OPTIONS = "-c plan_cache_mode=force_generic_plan -c jit=off"  # the server's own session settings (PostgresConnection)


def pgbench(board, file, defines):
    args = ["pgbench", "-n", "-M", "prepared", f"-c{CONNS}", "-j2", f"-T{SECONDS}", "-f", os.path.join(HERE, file)]
    for k, v in defines.items():
        args += ["-D", f"{k}={v}"]
    out = subprocess.run(args + [board.url], capture_output=True, text=True, env=dict(os.environ, PGOPTIONS=PG_OPTIONS))
    m = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out.stdout)
    failed = re.search(r"number of failed transactions: (\d+)", out.stdout)
    if not m or (failed and int(failed.group(1))):
        log(out.stdout[-2000:], out.stderr[-2000:])
        raise RuntimeError(f"pgbench {file} failed")
    return float(m.group(1))


def create_script(board):
    path = os.path.join(tempfile.gettempdir(), f"wb-replies-create-{board.db}.lua")
    with open(path, "w") as f:
        f.write(f"""
local headers = {{["Content-Type"] = "application/json", ["Authorization"] = "Bearer {board.replier_token}"}}
local body = '{{"body":"저도 오늘 롱패딩 입었어요. 바람이 정말 차네요"}}'
local n = {board.posts // 100}
local i = 0
-- Posts 100·k + 1, in turn: visible ones, each taken by one request at a time (16 in flight, {board.posts // 100} posts).
request = function()
  i = i + 1
  return wrk.format("POST", "/v1/posts/" .. (100 * (i % n) + 1) .. "/replies", headers, body)
end
""")
    return path


def routes(b):
    """(key, name, path, wrk options, pgbench file, pgbench defines, check)"""
    deep_after = b.hot_reply_ids[DEEP_AFTER - 1]

    def check_page(first_id):
        def check():
            status, page = http(b, "GET", f"/v1/posts/{b.hot}/replies?limit=20" + (f"&cursor={cursor(first_id)}" if first_id else ""))
            ids = [int(r["id"]) for r in page["items"]]
            start = b.hot_reply_ids.index(first_id) + 1 if first_id else 0
            assert status == 200 and ids == b.hot_reply_ids[start:start + 20] and page["nextCursor"], (status, ids[:3])
        return check

    def check_inbox():
        status, page = http(b, "GET", "/v1/accounts/me/inbox?limit=20", token=b.inbox_token)
        assert status == 200 and len(page["items"]) == 20 and page["unreadCapped"] and page["nextCursor"], page.get("unread")
        assert all(int(r["post"]["id"]) % b.stride == b.offset for r in page["items"])
        assert len({r["post"]["id"] for r in page["items"]}) == 20  # the newest replies are on distinct posts

    def check_posts():
        status, page = http(b, "GET", "/v1/posts?limit=20")
        assert status == 200 and len(page["items"]) == 20 and all("replyCount" in p for p in page["items"])
        assert sum(p["replyCount"] for p in page["items"]) > 0

    def check_create():
        status, reply = http(b, "POST", f"/v1/posts/{b.posts - 99}/replies", {"body": "확인용 댓글"}, token=b.replier_token)
        assert status == 201 and int(reply["postId"]) == b.posts - 99

    replies_sql = {"pid": b.hot, "lim": 21}
    return [
        ("page1", f"replies of the {HOT_REPLIES:,}-reply post, page 1", f"/v1/posts/{b.hot}/replies?limit=20", {},
         "list_replies.sql", dict(replies_sql, after=0), check_page(None)),
        ("deep", f"the same, page {DEEP_AFTER // 20 + 1} (cursor after reply {DEEP_AFTER:,})", f"/v1/posts/{b.hot}/replies?limit=20&cursor={cursor(deep_after)}", {},
         "list_replies.sql", dict(replies_sql, after=deep_after), check_page(deep_after)),
        ("inbox", f"inbox page 1 ({b.inbox_replies:,} replies on the author's {b.inbox_posts:,} posts)", "/v1/accounts/me/inbox?limit=20", {"token": b.inbox_token},
         "inbox.sql", {"token_hash": b.inbox_hash, "me": b.inbox, "lim": 21}, check_inbox),
        ("posts", "GET /v1/posts?limit=20 (replyCount)", "/v1/posts?limit=20", {},
         "list_posts.sql", {"lim": 21}, check_posts),
        ("create", "POST /v1/posts/{id}/replies", "/v1/posts/1/replies", {"script": create_script(b)},
         "create_reply.sql", {"token_hash": b.replier_hash, "me": b.replier, "nposts": b.posts}, check_create),
    ]


def measure(boards, round_no, results):
    """One round: every route on every board in turn, the boards' order reversed every other round, so that a ratio
    compares two measurements a minute apart (the machine's speed drifts, and other people compile here)."""
    for b in boards:
        start_server(b)
    try:
        log(f"==> round {round_no} (wrk -t1 -c{CONNS} -d{SECONDS}s after /healthz -d{HEALTH_SECONDS}s; pgbench -M prepared -c{CONNS} -j2 -T{SECONDS})")
        order = boards if round_no % 2 else boards[::-1]
        for n in range(len(routes(boards[0]))):
            for b in order:
                key, name, path, opts, sql, defines, check = routes(b)[n]
                check()
                wrk(b, path, CREATE_WARM_SECONDS if key == "create" else WARM_SECONDS, **opts)  # warm-up: statements prepared, pages in cache
                busy, waited = wait_quiet()
                load = uptime()
                health = wrk(b, "/healthz", HEALTH_SECONDS)["rps"]
                r = wrk(b, path, SECONDS, **opts)
                tps = pgbench(b, sql, defines)
                L = 1 / (1 / health + 1 / tps)
                r.update(load=load, busy=busy, waited=waited, health=health, tps=tps, L=L, share=r["rps"] / L)
                results.setdefault(b.db, {}).setdefault(key, []).append(r)
                log(f"  load {load[0]:5.2f} busy {busy:4.0%} (waited {waited:3.0f} s)  {b.name:<28} {name:<58} {r['rps']:>7,.0f} req/s  p99 {r['p99']:>6.2f} ms  "
                    f"/healthz {health:>7,.0f}  pgbench {tps:>7,.0f}  L {L:>6,.0f}  share {r['share']:.2f}" + (f"  NON-2XX {r['non2xx']}" if r["non2xx"] else "")
                    + (f"  socket errors {r['socket_errors']}" if r["socket_errors"] else ""))
    finally:
        for b in boards:
            stop_server(b)


# ---- the pgbench files hold the server's own statements -------------------------------------------------------------

def statements_of_file(file):
    """The statements of a pgbench file: comments and meta-commands dropped, `\\gset` ending a statement as `;` does."""
    text = "\n".join(l for l in open(os.path.join(HERE, file)).read().splitlines() if not l.lstrip().startswith(("--", "\\set")))
    return [x.strip() for x in text.replace("\\gset", ";").split(";") if x.strip()]


def normalized(sql):
    """Parameters ($n, :name), string literals and NULL as `?`, whitespace collapsed."""
    sql = re.sub(r"'[^']*'", "?", sql)
    sql = re.sub(r"\$\d+|(?<!:):[A-Za-z_]\w*|\bNULL\b", "?", sql)
    return " ".join(sql.split()).rstrip(";").strip()


def logged_statements(text):
    """(pid, statement) of every statement in a stretch of the cluster's log (log_statement = all)."""
    return [(pid, statement) for pid, statement, _ in common.logged_statements(text)]


# A new pool connection's settings, and the term filter's list (read again at most every 5 s, not per request).
IGNORED = ("SET TimeZone", "SELECT term FROM blocked_terms")


def check_statements(b):
    """Runs each route once on a fresh server with log_statement = all on the board's database, and checks that the
    route's pgbench file holds exactly the statements the server sent (the store's SQL changes under this bench)."""
    log_file = os.path.join(os.path.dirname(sh(PG, "psql", "-A", "-t", "-c", "SHOW data_directory").strip()), "log", "postgres.log")
    sh(PG, "psql", "-c", f"ALTER DATABASE {b.db} SET log_statement = 'all'")
    captured, hub = {}, set()
    try:
        start_server(b)
        time.sleep(1)
        for key, name, path, opts, sql, defines, check in routes(b):
            offset = os.path.getsize(log_file)
            check()
            time.sleep(0.5)
            with open(log_file, encoding="utf-8", errors="replace") as f:
                f.seek(offset)
                got = logged_statements(f.read())
            hub |= {pid for pid, st in got if "FROM stream_events" in st}  # the live board's listener, not the route
            captured[key] = (sql, got)
    finally:
        stop_server(b)
        sh(PG, "psql", "-c", f"ALTER DATABASE {b.db} RESET log_statement")
    bad = []
    for key, (sql, got) in captured.items():
        server_side = [normalized(st) for pid, st in got if pid not in hub and not st.startswith(IGNORED)]
        file_side = [normalized(st) for st in statements_of_file(sql)]
        if server_side != file_side:
            bad.append(f"--- {key}: bench/replies/{sql} holds\n" + "\n".join(file_side) + "\n--- the server sent\n" + "\n".join(server_side))
    if bad:
        log("\n\n".join(bad))
        raise RuntimeError("the pgbench files no longer hold the server's statements (above): update bench/replies/*.sql")
    log(f"    the server's statements are the pgbench files' ({sum(len(statements_of_file(s)) for s, _ in captured.values())} statements in {len(captured)} routes)")


def plans(b):
    """Buffers each statement reads, in the server's settings (generic plan, jit off), with EXPLAIN (ANALYZE, BUFFERS)."""
    deep_after = b.hot_reply_ids[DEEP_AFTER - 1]
    files = [("replies page 1", "list_replies.sql", {"pid": b.hot, "lim": 21, "after": 0}),
             ("replies deep page", "list_replies.sql", {"pid": b.hot, "lim": 21, "after": deep_after}),
             ("inbox", "inbox.sql", {"token_hash": f"'{b.inbox_hash}'", "me": b.inbox, "lim": 21}),
             ("posts", "list_posts.sql", {"lim": 21})]
    out = []
    for name, file, defines in files:
        text = open(os.path.join(HERE, file)).read()
        statements = [s.strip() for s in re.sub(r"^--.*$", "", text, flags=re.M).split(";") if s.strip()]
        for n, s in enumerate(statements):
            params, values = [], []
            for k, v in defines.items():
                if f":{k}" in s:
                    params.append(k)
                    values.append(str(v))
            for i, k in enumerate(params):
                s = re.sub(rf":{k}\b", f"${i + 1}", s)
            sql = (f"SET plan_cache_mode = force_generic_plan; SET jit = off; PREPARE q AS {s}; "
                   f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE q({', '.join(values)})") if params else \
                  f"SET jit = off; EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) {s}"
            plan = sh("psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", b.url, "-c", sql)
            lines = [l for l in plan.splitlines() if l.strip()]
            top = next((l for l in lines if "Buffers" in l), "")
            out.append((name, n + 1, lines[0].strip(), top.strip(), "\n".join(lines)))
    return out


def main():
    # Stopped (SIGTERM, or SIGINT even when started in the background): the servers stop and the partial results are
    # written by the `finally` below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    boards = [Board(n, p, r) for n, (p, r) in enumerate(SIZES)]
    ok = False
    results = {}
    started = time.strftime("%Y-%m-%d %H:%M")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    try:
        for n, b in enumerate(boards):
            load(b)
            if n == 0:
                check_statements(b)  # before the long loads: a stale file stops the run here
        explained = {b.db: plans(b) for b in boards}
        for rnd in range(1, ROUNDS + 1):
            measure(boards, rnd, results)
        ok = True
    finally:
        for b in boards:
            stop_server(b)
        if ok or results:
            report(boards, results, explained if ok else {}, started, commit, ok)
        if ok and not KEEP:
            for b in boards:
                sh(PG, "dropdb", b.db)
            log("==> databases dropped: " + ", ".join(b.db for b in boards))
        elif not ok:
            log("==> the run failed: databases kept for a look: " + ", ".join(b.db for b in boards))


def med(rows, k):
    return statistics.median(r[k] for r in rows)


def report(boards, results, explained, started, commit, ok):
    base = boards[0]
    lines = []
    p = lines.append
    p(f"# Replies bench, {started} (issue #24; release build, 2 shared cores, PostgreSQL defaults)\n")
    p(f"`bench/replies/run`, commit {commit}; {ROUNDS} round(s) on fresh servers (one per board), each route measured on every board in turn "
      f"(the order reversed every other round); wrk -t1 -c{CONNS} -d{SECONDS}s (after a {WARM_SECONDS} s warm-up, {CREATE_WARM_SECONDS} s for creates, and `/healthz` for {HEALTH_SECONDS} s), "
      f"pgbench -M prepared -c{CONNS} -j2 -T{SECONDS} with `PGOPTIONS='{PG_OPTIONS}'`. Figures are medians over the rounds; the ratios are the medians "
      f"of each round's ratio (two measurements a minute or two apart). `load`: `uptime`'s 1-minute load average before the measurement; `busy`: the "
      f"machine's CPU use (both cores) over the 2 s before it, after waiting up to {QUIET_WAIT} s for it to fall to {QUIET:.0%} (others compile here).\n")
    if not ok:
        p("**The run did not finish: partial results.**\n")
    for b in boards:
        if hasattr(b, "load_seconds"):
            slow = "; ".join(f"{n} {t:.0f} s" for n, t in b.steps if t >= 1)
            p(f"- {b.name} (`{b.db}`): {int(b.totals[0]):,} posts, {int(b.totals[1]):,} replies ({int(b.totals[2]):,} visible); the hot post {b.hot} "
              f"has {HOT_REPLIES:,} replies, the inbox author's {b.inbox_posts:,} posts {b.inbox_replies:,}; loaded in {b.load_seconds:.0f} s"
              + (f" ({slow})" if slow else "") + f"; {b.sizes}")
    p("")
    names = {b.db: {key: name for key, name, *_ in routes(b)} for b in boards if hasattr(b, "hot_reply_ids")}
    p("| board | route | load | busy | req/s | p99 ms | /healthz | pgbench tps | L | share of L | req/s vs 10k | share vs 10k |")
    p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    summary = {}
    for b in boards:
        for key, rows in results.get(b.db, {}).items():
            rb = results.get(base.db, {}).get(key) or []
            pairs = list(zip(rows, rb))
            ratio = statistics.median(x["rps"] / y["rps"] for x, y in pairs) if pairs else float("nan")
            share_ratio = statistics.median(x["share"] / y["share"] for x, y in pairs) if pairs else float("nan")
            summary[(b.db, key)] = (ratio, share_ratio)
            p(f"| {b.name} | {names.get(b.db, {}).get(key, key)} | {statistics.median(r['load'][0] for r in rows):.2f} | {med(rows, 'busy'):.0%} | {med(rows, 'rps'):,.0f} | "
              f"{med(rows, 'p99'):.2f} | {med(rows, 'health'):,.0f} | {med(rows, 'tps'):,.0f} | {med(rows, 'L'):,.0f} | {med(rows, 'share'):.2f} | "
              f"×{ratio:.2f} | ×{share_ratio:.2f} |")
    p("")
    p("Every round (req/s, share of L, load and busy before it, p99):\n")
    p("| board | route | " + " | ".join(f"round {i + 1}" for i in range(ROUNDS)) + " |")
    p("|---|---|" + "---|" * ROUNDS)
    for b in boards:
        for key, rows in results.get(b.db, {}).items():
            p(f"| {b.name} | {names.get(b.db, {}).get(key, key)} | " + " | ".join(f"{r['rps']:,.0f} ({r['share']:.2f}; load {r['load'][0]:.2f}, busy {r['busy']:.0%}; p99 {r['p99']:.1f} ms)" for r in rows) + " |")
    p("")
    big = boards[-1]
    if len(boards) > 1 and (big.db, "create") in summary:
        def verdict(cond):
            return "met" if cond else "**not met**"
        rows = results[big.db]
        p(f"Targets (issue #24) at {big.name}:\n")
        p(f"- replies of the {HOT_REPLIES:,}-reply post ≥ ×0.9 of 10k: page 1 ×{summary[(big.db, 'page1')][0]:.2f} ({verdict(summary[(big.db, 'page1')][0] >= 0.9)}), "
          f"deep page ×{summary[(big.db, 'deep')][0]:.2f} ({verdict(summary[(big.db, 'deep')][0] >= 0.9)})")
        p(f"- inbox ≥ ×0.9 of 10k: ×{summary[(big.db, 'inbox')][0]:.2f} ({verdict(summary[(big.db, 'inbox')][0] >= 0.9)})")
        p(f"- list of posts with replyCount keeps its share of L: {med(results[base.db]['posts'], 'share'):.2f} at 10k, {med(rows['posts'], 'share'):.2f} at {big.name} "
          f"(×{summary[(big.db, 'posts')][1]:.2f}; {verdict(summary[(big.db, 'posts')][1] >= 0.9)} if 'keeps' is ≥ ×0.9 of the 10k share)")
        p(f"- creating a reply ≥ 0.7 of L: {med(rows['create'], 'share'):.2f} ({verdict(med(rows['create'], 'share') >= 0.7)}); at 10k {med(results[base.db]['create'], 'share'):.2f}")
        bad = sum(r["non2xx"] for by in results.values() for rs in by.values() for r in rs)
        p(f"- non-2xx responses in all runs: {bad}")
        p("")
    if explained:
        p("Plans (generic, jit off, EXPLAIN (ANALYZE, BUFFERS) after one execution; statement n of the route's file):\n")
        for b in boards:
            for name, n, head, buffers, full in explained[b.db]:
                p(f"- {b.name}, {name} #{n}: `{head}` — {buffers or 'no buffers'}")
        p("")
        p("<details><summary>full plans</summary>\n")
        for b in boards:
            for name, n, head, buffers, full in explained[b.db]:
                p(f"{b.name}, {name} #{n}:\n```\n{full}\n```")
        p("</details>")
    text = "\n".join(lines) + "\n"
    path = os.path.join(RESULTS, f"replies-{time.strftime('%Y-%m-%d-%H%M')}.md")
    with open(path, "w") as f:
        f.write(text)
    print(text)
    log(f"==> written to {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    main()
