"""Live board bench (issue #22, CONTRACT §11): 10,000 server-sent event streams on GET /v1/stream, in one run.

    bench/stream/run                      (builds the release binary, raises the fd limit and calls this)
    STREAMS=500 bench/stream/run          a small run

One asyncio client (raw sockets, one Protocol per stream, no third-party library) holds STREAMS anonymous streams open.
Each sends `X-Forwarded-For: 10.x.y.z` with STREAMS_PER_ADDRESS (8, the server's STREAM_MAX_PER_CLIENT) streams per
address, and the server trusts loopback as a proxy (TRUSTED_PROXIES=127.0.0.1), so the real per-client limit is in
force (a ninth stream from a full address must get 429). The client counts the `event:` lines every stream receives
and stamps the moment a stream receives a post whose title is a marker (`fanout-0007`). A stream the server ends
(a slow reader, or draining) is opened again after the server's `retry: 2000` with `Last-Event-ID`, as a client would.

In order:
  1. create throughput without streams: `wrk -t1 -c16` POST /v1/posts (after a 3 s warm-up), and /healthz (-c8);
  2. open the streams; the server's RSS (VmRSS) with them open; its CPU while they idle (heartbeats only);
  3. fan-out latency: FANOUT_POSTS posts one at a time, each from just before its POST is sent to the moment each
     stream receives it; the next post once every stream has the previous one; server CPU over the phase divided by
     the events delivered in it = CPU per delivered event;
  4. `/healthz` (`wrk -t1 -c8 --latency`) while a post is created every second and fanned out to every stream;
  5. create throughput with the streams open (the same wrk as in 1), while the client keeps reading: events received,
     streams the server dropped, the CPU per delivered event of that window (creates included);
  6. the server's peak RSS (VmHWM); how long `stream_open` goes on counting the streams after the client closes them
     all; the server's exit code after SIGTERM.
The fan-out times include the client's own serial work: one Python process reads every stream, so the last stream of
a post is stamped after the client has handled all the others (its CPU is in the table).
The results table goes to stdout and bench/results/stream-<date>.md.
"""
import asyncio, json, math, os, re, resource, subprocess, sys, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = sys.argv[1]
STREAMS = int(os.environ.get("STREAMS", "10000"))
PER_ADDRESS = int(os.environ.get("STREAMS_PER_ADDRESS", "8"))
FANOUT_POSTS = int(os.environ.get("FANOUT_POSTS", "5"))
CREATE_SECONDS = int(os.environ.get("CREATE_SECONDS", "15"))
HEALTH_SECONDS = int(os.environ.get("HEALTH_SECONDS", "20"))
IDLE_SECONDS = int(os.environ.get("IDLE_SECONDS", "15"))
# Phase 6: the same number of streams, each watching one of REGIONS regions (`?regionId=`), and creates spread over them.
REGIONS = int(os.environ.get("REGIONS", "250"))
CREATE_CONNS = 16
PORT = int(os.environ.get("BENCH_PORT", "18095"))
HOST = "127.0.0.1"
BASE = f"http://{HOST}:{PORT}"
DB = "weatherboard_stream"
PG = os.path.join(ROOT, "deploy", "local-postgres.sh")
RESULTS = os.path.join(ROOT, "bench", "results")
os.makedirs(RESULTS, exist_ok=True)
TICK = os.sysconf("SC_CLK_TCK")
REGION = "1835848"
BODY = "오늘 같은 날엔 김치파전에 막걸리랑 따뜻한 국밥, 창가 자리 카페도 좋아요 ☔"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


# The client's own descriptors: one a stream, plus a few.
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft < STREAMS + 1000:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, STREAMS + 5000), hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
if soft < STREAMS + 100:
    sys.exit(f"open files limit {soft} is too low for {STREAMS} streams (bench/stream/run raises it)")

sh(PG, "dropdb", DB)
sh(PG, "createdb", DB)
URL = sh(PG, "url", DB).strip()
env = dict(os.environ, DATABASE_URL=URL, PORT=str(PORT), RATE_LIMITS="off", LOG_LEVEL="warning", WEATHER_PROVIDER="none",
           TRUSTED_PROXIES="127.0.0.1")
