"""Upload bench (issue #15): 8 concurrent clients uploading a 12 MP JPEG, then a 12 MP HEIC, to a live server;
uploads/s, p50/p99, /healthz p99 measured during the burst, the server's peak RSS, and `vips thumbnail` on the
same files from the command line for comparison.

    python3 bench/media.py BIN [DATABASE_URL]      (rate limits off; a throwaway MEDIA_DIR)
"""
import json, os, subprocess, sys, tempfile, threading, time, urllib.request, uuid

BIN = sys.argv[1]
URL = sys.argv[2] if len(sys.argv) > 2 else os.environ["DATABASE_URL"]
PORT = int(os.environ.get("BENCH_MEDIA_PORT", "18090"))
BASE = f"http://127.0.0.1:{PORT}"
CLIENTS, PER_CLIENT = 8, int(os.environ.get("BENCH_MEDIA_UPLOADS", "4"))
work = tempfile.mkdtemp(prefix="wb-media-bench-")

def run(*args):
    subprocess.run(args, check=True, capture_output=True)

# A 12 MP photo-like image (noise over a gradient), as JPEG and as HEIC.
run("vips", "gaussnoise", f"{work}/noise.v", "4000", "3000", "--mean", "128", "--sigma", "40")
run("vips", "bandjoin", f"{work}/noise.v {work}/noise.v {work}/noise.v", f"{work}/rgb.v")
run("vips", "cast", f"{work}/rgb.v", f"{work}/photo.jpg[Q=90]", "uchar")
run("vips", "copy", f"{work}/photo.jpg", f"{work}/photo.png")
run("heif-enc", "-q", "80", "-o", f"{work}/photo.heic", f"{work}/photo.png")

env = dict(os.environ, DATABASE_URL=URL, PORT=str(PORT), RATE_LIMITS="off", LOG_LEVEL="warning", WEATHER_PROVIDER="none",
           MEDIA_DIR=f"{work}/media", MEDIA_MAX_BYTES=str(32 * 1024 * 1024))
run(BIN, "migrate") if False else subprocess.run([BIN, "migrate"], env=env, check=True, capture_output=True)
server = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(200):
    try:
        urllib.request.urlopen(BASE + "/healthz"); break
    except Exception:
        time.sleep(0.05)

def rss(field):
    for line in open(f"/proc/{server.pid}/status"):
        if line.startswith(field): return int(line.split()[1]) // 1024
    return 0

# One account per client: an account has at most 2 uploads in flight (UploadSlots), a client address 8.
def new_token():
    req = urllib.request.Request(BASE + "/v1/accounts", method="POST")
    return json.loads(urllib.request.urlopen(req).read())["token"]

def upload(path, token):
    boundary = uuid.uuid4().hex
    data = open(path, "rb").read()
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\n".encode() + data +
            f"\r\n--{boundary}--\r\n".encode())
    r = urllib.request.Request(BASE + "/v1/media", data=body, method="POST")
    r.add_header("Authorization", "Bearer " + token)
    r.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    t = time.perf_counter()
    try:
        status = urllib.request.urlopen(r, timeout=120).status
    except urllib.error.HTTPError as e:
        status = e.code
    return status, (time.perf_counter() - t) * 1000

def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else float("nan")

def burst(path):
    latencies, statuses, health = [], [], []
    stop = threading.Event()
    def prober():
        while not stop.is_set():
            t = time.perf_counter()
            urllib.request.urlopen(BASE + "/healthz").read()
            health.append((time.perf_counter() - t) * 1000)
            time.sleep(0.01)
    def client():
        token = new_token()
        for _ in range(PER_CLIENT):
            s, ms = upload(path, token)
            statuses.append(s); latencies.append(ms)
    probe = threading.Thread(target=prober); probe.start()
    start = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for t in threads: t.start()
    for t in threads: t.join()
    elapsed = time.perf_counter() - start
    stop.set(); probe.join()
    ok = sum(1 for s in statuses if s == 201)
    return {"ok": ok, "other": sorted(set(s for s in statuses if s != 201)), "per_s": ok / elapsed, "p50": pct(latencies, 50),
            "p99": pct(latencies, 99), "health_p99": pct(health, 99), "health_n": len(health)}

def cli(path):
    t = time.perf_counter()
    run("vips", "thumbnail", path, f"{work}/cli.jpg", "2048")
    return (time.perf_counter() - t) * 1000

rss_before = rss("VmRSS")
results = {name: burst(f"{work}/{file}") for name, file in [("12 MP JPEG", "photo.jpg"), ("12 MP HEIC", "photo.heic")]}
peak = rss("VmHWM")
server.terminate(); server.wait(timeout=30)
print(f"| file | uploads/s ({CLIENTS} clients) | p50 ms | p99 ms | non-201 | /healthz p99 during burst (ms, n) | `vips thumbnail` CLI ms | upload p50 / CLI |")
print("|---|---:|---:|---:|---|---:|---:|---:|")
for name, file in [("12 MP JPEG", "photo.jpg"), ("12 MP HEIC", "photo.heic")]:
    r = results[name]; c = cli(f"{work}/{file}")
    print(f"| {name} | {r['per_s']:.2f} | {r['p50']:.0f} | {r['p99']:.0f} | {r['other'] or '-'} | {r['health_p99']:.1f} ({r['health_n']}) | {c:.0f} | {r['p50'] / c:.1f}× |")
print(f"\nserver RSS: {rss_before} MiB before, peak {peak} MiB")
