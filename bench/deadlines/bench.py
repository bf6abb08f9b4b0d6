"""Held connections against the deadlines (issue #35). See `run`."""
import asyncio, json, os, statistics, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import RESULTS, fresh_database, log, sh, start_server, stop_server, wrk  # noqa: E402

BINARY = sys.argv[1]
PORT = 18350
SILENT = int(os.environ.get("SILENT", "3000"))
SLOWLORIS = int(os.environ.get("SLOWLORIS", "500"))
STALLED = int(os.environ.get("STALLED", "500"))
HEADER = int(os.environ.get("HEADER_TIMEOUT_SECONDS", "60"))


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def healthz(seconds=10):
    rps, p99, bad = wrk(f"http://127.0.0.1:{PORT}/healthz", 8, seconds)
    return {"rps": round(rps), "p99_ms": round(p99, 2), "non2xx": bad}


async def hold(kind, opened):
    """One held connection: what it sends, and when and how it ended (seconds after it opened, 408 read or not)."""
    start = time.monotonic()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", PORT, limit=1 << 16)
    except OSError as e:
        return {"kind": kind, "error": str(e)}
    opened.append(1)
    received = b""

    async def read_all():
        nonlocal received
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                return
            received += chunk

    reading = asyncio.ensure_future(read_all())
    try:
        if kind == "slowloris":
            line = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
            for byte in line:
                if reading.done():
                    break
                writer.write(bytes([byte]))
                await asyncio.sleep(2)
        elif kind == "stalled":
            writer.write(b"POST /v1/posts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"body\":")
        await asyncio.wait_for(reading, timeout=HEADER + 120)
    except (asyncio.TimeoutError, ConnectionError, OSError):
        pass
    ended = time.monotonic() - start
    writer.close()
    status = received.split(b" ", 2)[1].decode() if received.startswith(b"HTTP/1.1 ") else None
    statuses = [part.split(b" ", 2)[1].decode() for part in received.split(b"HTTP/1.1 ")[1:] if b" " in part] if received else []
    return {"kind": kind, "ended_s": ended, "first": status, "statuses": [s for s in statuses]}


async def main():
    url, _ = fresh_database("weatherboard_bench_deadlines")
    env = dict(os.environ, DATABASE_URL=url, WEATHER_PROVIDER="none", RATE_LIMITS="off", LOG_LEVEL="warning")
    sh(BINARY, "migrate", env=env)
    server = start_server(BINARY, env, PORT)
    result = {"silent": SILENT, "slowloris": SLOWLORIS, "stalled": STALLED, "header_timeout_s": HEADER}
    try:
        loop = asyncio.get_running_loop()
        result["before"] = dict(healthz(), rss_mib=round(rss_mib(server.pid), 1))
        log("before", result["before"])
        opened = []
        tasks = [asyncio.ensure_future(hold("silent", opened)) for _ in range(SILENT)]
        tasks += [asyncio.ensure_future(hold("slowloris", opened)) for _ in range(SLOWLORIS)]
        tasks += [asyncio.ensure_future(hold("stalled", opened)) for _ in range(STALLED)]
        await asyncio.sleep(10)
        result["held"] = len(opened)
        during = await loop.run_in_executor(None, healthz, 20)
        result["during"] = dict(during, rss_mib=round(rss_mib(server.pid), 1))
        log("during", result["during"], "held", len(opened))
        outcomes = await asyncio.gather(*tasks)
        result["after"] = dict(await loop.run_in_executor(None, healthz, 10), rss_mib=round(rss_mib(server.pid), 1))
        log("after", result["after"])
        for kind in ("silent", "slowloris", "stalled"):
            mine = [o for o in outcomes if o["kind"] == kind and "ended_s" in o]
            ends = [o["ended_s"] for o in mine]
            firsts = {}
            for o in mine:
                firsts[str(o["first"])] = firsts.get(str(o["first"]), 0) + 1
            result[kind + "_ended"] = {
                "count": len(mine),
                "errors": sum(1 for o in outcomes if o["kind"] == kind and "error" in o),
                "min_s": round(min(ends), 2) if ends else None,
                "median_s": round(statistics.median(ends), 2) if ends else None,
                "max_s": round(max(ends), 2) if ends else None,
                "answers": firsts,
            }
            log(kind, result[kind + "_ended"])
        metrics = sh("curl", "-s", f"http://127.0.0.1:{PORT}/metrics")
        result["deadline_metrics"] = [l for l in metrics.splitlines() if l.startswith("http_connection_deadlines_total")]
        log("\n".join(result["deadline_metrics"]))
    finally:
        stop_server(server)
    out = os.path.join(RESULTS, "deadlines.json")
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result, indent=1))


asyncio.run(main())