sh(BIN, "migrate", env=env)
server = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(RESULTS, "stream-server.log"), "w"))
for _ in range(200):
    try:
        urllib.request.urlopen(BASE + "/healthz")
        break
    except Exception:
        time.sleep(0.05)


def proc_status(field):
    with open(f"/proc/{server.pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])  # kB
    return 0


def mib(field):
    return proc_status(field) / 1024


def server_cpu():
    """utime + stime of the server, in seconds."""
    with open(f"/proc/{server.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def server_fd_limit():
    with open(f"/proc/{server.pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    return 0


def metrics():
    out = {}
    with urllib.request.urlopen(BASE + "/metrics") as r:
        for line in r.read().decode().splitlines():
            if line.startswith("stream_"):
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
    return out


sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import http_json  # noqa: E402


def http(method, path, body=None, token=None):
    return http_json(BASE, method, path, body, token)


TOKEN = http("POST", "/v1/accounts")["token"]
LUA = os.path.join(RESULTS, "stream-create.lua")
with open(LUA, "w") as f:
    f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer ' + TOKEN + '"\n'
            'wrk.body = \'' + json.dumps({"weatherType": "rain", "category": "food", "regionId": REGION, "title": "비 오는 날", "body": BODY}, ensure_ascii=False) + '\'\n')


async def wrk(path, conns, seconds, script=None):
    args = ["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--latency"] + (["-s", script] if script else []) + [BASE + path]
    p = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out = (await p.communicate())[0].decode()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))

    def pct(p):
        m = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)\b", out)
        return float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)] if m else float("nan")

    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return dict(rps=rps, total=total, p50=pct(50), p99=pct(99), non2xx=int(non2xx.group(1)) if non2xx else 0,
                errors=errors.group(1) if errors else "")


# MARK: the streams

EVENT = b"\nevent: "
MARK = b"fanout-"
MARK_LEN = len(MARK) + 4
END = b"\r\n0\r\n\r\n"
TAIL = 64


class Board:
    """Every stream of the run, and what they received."""

    def __init__(self):
        self.loop = asyncio.get_running_loop()
        self.streams = {}
        self.events = 0          # `event:` lines received by all streams
        self.open = 0            # streams with a 200 and not ended
        self.ended = 0           # streams the server ended (clean end of the body)
        self.lost = 0            # connections closed without the end of the body (a dropped slow reader)
        self.refused = {}        # status -> count, for (re)connections that did not get 200
        self.reconnects = 0
        self.connect_errors = 0
        self.t0 = {}             # marker number -> perf_counter just before its POST was sent
        self.arrivals = {}       # marker number -> [seconds from t0, one per stream that received it]
        self.reconnect = True
        self.regions = None      # phase 6: stream n watches regions[n % len(regions)]

    def path(self, n):
        return "/v1/stream" if not self.regions else f"/v1/stream?regionId={self.regions[n % len(self.regions)]}"

    def address(self, n):
        a = n // PER_ADDRESS
        return f"10.{1 + a // 65536}.{(a // 256) % 256}.{a % 256}"

    async def connect(self, n, last_id=None, forwarded=None):
        fut = self.loop.create_future()
        try:
            await self.loop.create_connection(lambda: Stream(self, n, forwarded or self.address(n), last_id, fut), HOST, PORT)
        except OSError:
            self.connect_errors += 1
            if not fut.done():
                fut.set_result(None)
        return await fut

    def again(self, n, last_id, delay):
        if not self.reconnect:
            return
        self.reconnects += 1
        self.loop.call_later(delay, lambda: self.loop.create_task(self.connect(n, last_id)))


