"""What the bench scripts share: the repository's paths, subprocesses, a fresh database on the local PostgreSQL, the
cluster log's statements, and the posts the route benches seed."""
import json, os, re, signal, subprocess, sys, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PG = os.path.join(ROOT, "deploy", "local-postgres.sh")
RESULTS = os.path.join(ROOT, "bench", "results")
os.makedirs(RESULTS, exist_ok=True)


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def fresh_database(name):
    """Drops and creates database `name` on the local cluster: its URL, and a psql that runs one statement there."""
    sh(PG, "dropdb", name)
    sh(PG, "createdb", name)
    url = sh(PG, "url", name).strip()

    def psql(sql):
        return sh("psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", url, "-c", sql).strip()

    return url, psql


LOG_ENTRY = re.compile(r"^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[(\d+)\] ([A-Z]+):  (.*)$")
PARAMETER = re.compile(r"\$(\d+) = (NULL|'((?:[^']|'')*)')")


def logged_statements(text):
    """(pid, statement, {n: value}) of every statement in a stretch of the cluster's log (log_statement = all): the
    parameters from the DETAIL line that follows an execute (None for NULL)."""
    entries = []
    for line in text.splitlines():
        m = LOG_ENTRY.match(line)
        if m:
            entries.append([m.group(1), m.group(2), m.group(3)])
        elif entries:
            entries[-1][2] += "\n" + line
    out = []
    for pid, kind, body in entries:
        if kind == "LOG":
            m = re.match(r"(?:execute [^:]+|statement): (.*)", body, re.S)
            if m:
                out.append((pid, m.group(1), {}))
        elif kind == "DETAIL" and out and body.startswith("parameters:"):
            out[-1][2].update({int(n): (None if v == "NULL" else raw.replace("''", "'")) for n, v, raw in PARAMETER.findall(body)})
    return out


def seed_posts_sql(author, count):
    """An INSERT of `count` posts by `author` (an SQL expression of `i`, the post's number): five regions, every weather
    type and category in turn, and conditions on three posts in four, their feels-like spread over every band (CONTRACT
    §9; as bench/sql/seed_scale.sql)."""
    return f"""INSERT INTO posts (author_id, region_id, weather_type, category, title, body,
                   conditions_weather_type, conditions_feels_like, conditions_band, conditions_observed_at)
SELECT {author}, (ARRAY[1835848,1838524,1843564,1835329,1846266])[1 + i % 5],
       (ARRAY['clearSky','fewClouds','scatteredClouds','brokenClouds','showerRain','rain','thunderStorm','snow','mist'])[1 + i % 9],
       (ARRAY['food','place','music','outfit','activity'])[1 + i % 5], 'title ' || i, '비 오는 날 추천 ' || i,
       CASE WHEN f.feels IS NOT NULL THEN 'rain' END, f.feels,
       CASE WHEN f.feels >= 28 THEN 'hot' WHEN f.feels >= 23 THEN 'warm' WHEN f.feels >= 20 THEN 'mild' WHEN f.feels >= 17 THEN 'cool'
            WHEN f.feels >= 12 THEN 'chilly' WHEN f.feels >= 9 THEN 'cold' WHEN f.feels >= 5 THEN 'veryCold' WHEN f.feels IS NOT NULL THEN 'freezing' END,
       CASE WHEN f.feels IS NOT NULL THEN now() END
FROM generate_series(1, {count}) AS i
CROSS JOIN LATERAL (SELECT CASE WHEN i % 4 <> 3 THEN (((i * 13) % 450) - 100) / 10.0 END::numeric(4,1) AS feels) f"""


def wrk(url, conns, seconds, token=None, method="GET", body=None):
    """`wrk -t1` on `url` (with a bearer token if given; another method and a JSON body through a wrk script):
    requests a second, p99 in ms, and the non-2xx/3xx count."""
    args = ["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--latency"]
    if token:
        args += ["-H", f"Authorization: Bearer {token}"]
    script = None
    if method != "GET" or body is not None:
        import json, tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
            f.write(f"wrk.method = {json.dumps(method)}\n")
            if body is not None:
                f.write(f"wrk.body = {json.dumps(json.dumps(body))}\n")
                f.write('wrk.headers["Content-Type"] = "application/json"\n')
            script = f.name
        args += ["-s", script]
    out = subprocess.run(args + [url], capture_output=True, text=True).stdout
    if script:
        os.unlink(script)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    m = re.search(r"\s99%\s+([\d.]+)(us|ms|s)", out)
    p99 = float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)] if m else float("nan")
    return rps, p99, int(non2xx.group(1)) if non2xx else 0


def http_json(base, method, path, body=None, token=None):
    """One JSON request to a server under bench (with a bearer token if given): the decoded answer."""
    req = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body is not None else None)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read() or b"null")


def start_server(binary, env, port):
    """`weatherboard serve` on `port` with `env`, once `/healthz` answers."""
    p = subprocess.Popen([binary, "serve"], env=dict(env, PORT=str(port)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz")
            return p
        except Exception:
            time.sleep(0.05)
    raise RuntimeError("the server did not start")


def stop_server(p):
    """SIGTERM, and the graceful shutdown waited for."""
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
