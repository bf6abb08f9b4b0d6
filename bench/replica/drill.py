"""Past one machine, drilled (issue #23, CONTRACT §12).

A primary and a hot standby on loopback (deploy/local-replica.sh), two release instances of the server behind no
proxy (the drill alternates between them), PostgreSQL's default settings. It prints:
  - the share of anonymous reads the standby served (the instances' db_reads_total);
  - the errors clients saw (non-2xx; 500s counted apart);
  - the primary's CPU (all its processes, /proc) per 1,000 anonymous reads, with the standby and without it;
  - the failover gap: writes go on through both instances while the primary is stopped (immediate) and the standby
    promoted; the gap is from the last acknowledged write before to the first after; every acknowledged write must
    be there afterwards.
Then the old primary is rebuilt as a standby of the new one (`rebuild`: pg_rewind after a CHECKPOINT, a fresh clone
if that fails), so the pair is whole again.
"""
import json, os, re, subprocess, sys, threading, time, urllib.request, urllib.error

BIN = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "deploy", "local-replica.sh")
DB = "weatherboard_drill"
PORTS = (18311, 18312)
SECONDS = int(os.environ.get("SECONDS_PER_PHASE", "15"))
TICK = os.sysconf("SC_CLK_TCK")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def rep(*args):
    return subprocess.run(["bash", SCRIPT, *args], check=True, capture_output=True, text=True).stdout.strip()


def http(port, method, path, body=None, token=None, timeout=10):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method, data=json.dumps(body).encode() if body is not None else None)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, None
    except Exception:
        return 0, None


def metrics(port):
    out = {}
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics") as r:
        for line in r.read().decode().splitlines():
            if line.startswith("db_reads_total{"):
                target = line.split('"')[1]
                out[target] = out.get(target, 0) + float(line.rsplit(" ", 1)[1])
    return out


def reads():
    total = {}
    for port in PORTS:
        for k, v in metrics(port).items():
            total[k] = total.get(k, 0) + v
    return total


def primary_port():
    url = rep("primary-url", DB)
    return int(re.search(r":(\d+)/", url).group(1))


def cluster_cpu(port):
    """utime + stime (s) of the postmaster listening on `port` and its children."""
    out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
    m = re.search(r"pid=(\d+)", out)
    if not m:
        return 0.0
    root = int(m.group(1))
    pids = [root] + [int(p) for p in subprocess.run(["pgrep", "-P", str(root)], capture_output=True, text=True).stdout.split()]
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / TICK