class Stream(asyncio.Protocol):
    __slots__ = ("board", "n", "forwarded", "last_id", "opened", "transport", "status", "head", "tail", "done", "path")

    def __init__(self, board, n, forwarded, last_id, opened):
        self.board, self.n, self.forwarded, self.last_id, self.opened = board, n, forwarded, last_id, opened
        self.path = board.path(n)
        self.status = None
        self.head = b""
        self.tail = b""
        self.done = False

    def connection_made(self, transport):
        self.transport = transport
        resume = f"Last-Event-ID: {self.last_id}\r\n" if self.last_id else ""
        transport.write(f"GET {self.path} HTTP/1.1\r\nHost: {HOST}:{PORT}\r\nAccept: text/event-stream\r\nX-Forwarded-For: {self.forwarded}\r\n{resume}\r\n".encode())

    def data_received(self, data):
        now = time.perf_counter()
        board = self.board
        if self.status is None:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            self.status = int(self.head[9:12])
            data, self.head = self.head[end + 4:], b""
            if self.status != 200:
                board.refused[self.status] = board.refused.get(self.status, 0) + 1
                self.done = True
                self.transport.close()
                if not self.opened.done():
                    self.opened.set_result(self.status)
                if self.status in (429, 503):
                    board.again(self.n, self.last_id, 5.0)
                return
            board.open += 1
            board.streams[self.n] = self
            if not self.opened.done():
                self.opened.set_result(200)
        buf = self.tail + data
        # Occurrences that end in the new bytes: those that start at or after len(tail) - len(pattern) + 1.
        start = len(self.tail)
        board.events += buf.count(EVENT, max(0, start - len(EVENT) + 1))
        i = buf.find(MARK, max(0, start - MARK_LEN + 1))
        while i >= 0 and i + MARK_LEN <= len(buf):
            k = int(buf[i + len(MARK):i + MARK_LEN])
            t0 = board.t0.get(k)
            if t0 is not None:
                board.arrivals[k].append(now - t0)
            i = buf.find(MARK, i + MARK_LEN)
        j = buf.rfind(b"\nid: ")
        if j >= 0:
            e = buf.find(b"\n", j + 5)
            if e > 0:
                self.last_id = buf[j + 5:e].decode()
        if buf.find(END, max(0, start - len(END) + 1)) >= 0:
            self.finish(ended=True)
            self.transport.close()
            return
        self.tail = buf[-TAIL:]

    def finish(self, ended):
        if self.done:
            return
        self.done = True
        board = self.board
        if self.status == 200:
            board.open -= 1
            if ended:
                board.ended += 1
            else:
                board.lost += 1
            board.again(self.n, self.last_id, 2.0)

    def connection_lost(self, exc):
        if not self.opened.done():
            self.opened.set_result(self.status)
        self.finish(ended=False)


async def create_post(board, k):
    """POST /v1/posts with title fanout-k; t0 is taken just before the request is written (the connection is open)."""
    body = json.dumps({"weatherType": "rain", "category": "food", "regionId": REGION, "title": f"fanout-{k:04d}", "body": BODY},
                      ensure_ascii=False).encode()
    r, w = await asyncio.open_connection(HOST, PORT)
    request = (f"POST /v1/posts HTTP/1.1\r\nHost: {HOST}:{PORT}\r\nContent-Type: application/json\r\nAuthorization: Bearer {TOKEN}\r\n"
               f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
    board.arrivals[k] = []
    t0 = time.perf_counter()
    board.t0[k] = t0
    w.write(request)
    head = await r.readuntil(b"\r\n\r\n")
    answered = time.perf_counter() - t0
    await r.read()
    w.close()
    status = int(head[9:12])
    assert status == 201, head
    return answered


async def regional_one(board, n, gate):
    async with gate:
        return await board.connect(n)


def pctl(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s), max(1, math.ceil(p / 100 * len(s)))) - 1]  # nearest rank


async def until(cond, timeout, step=0.01):
    t = time.monotonic()
    while not cond() and time.monotonic() - t < timeout:
        await asyncio.sleep(step)
    return cond()


