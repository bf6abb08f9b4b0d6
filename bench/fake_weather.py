#!/usr/bin/env python3
"""A fake open-meteo for the weather bench: answers GET /v1/forecast with a recorded body after DELAY_MS,
observed at the current quarter hour (the server refuses an observation more than a day old), counts the calls. GET /__count returns the count; POST /__reset zeroes it. Prints its port on stdout.

    python3 bench/fake_weather.py [PORT] [DELAY_MS]
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 0
DELAY = (int(sys.argv[2]) if len(sys.argv) > 2 else 50) / 1000


def body():
    now = int(time.time()) // 900 * 900
    return json.dumps({
        "latitude": 37.55, "longitude": 127.0, "utc_offset_seconds": 0, "timezone": "GMT",
        "current": {"time": time.strftime("%Y-%m-%dT%H:%M", time.gmtime(now)), "interval": 900, "temperature_2m": 10.0,
                    "relative_humidity_2m": 61, "apparent_temperature": 8.5, "weather_code": 61, "cloud_cover": 100,
                    "pressure_msl": 1021.7, "wind_speed_10m": 5.0, "uv_index": 1.2},
    }).encode()


lock = threading.Lock()
calls = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, body, status=200):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        global calls
        if self.path.startswith("/__count"):
            with lock:
                return self.reply(json.dumps({"calls": calls}).encode())
        if self.path.startswith("/v1/forecast"):
            with lock:
                calls += 1
            time.sleep(DELAY)
            return self.reply(body())
        self.reply(b'{"error":true,"reason":"not found"}', 404)

    def do_POST(self):
        global calls
        if self.path.startswith("/__reset"):
            with lock:
                calls = 0
            return self.reply(b'{"calls":0}')
        self.reply(b"{}", 404)


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
