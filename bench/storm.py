#!/usr/bin/env python3
"""Cold-cache storm: REQUESTS requests spread evenly over the given region ids, CONCURRENCY at a time, in a
shuffled order. Prints `ok=<n> failed=<n> seconds=<s> p99_ms=<ms>`.

    python3 bench/storm.py BASE_URL REQUESTS CONCURRENCY ID...
"""
import random
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

base, total, concurrency, ids = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
paths = [f"/v1/regions/{ids[i % len(ids)]}/weather" for i in range(total)]
random.shuffle(paths)


def get(path):
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(base + path, timeout=30) as r:
            r.read()
            ok = r.status == 200
    except Exception:
        ok = False
    return ok, (time.perf_counter() - start) * 1000


start = time.perf_counter()
with ThreadPoolExecutor(max_workers=concurrency) as pool:
    results = list(pool.map(get, paths))
elapsed = time.perf_counter() - start
latencies = sorted(ms for _, ms in results)
ok = sum(1 for good, _ in results if good)
print(f"ok={ok} failed={total - ok} seconds={elapsed:.2f} p99_ms={latencies[int(len(latencies) * 0.99) - 1]:.1f}")