async def settle(board, quiet=3.0, timeout=90.0):
    """Waits until no stream has received anything for `quiet` seconds."""
    t, last, since = time.monotonic(), board.events, time.monotonic()
    while time.monotonic() - t < timeout:
        await asyncio.sleep(0.25)
        if board.events != last:
            last, since = board.events, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return True
    return False


def client_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def main():
    R = {}
    R["server_fd_limit"] = server_fd_limit()
    R["client_fd_limit"] = soft
    R["rss_start"] = mib("VmRSS")

    log(f"==> 1. without streams: POST /v1/posts wrk -t1 -c{CREATE_CONNS} -d{CREATE_SECONDS}s (after 3 s of warm-up), /healthz -c8")
    await wrk("/v1/posts", CREATE_CONNS, 3, LUA)
    R["create_alone"] = await wrk("/v1/posts", CREATE_CONNS, CREATE_SECONDS, LUA)
    R["health_alone"] = await wrk("/healthz", 8, 10)
    log(f"    creates {R['create_alone']['rps']:.0f}/s p99 {R['create_alone']['p99']:.1f} ms; /healthz {R['health_alone']['rps']:.0f}/s p99 {R['health_alone']['p99']:.2f} ms")
    R["rss_before_streams"] = mib("VmRSS")

    board = Board()
    log(f"==> 2. opening {STREAMS:,} streams ({PER_ADDRESS} per X-Forwarded-For address)")
    t = time.perf_counter()
    gate = asyncio.Semaphore(200)

    async def one(n):
        async with gate:
            return await board.connect(n)

    statuses = await asyncio.gather(*(one(n) for n in range(STREAMS)))
    R["open_seconds"] = time.perf_counter() - t
    R["opened"] = sum(1 for s in statuses if s == 200)
    R["open_failures"] = {str(s): statuses.count(s) for s in set(statuses) if s != 200}
    # The real per-client limit: a ninth stream from the first (full) address.
    board.reconnect = False
    R["limit_check"] = await board.connect(10**9, forwarded=board.address(0)) if STREAMS >= PER_ADDRESS else None
    board.reconnect = True
    await asyncio.sleep(2)
    R["rss_streams"] = mib("VmRSS")
    m = metrics()
    R["gauge_after_open"] = m.get('stream_open{stream="board"}')
    log(f"    {R['opened']:,} open in {R['open_seconds']:.1f} s (failures {R['open_failures']}, connect errors {board.connect_errors}); "
        f"ninth from one address: {R['limit_check']}; RSS {R['rss_before_streams']:.0f} -> {R['rss_streams']:.0f} MiB; gauge {R['gauge_after_open']}")

    log(f"==> idle {IDLE_SECONDS} s with the streams open")
    c0, e0, w0 = server_cpu(), board.events, time.perf_counter()
    await asyncio.sleep(IDLE_SECONDS)
    R["idle_cpu_per_s"] = (server_cpu() - c0) / (time.perf_counter() - w0)
    R["idle_events"] = board.events - e0
    R["rss_idle"] = mib("VmRSS")
    log(f"    server CPU {R['idle_cpu_per_s'] * 100:.1f}% of a core; RSS {R['rss_idle']:.0f} MiB")

    log(f"==> 3. fan-out: {FANOUT_POSTS} posts, one at a time")
    n_open = board.open
    m0, c0, e0, w0, cc0 = metrics(), server_cpu(), board.events, time.perf_counter(), client_cpu()
    fanout = []
    for k in range(1, FANOUT_POSTS + 1):
        answered = await create_post(board, k)
        complete = await until(lambda: len(board.arrivals[k]) >= n_open, 60)
        got = board.arrivals[k]
        fanout.append(dict(k=k, answered=answered, n=len(got), p50=pctl(got, 50), p99=pctl(got, 99), max=max(got, default=float("nan")), complete=complete))
        log(f"    post {k}: 201 after {answered * 1000:.1f} ms; {len(got):,}/{n_open:,} streams; p50 {fanout[-1]['p50'] * 1000:.0f} ms, "
            f"p99 {fanout[-1]['p99'] * 1000:.0f} ms, max {fanout[-1]['max'] * 1000:.0f} ms")
        await asyncio.sleep(0.5)
    w1, c1, e1, m1, cc1 = time.perf_counter(), server_cpu(), board.events, metrics(), client_cpu()
    R["fanout"] = fanout
    R["fanout_all"] = [x for k in range(1, FANOUT_POSTS + 1) for x in board.arrivals[k]]
    R["fanout_events"] = e1 - e0
    R["fanout_sent"] = m1.get("stream_events_sent_total", 0) - m0.get("stream_events_sent_total", 0)
    R["fanout_cpu"] = c1 - c0
    R["fanout_wall"] = w1 - w0
    R["fanout_client_cpu"] = cc1 - cc0
    R["rss_fanout"] = mib("VmRSS")

    log(f"==> 4. /healthz wrk -t1 -c8 -d{HEALTH_SECONDS}s while a post is created every second")
    n_open = board.open
    first = FANOUT_POSTS + 1
    posted = []

    async def poster():
        k = first
        begin = time.monotonic()
        while time.monotonic() - begin < HEALTH_SECONDS - 1:
            await create_post(board, k)
            posted.append(k)
            k += 1
            await asyncio.sleep(max(0, begin + (k - first) - time.monotonic()))

    c0, e0, w0 = server_cpu(), board.events, time.perf_counter()
    health, _ = await asyncio.gather(wrk("/healthz", 8, HEALTH_SECONDS), poster())
    R["health_cpu"], R["health_wall"] = server_cpu() - c0, time.perf_counter() - w0
    await until(lambda: all(len(board.arrivals[k]) >= n_open for k in posted), 60)
    R["health_events"] = board.events - e0
    R["health"] = health
    R["health_posts"] = len(posted)
    R["health_fanout"] = [x for k in posted for x in board.arrivals[k]]
    R["health_complete"] = sum(len(board.arrivals[k]) for k in posted), n_open * len(posted)
    log(f"    /healthz {health['rps']:.0f}/s p99 {health['p99']:.2f} ms (non-2xx {health['non2xx']}); {len(posted)} posts, fan-out p99 "
        f"{pctl(R['health_fanout'], 99) * 1000:.0f} ms, max {max(R['health_fanout'], default=0) * 1000:.0f} ms; {R['health_complete'][0]:,}/{R['health_complete'][1]:,} deliveries")

    log(f"==> 5. with {board.open:,} streams: POST /v1/posts wrk -t1 -c{CREATE_CONNS} -d{CREATE_SECONDS}s")
    R["streams_before_create"] = board.open
    ended0, lost0, rec0 = board.ended, board.lost, board.reconnects
    m0, c0, e0, w0, cc0 = metrics(), server_cpu(), board.events, time.perf_counter(), client_cpu()
    R["create_streams"] = await wrk("/v1/posts", CREATE_CONNS, CREATE_SECONDS, LUA)
    w1, c1, e1, m1, cc1 = time.perf_counter(), server_cpu(), board.events, metrics(), client_cpu()
    R["create_cpu"], R["create_wall"], R["create_events"], R["create_client_cpu"] = c1 - c0, w1 - w0, e1 - e0, cc1 - cc0
    R["create_sent"] = m1.get("stream_events_sent_total", 0) - m0.get("stream_events_sent_total", 0)
    R["rss_create"] = mib("VmRSS")
    log(f"    creates {R['create_streams']['rps']:.0f}/s p99 {R['create_streams']['p99']:.1f} ms; {R['create_events']:,} events received in the window "
        f"(server sent {R['create_sent']:,.0f}); streams open {board.open:,}; RSS {R['rss_create']:.0f} MiB")
    drained = await settle(board)
    m2 = metrics()
    R["create_after_events"] = board.events - e1
    R["create_drain_seconds"] = time.perf_counter() - w1
    R["create_drained"] = drained
    R["create_expected"] = R["create_streams"]["total"] * R["streams_before_create"]
    R["create_dropped"] = m2.get("stream_subscribers_dropped_total", 0) - m0.get("stream_subscribers_dropped_total", 0)
    R["create_ended"], R["create_lost"], R["create_reconnects"] = board.ended - ended0, board.lost - lost0, board.reconnects - rec0
    R["streams_after_create"] = board.open
    R["gauge_after_create"] = m2.get('stream_open{stream="board"}')
    log(f"    afterwards: {R['create_after_events']:,} more events in {R['create_drain_seconds']:.0f} s; ended by the server {R['create_ended']}, "
        f"connections lost {R['create_lost']}, dropped (metric) {R['create_dropped']:.0f}, reconnects {R['create_reconnects']}; open {board.open:,}")

    # Phase 6: streams that watch a region each, creates spread over the same regions (each post reaches the streams of
    # its region: STREAMS / REGIONS of them).
    board.reconnect = False
    for st in list(board.streams.values()):
        if not st.done:
            st.transport.close()
    await until(lambda: not metrics().get('stream_open{stream="board"}'), 30, 0.25)
    regions = sh("psql", "-X", "-At", URL, "-c",
                 f"SELECT id FROM regions WHERE country_code = 'KR' ORDER BY population DESC, id LIMIT {REGIONS}").split()
    regional = Board()
    regional.regions = regions
    log(f"==> 6. {STREAMS:,} streams over {len(regions)} regions, creates spread over them: POST /v1/posts wrk -t1 -c{CREATE_CONNS} -d{CREATE_SECONDS}s")
    statuses = await asyncio.gather(*(regional_one(regional, n, gate) for n in range(STREAMS)))
    R["regional_opened"] = sum(1 for x in statuses if x == 200)
    lua = os.path.join(RESULTS, "stream-create-regional.lua")
    with open(lua, "w") as f:
        f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer ' + TOKEN + '"\n'
                'local regions = {' + ",".join(f'"{r}"' for r in regions) + '}\n'
                'request = function()\n  local r = regions[math.random(#regions)]\n'
                '  return wrk.format(nil, nil, nil, \'{"weatherType":"rain","category":"food","regionId":"\' .. r .. \'","title":"비 오는 날","body":"' + BODY.replace('"', '\\"') + '"}\')\nend\n')
    m0, c0, e0 = metrics(), server_cpu(), regional.events
    R["create_regional"] = await wrk("/v1/posts", CREATE_CONNS, CREATE_SECONDS, lua)
    R["regional_events"], R["regional_cpu"] = regional.events - e0, server_cpu() - c0
    R["rss_regional"] = mib("VmRSS")
    log(f"    {R['regional_opened']:,} open; creates {R['create_regional']['rps']:.0f}/s p99 {R['create_regional']['p99']:.1f} ms "
        f"(×{R['create_regional']['rps'] / R['create_alone']['rps']:.2f} of without streams); {R['regional_events']:,} events received; RSS {R['rss_regional']:.0f} MiB")
    for st in list(regional.streams.values()):
        if not st.done:
            st.transport.close()

    R["rss_peak"] = mib("VmHWM")
    R["rss_end"] = mib("VmRSS")
    R["refused"] = board.refused
    R["totals"] = dict(ended=board.ended, lost=board.lost, reconnects=board.reconnects, connect_errors=board.connect_errors)
    board.reconnect = False
    closed = 0
    for s in list(board.streams.values()):
        if not s.done:
            s.transport.close()
            closed += 1
    # How long the server goes on counting streams whose clients closed them.
    t, samples = time.perf_counter(), []
    while time.perf_counter() - t < 20:
        await asyncio.sleep(0.25)
        gauge = metrics().get('stream_open{stream="board"}')
        samples.append(f"{time.perf_counter() - t:.2f}s:{gauge:.0f}")
        if not gauge:
            break
    log(f"    stream_open after the client closed its streams: {' '.join(samples)}")
    R["closed"], R["gauge_after_close"], R["gauge_after_close_seconds"] = closed, gauge, time.perf_counter() - t
    return R


