"""Upload flood (issue #19, point 2): what one hostile `POST /v1/media` costs the server's memory.

A chunked body (no Content-Length) of 40,000 text parts, each with its own name and 4 KB, sent as fast as the
server takes it; the server's RSS is read from /proc before and after (VmRSS) and its peak (VmHWM) is compared.
FLOODS requests run at once (default 1; the issue's "ten at once" is FLOODS=10).

    python3 bench/upload_flood.py BIN [DATABASE_URL]      (rate limits off; a throwaway MEDIA_DIR)
"""
import json, os, socket, subprocess, sys, tempfile, threading, time, urllib.request

BIN = sys.argv[1]
URL = sys.argv[2] if len(sys.argv) > 2 else os.environ["DATABASE_URL"]
PORT = int(os.environ.get("BENCH_FLOOD_PORT", "18091"))
FLOODS = int(os.environ.get("FLOODS", "1"))
PARTS, PART_BYTES = 40_000, 4096
BASE = f"http://127.0.0.1:{PORT}"
work = tempfile.mkdtemp(prefix="wb-flood-bench-")

env = dict(os.environ, DATABASE_URL=URL, PORT=str(PORT), RATE_LIMITS="off", LOG_LEVEL="error", WEATHER_PROVIDER="none",
           MEDIA_DIR=f"{work}/media")
subprocess.run([BIN, "migrate"], env=env, check=True, capture_output=True)
server = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(400):
    try:
        urllib.request.urlopen(BASE + "/healthz"); break
    except Exception:
        time.sleep(0.05)

def status(field):
    for line in open(f"/proc/{server.pid}/status"):
        if line.startswith(field): return int(line.split()[1]) / 1024  # MiB
    return 0.0

token = json.loads(urllib.request.urlopen(urllib.request.Request(BASE + "/v1/accounts", method="POST")).read())["token"]
# Warm the upload route once (a small refused upload) so the baseline holds what any upload loads.
urllib.request.urlopen(BASE + "/healthz").read()

def flood(result):
    boundary = "floodboundary"
    sock = socket.create_connection(("127.0.0.1", PORT))
    sock.sendall((f"POST /v1/media HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                  f"Content-Type: multipart/form-data; boundary={boundary}\r\nTransfer-Encoding: chunked\r\n\r\n").encode())
    answer = bytearray()
    def reader():
        # Reads while the body is sent, as a client that can see an early answer does.
        try:
            while True:
                data = sock.recv(65536)
                if not data: break
                answer.extend(data)
        except OSError:
            pass
    r = threading.Thread(target=reader); r.start()
    filler = b"x" * PART_BYTES
    sent = 0
    try:
        batch = []
        for i in range(PARTS):
            part = f"--{boundary}\r\nContent-Disposition: form-data; name=\"field{i}\"\r\n\r\n".encode() + filler + b"\r\n"
            batch.append(b"%x\r\n%s\r\n" % (len(part), part))
            if len(batch) == 16:
                sock.sendall(b"".join(batch)); sent += 16; batch = []
        tail = f"--{boundary}--\r\n".encode()
        sock.sendall(b"".join(batch) + b"%x\r\n%s\r\n0\r\n\r\n" % (len(tail), tail)); sent = PARTS
    except OSError as e:
        result["send_error"] = type(e).__name__
    result["parts_sent"] = sent
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    r.join(timeout=120)
    sock.close()
    head = bytes(answer).split(b"\r\n", 1)[0].decode(errors="replace")
    result["status"] = head
    result["body"] = bytes(answer).split(b"\r\n\r\n", 1)[-1][:200].decode(errors="replace")

time.sleep(0.5)
rss_before, hwm_before = status("VmRSS"), status("VmHWM")
results = [dict() for _ in range(FLOODS)]
start = time.perf_counter()
threads = [threading.Thread(target=flood, args=(results[i],)) for i in range(FLOODS)]
for t in threads: t.start()
for t in threads: t.join()
elapsed = time.perf_counter() - start
rss_after, hwm_after = status("VmRSS"), status("VmHWM")
healthy = urllib.request.urlopen(BASE + "/healthz").status

server.terminate()
server.wait(timeout=30)
print(f"binary: {BIN}")
print(f"{FLOODS} chunked request(s) of {PARTS} parts x {PART_BYTES} B with distinct names, {elapsed:.1f} s")
for r in results:
    print(f"- answer: {r.get('status')!r} {r.get('body')!r}; parts sent before the server stopped reading: {r.get('parts_sent')}"
          + (f" ({r['send_error']})" if "send_error" in r else ""))
print(f"- server RSS: {rss_before:.0f} MiB before, {rss_after:.0f} MiB after (delta {rss_after - rss_before:+.0f} MiB)")
print(f"- server peak RSS (VmHWM): {hwm_before:.0f} MiB before, {hwm_after:.0f} MiB after (growth {hwm_after - hwm_before:+.0f} MiB)")
print(f"- /healthz afterwards: {healthy}")
