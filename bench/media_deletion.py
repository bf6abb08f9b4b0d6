"""Account deletion with images (issue #19): accounts with 200 images each (a 1600×1200 JPEG, 4 on each of 50
posts) are deleted with `DELETE /v1/accounts/me`; the time of that request at the HTTP level, then how long until
an image URL of the deleted account answers 404 (the media sync, MEDIA_SYNC_SECONDS) and until the purger's pass
(`weatherboard purge`) has removed the files.

    python3 bench/media_deletion.py BIN [DATABASE_URL]      (rate limits off; a throwaway MEDIA_DIR)

With MEDIA_STORAGE=s3 and the S3_* / MEDIA_PUBLIC_BASE_URL variables set (e.g. from `deploy/dev s3-standin`), the
images go to that bucket instead; file counts are then not shown, and "404" is any answer but 200.
"""
import json, os, subprocess, sys, tempfile, time, urllib.request, uuid

BIN = sys.argv[1]
URL = sys.argv[2] if len(sys.argv) > 2 else os.environ["DATABASE_URL"]
PORT = int(os.environ.get("BENCH_MEDIA_PORT", "18091"))
BASE = f"http://127.0.0.1:{PORT}"
IMAGES, ACCOUNTS = int(os.environ.get("BENCH_DELETION_IMAGES", "200")), int(os.environ.get("BENCH_DELETION_ACCOUNTS", "3"))
work = tempfile.mkdtemp(prefix="wb-deletion-bench-")
S3 = os.environ.get("MEDIA_STORAGE") == "s3"

subprocess.run(["vips", "gaussnoise", f"{work}/noise.v", "1600", "1200", "--mean", "128", "--sigma", "40"], check=True)
subprocess.run(["vips", "bandjoin", f"{work}/noise.v {work}/noise.v {work}/noise.v", f"{work}/rgb.v"], check=True)
subprocess.run(["vips", "cast", f"{work}/rgb.v", f"{work}/photo.jpg[Q=85]", "uchar"], check=True)
photo = open(f"{work}/photo.jpg", "rb").read()

env = dict(os.environ, DATABASE_URL=URL, PORT=str(PORT), RATE_LIMITS="off", LOG_LEVEL="warning", WEATHER_PROVIDER="none",
           MEDIA_DIR=f"{work}/media")
subprocess.run([BIN, "migrate"], env=env, check=True, capture_output=True)
server = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(200):
    try:
        urllib.request.urlopen(BASE + "/healthz"); break
    except Exception:
        time.sleep(0.05)

def call(method, path, token=None, body=None, headers=None):
    r = urllib.request.Request(BASE + path, data=body, method=method)
    if token: r.add_header("Authorization", "Bearer " + token)
    for k, v in (headers or {}).items(): r.add_header(k, v)
    try:
        with urllib.request.urlopen(r, timeout=120) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()

def upload(token):
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.jpg\"\r\n\r\n".encode() + photo +
            f"\r\n--{boundary}--\r\n".encode())
    status, data = call("POST", "/v1/media", token, body, {"Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert status == 201, (status, data)
    return json.loads(data)

def files():
    if S3: return "-"
    return sum(len([f for f in fs if f.endswith(".jpg")]) for _, _, fs in os.walk(f"{work}/media"))

def account_with_images():
    token = json.loads(call("POST", "/v1/accounts")[1])["token"]
    media = [upload(token) for _ in range(IMAGES)]
    for i in range(0, IMAGES, 4):
        ids = [m["id"] for m in media[i:i + 4]]
        body = json.dumps({"weatherType": "rain", "category": "food", "body": "사진", "regionId": "1835848", "mediaIds": ids}).encode()
        status, data = call("POST", "/v1/posts", token, body, {"Content-Type": "application/json"})
        assert status == 201, (status, data)
    return token, media

results = []
for _ in range(ACCOUNTS):
    token, media = account_with_images()
    before = files()
    t = time.perf_counter()
    status, _ = call("DELETE", "/v1/accounts/me", token)
    ms = (time.perf_counter() - t) * 1000
    assert status == 204, status
    after = files()
    # Until the deleted account's last image URL answers 404 (every MEDIA_SYNC_SECONDS, 15 by default).
    t = time.perf_counter()
    def status(url):
        try:
            return urllib.request.urlopen(url, timeout=10).status
        except urllib.error.HTTPError as e:
            return e.code
    while status(media[-1]["url"]) == 200:
        time.sleep(0.1)
    gone_s = time.perf_counter() - t
    results.append((ms, before, after, gone_s))

t = time.perf_counter()
purge = subprocess.run([BIN, "purge"], env=env, check=True, capture_output=True, text=True).stdout.strip()
purge_s = time.perf_counter() - t
server.terminate(); server.wait(timeout=30)
print(f"| account | images | DELETE /v1/accounts/me ms | image files before → right after the answer | last image URL 404 after (s) |")
print("|---:|---:|---:|---|---:|")
for i, (ms, before, after, gone_s) in enumerate(results):
    print(f"| {i + 1} | {IMAGES} | {ms:.0f} | {before} → {after} | {gone_s:.1f} |")
print(f"\nthen `weatherboard purge` ({purge_s:.2f} s with its process start): {purge}; image files left: {files()}")