R = asyncio.run(main())
server.terminate()
R["exit"] = server.wait(timeout=30)

# MARK: the table


def ms(s):
    return f"{s * 1000:,.0f}"


def met(ok):
    return "met" if ok else "**not met**"


idle_us = R["idle_cpu_per_s"]
fan_us = R["fanout_cpu"] / max(1, R["fanout_events"]) * 1e6
fan_net_us = (R["fanout_cpu"] - idle_us * R["fanout_wall"]) / max(1, R["fanout_events"]) * 1e6
create_us = R["create_cpu"] / max(1, R["create_events"]) * 1e6
ratio = R["create_streams"]["rps"] / R["create_alone"]["rps"]
all_f = R["fanout_all"]
lines = []
p = lines.append
p(f"Streams: {R['opened']:,} of {STREAMS:,} opened in {R['open_seconds']:.1f} s ({PER_ADDRESS} per `X-Forwarded-For` address, "
  f"TRUSTED_PROXIES=127.0.0.1, STREAM_MAX_PER_CLIENT and STREAM_MAX at their defaults); a ninth stream from a full address: "
  f"{R['limit_check']}; fd limits: server {R['server_fd_limit']:,}, client {R['client_fd_limit']:,}.")
if R["open_failures"]:
    p(f"Streams that did not open: {R['open_failures']} (None = connection failed).")