def wrk(port, path, seconds):
    out = subprocess.run(["wrk", "-t1", "-c8", f"-d{seconds}s", f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True).stdout
    total = int(re.search(r"(\d+) requests in", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return total, int(bad.group(1)) if bad else 0


def start_servers(read_url):
    env = dict(os.environ, DATABASE_URL=rep("url", DB), RATE_LIMITS="off", LOG_LEVEL="warning", WEATHER_PROVIDER="none",
               TRUSTED_PROXIES="127.0.0.1", DB_STATEMENT_TIMEOUT_MS="2000")
    if read_url:
        env["DATABASE_READ_URL"] = read_url
    servers = []
    for port in PORTS:
        servers.append(subprocess.Popen([BIN, "serve"], env=dict(env, PORT=str(port)), stdout=subprocess.DEVNULL,
                                        stderr=open(f"/tmp/weatherboard-drill-{port}.log", "w")))
    for port in PORTS:
        for _ in range(200):
            if http(port, "GET", "/healthz")[0] == 200:
                break
            time.sleep(0.05)
    return servers


def stop_servers(servers):
    for s in servers:
        s.terminate()
    for s in servers:
        s.wait(timeout=30)


def read_phase(label):
    """Anonymous list reads on both instances at once; the primary's CPU over the phase."""
    port = primary_port()
    before_reads, c0 = reads(), cluster_cpu(port)
    results = [None, None]

    def one(i):
        results[i] = wrk(PORTS[i], "/v1/posts?limit=20", SECONDS)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    cpu = cluster_cpu(port) - c0
    after = reads()
    total = sum(r[0] for r in results)
    bad = sum(r[1] for r in results)
    standby = sum(v - before_reads.get(k, 0) for k, v in after.items() if k != "primary")
    primary = after.get("primary", 0) - before_reads.get("primary", 0)
    share = standby / max(1, standby + primary)
    log(f"    {label}: {total:,} reads, non-2xx {bad}, standby share {share:.1%}, primary CPU {cpu:.2f} s = {cpu / total * 1000 * 1000:.1f} ms per 1,000 reads")
    return dict(reads=total, errors=bad, share=share, cpu=cpu, per_1000=cpu / max(1, total) * 1000)


def main():
    log("==> the pair: deploy/local-replica.sh start, a fresh database, migrate")
    rep("start")
    rep("delay", "0")
    rep("dropdb", DB)
    rep("createdb", DB)
    subprocess.run([BIN, "migrate"], env=dict(os.environ, DATABASE_URL=rep("url", DB)), check=True, capture_output=True)
    servers = start_servers(rep("read-url", DB))
    status, account = http(PORTS[0], "POST", "/v1/accounts")
    token = account["token"]
    log("==> seeding 10,000 posts")
    subprocess.run(["bash", SCRIPT, "psql", "primary", "-d", DB, "-c",
                    "ALTER TABLE posts DISABLE TRIGGER posts_stream_insert; "
                    f"INSERT INTO posts (author_id, region_id, weather_type, category, body) SELECT {account['account']['id']}, 1835848, 'rain', 'food', 'seeded ' || i FROM generate_series(1, 10000) i; "
                    "ALTER TABLE posts ENABLE TRIGGER posts_stream_insert", "-c", "VACUUM ANALYZE posts"], check=True)
    time.sleep(2)
    R = {}
    log(f"==> anonymous reads with the standby ({SECONDS} s, both instances)")
    R["with"] = read_phase("with the standby")
    stop_servers(servers)
    servers = start_servers(None)
    log(f"==> anonymous reads without it ({SECONDS} s, both instances)")
    R["without"] = read_phase("without a standby")
    stop_servers(servers)
    servers = start_servers(rep("read-url", DB))
    time.sleep(1)

    log("==> failover under writes: stop the primary (immediate), promote the standby")
    acked, statuses, stop = [], {}, threading.Event()
    times = []

    def writer(i):
        n = 0
        while not stop.is_set():
            port = PORTS[(i + n) % 2]
            n += 1
            s, body = http(port, "POST", "/v1/posts", {"weatherType": "rain", "category": "food", "regionId": "1835848", "body": f"drill {i}-{n}"}, token, timeout=15)
            statuses[s] = statuses.get(s, 0) + 1
            if s == 201:
                acked.append(body["id"])
                times.append(time.monotonic())
            else:
                time.sleep(0.05)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    [t.start() for t in threads]
    time.sleep(3)
    switch = time.monotonic()
    rep("promote")
    promoted = time.monotonic()
    time.sleep(12)
    stop.set()
    [t.join() for t in threads]
    # The longest stretch without an acknowledged write, from a second before the switch to the end.
    acks = sorted(t for t in times if t > switch - 1)
    gap = max((b - a for a, b in zip(acks, acks[1:])), default=float("nan"))
    R["failover"] = dict(gap=gap, promote_seconds=promoted - switch, statuses=statuses, acked=len(acked))
    missing = [i for i in acked if http(PORTS[0], "GET", f"/v1/posts/{i}", token=token)[0] != 200]
    R["failover"]["missing"] = len(missing)
    log(f"    gap {gap:.1f} s (promotion took {promoted - switch:.1f} s); statuses {statuses}; {len(acked)} acknowledged, {len(missing)} missing afterwards")
    stop_servers(servers)
    log("==> rebuilding the old primary as a standby of the new one")
    rep("rebuild")

    w, wo, f = R["with"], R["without"], R["failover"]
    print("\n| measure | value |")
    print("|---|---|")
    print(f"| anonymous reads served by the standby | {w['share']:.1%} of {w['reads']:,} |")
    print(f"| errors (non-2xx) during the read phases | {w['errors'] + wo['errors']} |")
    print(f"| primary CPU per 1,000 anonymous reads, with the standby / without | {w['per_1000'] * 1000:.1f} ms / {wo['per_1000'] * 1000:.1f} ms |")
    print(f"| failover gap (longest stretch without an acknowledged write) | {f['gap']:.1f} s (promotion {f['promote_seconds']:.1f} s) |")
    print(f"| write answers during the failover | {f['statuses']} (500s: {f['statuses'].get(500, 0)}) |")
    print(f"| acknowledged writes missing afterwards | {f['missing']} of {f['acked']} |")


main()
