"""Push (issue #34): the morning burst and reply notifications under load, on one instance, against the fake APNs
(`fake-apns`: HTTP/2 over TLS with its own CA, checking every provider token) on loopback.

    bench/push/run        (release build, local PostgreSQL with its default settings)

**The burst.** PUSH_DEVICES (100,000) devices of 10,000 accounts over 250 regions (the most populous), in five time
zones, two languages and both units, all due at the same minute (each device's own local minute for that instant;
`next_briefing_at` set as the server would). Reported: how long after the minute the last briefing was accepted by
the fake (target: 60 s), the upstream weather calls (target: at most one per region), the statements the server ran
(`db_statements_total`), the server's CPU time per push and its peak RSS.

**Replies under load.** `POST /v1/posts/{id}/replies` with `wrk -t1 -c32` for PUSH_SECONDS (10) over 1,000 posts of
1,000 authors who each have a registered device (so no author passes the hourly cap), once with `PUSH=off` and once
with `PUSH=apns`. Reported: both rates and their ratio (target ≥ 0.8), and `push_delivery_seconds` (queued to APNs's
200) p99 (target 5 s) from the server's histogram.
"""
import json, os, re, signal, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import RESULTS, ROOT, fresh_database, http_json, log, sh, start_server, stop_server  # noqa: E402