p("")
p("| measure | value | target |")
p("|---|---|---|")
p(f"| server RSS: started / after the creates without streams / {R['opened']:,} streams open / idle 15 s / after the fan-out / after the creates with streams | "
  f"{R['rss_start']:.0f} / {R['rss_before_streams']:.0f} / **{R['rss_streams']:.0f}** / {R['rss_idle']:.0f} / {R['rss_fanout']:.0f} / {R['rss_create']:.0f} MiB (peak VmHWM {R['rss_peak']:.0f}) | "
  f"≤ 300 MiB: {met(max(R['rss_streams'], R['rss_idle'], R['rss_fanout']) <= 300)} |")
p(f"| server CPU with the streams idle (heartbeats) | {R['idle_cpu_per_s'] * 100:.1f}% of a core | |")
p(f"| fan-out, {len(R['fanout'])} posts one at a time: from just before the POST to each stream's `event: post` | p50 {ms(pctl(all_f, 50))} ms, "
  f"p99 **{ms(pctl(all_f, 99))} ms**, max {ms(max(all_f, default=float('nan')))} ms over {len(all_f):,} deliveries | p99 ≤ 1 s: {met(pctl(all_f, 99) <= 1)} |")
p(f"| `/healthz` (`wrk -t1 -c8`) without streams | {R['health_alone']['rps']:,.0f} req/s, p99 {R['health_alone']['p99']:.2f} ms | |")
h = R["health"]
p(f"| `/healthz` (`wrk -t1 -c8 -d{HEALTH_SECONDS}s`) while a post a second fans out to every stream ({R['health_posts']} posts) | {h['rps']:,.0f} req/s, "
  f"p99 **{h['p99']:.2f} ms**{', non-2xx ' + str(h['non2xx']) if h['non2xx'] else ''}{', socket errors ' + h['errors'] if h['errors'] else ''} | p99 ≤ 50 ms: {met(h['p99'] <= 50)} |")
hf = R["health_fanout"]
p(f"| fan-out of those posts | p50 {ms(pctl(hf, 50))} ms, p99 {ms(pctl(hf, 99))} ms, max {ms(max(hf, default=float('nan')))} ms; "
  f"{R['health_complete'][0]:,} of {R['health_complete'][1]:,} deliveries | |")
ca, cs = R["create_alone"], R["create_streams"]
p(f"| `POST /v1/posts` (`wrk -t1 -c{CREATE_CONNS} -d{CREATE_SECONDS}s`) without streams | {ca['rps']:,.0f} req/s, p99 {ca['p99']:.1f} ms{', non-2xx ' + str(ca['non2xx']) if ca['non2xx'] else ''} | |")
p(f"| the same with {R['streams_before_create']:,} streams open | {cs['rps']:,.0f} req/s, p99 {cs['p99']:.1f} ms{', non-2xx ' + str(cs['non2xx']) if cs['non2xx'] else ''}: "
  f"**×{ratio:.2f}** | ≥ ×0.8: {met(ratio >= 0.8)} |")
cr = R["create_regional"]
p(f"| the same with {R['regional_opened']:,} streams each watching one of {REGIONS} regions, creates spread over those regions "
  f"(each post reaches ~{STREAMS // max(1, REGIONS)} streams) | {cr['rps']:,.0f} req/s, p99 {cr['p99']:.1f} ms: **×{cr['rps'] / ca['rps']:.2f}**; "
  f"{R['regional_events']:,} events received | ≥ ×0.8: {met(cr['rps'] / ca['rps'] >= 0.8)} |")