BIN, FAKE_APNS = sys.argv[1], sys.argv[2]
DEVICES = int(os.environ.get("PUSH_DEVICES", "100000"))
SECONDS = int(os.environ.get("PUSH_SECONDS", "10"))
PART = os.environ.get("PUSH_PART", "all")
PORT = int(os.environ.get("BENCH_PORT", "18091"))
BASE = f"http://127.0.0.1:{PORT}"
TEAM, KEY_ID, TOPIC = "TEAM123456", "KEY1234567", "kr.weatherboard.bench"
URL, psql = fresh_database("weatherboard_push_bench")
work = tempfile.mkdtemp(prefix="wb-push-bench-")
key = os.path.join(work, "apns.p8")
pub = os.path.join(work, "apns.pub")
ca = os.path.join(work, "ca.pem")
sh("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key)
sh("openssl", "pkey", "-in", key, "-pubout", "-out", pub)

weather = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "fake_weather.py"), "0", "20"], stdout=subprocess.PIPE, text=True)
weather_port = int(weather.stdout.readline().strip())
fake = subprocess.Popen([FAKE_APNS, "--team-id", TEAM, "--key-id", KEY_ID, "--public-key", pub, "--topic", TOPIC, "--ca-out", ca],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
fake_url = fake.stdout.readline().split()[-1]
# PUSH_BENCH_APNS_URL: send somewhere else (a closed port: the producers' cost alone, every push retried later).
fake_url = os.environ.get("PUSH_BENCH_APNS_URL", fake_url)
ENV = dict(os.environ, DATABASE_URL=URL, RATE_LIMITS="off", LOG_LEVEL="warning",
           WEATHER_PROVIDER="open-meteo", WEATHER_BASE_URL=f"http://127.0.0.1:{weather_port}",
           APNS_TEAM_ID=TEAM, APNS_KEY_ID=KEY_ID, APNS_PRIVATE_KEY_FILE=key, APNS_TOPIC=TOPIC,
           APNS_PRODUCTION_URL=fake_url, APNS_SANDBOX_URL=fake_url, APNS_CA_FILE=ca)
sh(BIN, "migrate", env=ENV)


def start(push):
    return start_server(BIN, dict(ENV, PUSH=push), PORT)


stop = stop_server


def http(method, path, body=None, token=None):
    return http_json(BASE, method, path, body, token)


def metrics():
    return urllib.request.urlopen(BASE + "/metrics").read().decode()


def metric(text, name):
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and (line[len(name)] in " {"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024


def fake_accepted():
    """The fake's last per-second line: accepted, duplicates."""
    return fake_state["accepted"], fake_state["duplicates"]


fake_state = {"accepted": 0, "duplicates": 0, "at": {}}


def read_fake():
    import threading

    def loop():
        for line in fake.stdout:
            m = re.search(r"t=(\d+) accepted=(\d+) distinct_apns_ids=(\d+) duplicates=(\d+)", line)
            if m:
                fake_state["accepted"] = int(m.group(2))
                fake_state["duplicates"] = int(m.group(4))
                fake_state["at"][int(m.group(2))] = int(m.group(1))
            m = re.search(r"first=(\d+) last=(\d+)", line)
            if m:
                fake_state["first"], fake_state["last"] = int(m.group(1)), int(m.group(2))
    threading.Thread(target=loop, daemon=True).start()


read_fake()
results = []

# ---- the burst ----------------------------------------------------------------------------------------------------
if PART in ("all", "burst"):
    accounts = max(1, DEVICES // 10)
    zones = ["Asia/Seoul", "Asia/Tokyo", "UTC", "Europe/Berlin", "America/New_York"]
    due = (int(time.time()) // 60 + 3) * 60  # a whole minute, at least two minutes on: time to seed and start
    log(f"seeding {DEVICES} devices of {accounts} accounts, due at {time.strftime('%H:%M:%S', time.gmtime(due))} UTC")
    psql(f"""
    WITH a AS (INSERT INTO accounts (display_name) SELECT 'bench ' || i FROM generate_series(1, {accounts}) i RETURNING id)
    INSERT INTO sessions (account_id, token_hash, token_prefix) SELECT id, md5(id::text) || md5('s' || id), 'bench' FROM a;
    INSERT INTO notification_settings (account_id, briefing_enabled, briefing_region_id, briefing_minute)
    SELECT s.account_id, true, (SELECT id FROM regions ORDER BY population DESC, id OFFSET (s.account_id % 250) LIMIT 1), 0
    FROM sessions s;
    INSERT INTO devices (token, account_id, session_id, environment, time_zone, language, units, next_briefing_at)
    SELECT md5(s.id::text || '-' || k) || md5(k::text || '-' || s.id), s.account_id, s.id,
           CASE WHEN k % 2 = 0 THEN 'production' ELSE 'sandbox' END,
           (ARRAY{zones!r})[1 + (s.account_id % {len(zones)})],
           CASE WHEN k % 2 = 0 THEN 'ko' ELSE 'en' END, CASE WHEN k % 4 < 2 THEN 'metric' ELSE 'imperial' END,
           to_timestamp({due})
    FROM sessions s CROSS JOIN generate_series(1, 10) k;
    UPDATE notification_settings n SET briefing_minute = (extract(hour FROM to_timestamp({due}) AT TIME ZONE d.time_zone) * 60
                                                         + extract(minute FROM to_timestamp({due}) AT TIME ZONE d.time_zone))::int
    FROM (SELECT DISTINCT account_id, time_zone FROM devices) d WHERE d.account_id = n.account_id;
    """)
    psql("VACUUM ANALYZE devices")
    psql("VACUUM ANALYZE notification_settings")
    n_devices = int(psql("SELECT count(*) FROM devices"))
    regions = int(psql("SELECT count(DISTINCT briefing_region_id) FROM notification_settings"))
    log(f"{n_devices} devices, {regions} regions")
    server = start("apns")
    before = metrics()
    cpu0 = cpu_seconds(server.pid)
    calls0 = json.load(urllib.request.urlopen(f"http://127.0.0.1:{weather_port}/__count"))["calls"]
    while time.time() < due:
        time.sleep(0.5)
    deadline = due + 180
    while fake_state["accepted"] < n_devices and time.time() < deadline:
        time.sleep(0.5)
    took = None
    # The fake's per-second lines: the second the count reached every device.
    for accepted, at in sorted(fake_state["at"].items()):
        if accepted >= n_devices:
            took = at - due
            break
    after = metrics()
    cpu = cpu_seconds(server.pid) - cpu0
    calls = json.load(urllib.request.urlopen(f"http://127.0.0.1:{weather_port}/__count"))["calls"] - calls0
    statements = metric(after, "db_statements_total") - metric(before, "db_statements_total")
    rss = peak_rss_mib(server.pid)
    delivered = metric(after, 'push_sent_total{kind="briefing",result="delivered"}')
    stop(server)
    results.append(("burst", {
        "devices": n_devices, "regions": regions, "accepted": fake_state["accepted"], "duplicates": fake_state["duplicates"],
        "last_accepted_after_minute_s": took, "upstream_weather_calls": calls, "statements": int(statements),
        "server_cpu_ms_per_push": round(cpu * 1000 / max(1, fake_state["accepted"]), 3), "peak_rss_mib": round(rss, 1),
        "delivered_metric": int(delivered),
    }))
    log(results[-1])

# ---- replies under load --------------------------------------------------------------------------------------------
if PART in ("all", "replies"):
    server = start("off")
    authors = []
    region = psql("SELECT id FROM regions ORDER BY population DESC, id LIMIT 1")
    for i in range(1000):
        a = http("POST", "/v1/accounts")
        token = os.urandom(32).hex()
        http("PUT", f"/v1/accounts/me/devices/{token}", {"environment": "production", "timeZone": "Asia/Seoul"}, token=a["token"])
        post = http("POST", "/v1/posts", {"weatherType": "rain", "category": "food", "body": f"post {i}", "regionId": region}, token=a["token"])
        authors.append(post["id"])
    replier = http("POST", "/v1/accounts")["token"]
    lua = os.path.join(work, "replies.lua")
    with open(lua, "w") as f:
        f.write("paths = {" + ",".join(f'"/v1/posts/{p}/replies"' for p in authors) + "}\n")
        f.write('counter = 0\nwrk.method = "POST"\nwrk.body = \'{"body":"좋은 추천이네요"}\'\n')
        f.write('wrk.headers["Content-Type"] = "application/json"\n')
        f.write(f'wrk.headers["Authorization"] = "Bearer {replier}"\n')
        f.write('request = function()\n  counter = counter + 1\n  return wrk.format(nil, paths[(counter % #paths) + 1])\nend\n')

    def postgres_cpu():
        total = 0.0
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    if open(f"/proc/{pid}/comm").read().strip() == "postgres":
                        total += cpu_seconds(int(pid))
                except OSError:
                    pass
        return total

    def run_wrk():
        cpu0 = (cpu_seconds(server.pid), cpu_seconds(fake.pid), postgres_cpu())
        out = subprocess.run(["wrk", "-t1", "-c32", f"-d{SECONDS}s", "--latency", "-s", lua, BASE], capture_output=True, text=True).stdout
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
        bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        cpu1 = (cpu_seconds(server.pid), cpu_seconds(fake.pid), postgres_cpu())
        split = tuple(round((b - a) / SECONDS, 2) for a, b in zip(cpu0, cpu1))
        return rps, int(bad.group(1)) if bad else 0, split

    off_rps, off_bad, off_cpu = run_wrk()
    stop(server)
    psql("DELETE FROM push_reply_windows")
    server = start("apns")
    on_rps, on_bad, on_cpu = run_wrk()
    # Let the queue drain, then read the histogram.
    drain_deadline = time.time() + 60
    while time.time() < drain_deadline and int(psql("SELECT count(*) FROM push_queue WHERE done_at IS NULL")) > 0:
        time.sleep(0.5)
    text = metrics()
    buckets = []
    for line in text.splitlines():
        m = re.match(r'push_delivery_seconds_bucket\{le="([^"]+)"\} ([\d.e+]+)', line)
        if m:
            buckets.append((float("inf") if m.group(1) == "+Inf" else float(m.group(1)), float(m.group(2))))
    count = metric(text, "push_delivery_seconds_count")
    p99 = next((le for le, c in sorted(buckets) if c >= 0.99 * count), None) if count else None
    queued = int(psql("SELECT count(*) FROM push_queue WHERE kind = 'reply'"))
    stop(server)
    results.append(("replies", {
        "creates_per_s_push_off": off_rps, "creates_per_s_push_apns": on_rps, "ratio": round(on_rps / off_rps, 3),
        "non2xx_off": off_bad, "non2xx_apns": on_bad,
        "cores_busy_off (server, fake-apns, postgres)": off_cpu, "cores_busy_apns (server, fake-apns, postgres)": on_cpu, "notifications": queued, "delivered_histogram_count": int(count),
        "delivery_p99_le_s": p99,
    }))
    log(results[-1])

fake.send_signal(signal.SIGTERM)
fake.wait(timeout=30)
weather.terminate()
stamp = time.strftime("%Y-%m-%d-%H%M")
path = os.path.join(RESULTS, f"push-{stamp}.md")
with open(path, "w") as f:
    f.write(f"# bench/push/run, {stamp}\n\n")
    for name, values in results:
        f.write(f"## {name}\n\n| measure | value |\n|---|---:|\n")
        for k, v in values.items():
            f.write(f"| {k} | {v} |\n")
        f.write("\n")
print(open(path).read())