p(f"| events the streams received during those creates / after wrk ended (until 3 s quiet{'' if R['create_drained'] else ', not reached in 90 s'}) / "
  f"posts created × streams | {R['create_events']:,} / {R['create_after_events']:,} / {R['create_expected']:,} (server counted {R['create_sent']:,.0f} sent in the window) | |")
p(f"| streams the server dropped as slow readers in that phase (metric) / ended by the server / connections lost / reconnects / open at the end | "
  f"{R['create_dropped']:,.0f} / {R['create_ended']:,} / {R['create_lost']:,} / {R['create_reconnects']:,} / {R['streams_after_create']:,} (gauge {R['gauge_after_create']}) | |")
p(f"| server CPU per delivered event, fan-out phase ({R['fanout_events']:,} events in {R['fanout_wall']:.1f} s, {R['fanout_cpu']:.2f} s CPU) | "
  f"**{fan_us:.1f} µs** ({fan_net_us:.1f} µs net of the idle CPU) | |")
p(f"| server CPU per delivered event while creating ({R['create_events']:,} events, {R['create_cpu']:.2f} s CPU in {R['create_wall']:.1f} s, creates included) | "
  f"{create_us:.1f} µs | |")
p(f"| the load generator's own CPU: fan-out phase / creating with streams | {R['fanout_client_cpu']:.2f} s / {R['create_client_cpu']:.2f} s | |")
p("")
p("| fan-out post | `201` after | streams | p50 ms | p99 ms | max ms |")
p("|---|---|---|---|---|---|")
for f in R["fanout"]:
    p(f"| {f['k']} | {f['answered'] * 1000:.1f} ms | {f['n']:,}{'' if f['complete'] else ' (incomplete after 60 s)'} | {ms(f['p50'])} | {ms(f['p99'])} | {ms(f['max'])} |")
p("")
p(f"Whole run: streams ended by the server {R['totals']['ended']}, connections lost {R['totals']['lost']}, reconnects {R['totals']['reconnects']}, "
  f"connect errors {R['totals']['connect_errors']}, refused {R['refused'] or 'none'}; `stream_open` {R['gauge_after_close']:.0f} {R['gauge_after_close_seconds']:.1f} s after the client closed its {R['closed']:,} streams; "
  f"server exit code after SIGTERM: {R['exit']}.")

table = "\n".join(lines)
print("\n" + table)
day = time.strftime("%Y-%m-%d")
path = os.path.join(RESULTS, f"stream-{day}.md")
if os.path.exists(path):
    path = os.path.join(RESULTS, f"stream-{day}-{time.strftime('%H%M')}.md")
with open(path, "w") as f:
    f.write(f"# Live board bench, {time.strftime('%Y-%m-%d %H:%M')} ({STREAMS:,} streams, release build, 2 shared cores)\n\n"
            f"`{' '.join(['STREAMS=' + str(STREAMS), 'bench/stream/run'])}`, commit {sh('git', '-C', ROOT, 'rev-parse', '--short', 'HEAD').strip()}\n\n" + table + "\n")
    f.write("\n```json\n" + json.dumps({k: v for k, v in R.items() if k not in ("fanout_all", "health_fanout")}, indent=1, default=str) + "\n```\n")
log(f"==> {path}")
