#!/usr/bin/env python3
"""OsmAnd fixes per second acked over keep-alive HTTP connections (issue 18).

Starts the release hub on a fresh data directory, registers one device per connection,
each bound to its own trip, then every connection sends `GET /v1/osmand?...` one after the
other on one keep-alive connection, as a phone with a backlog does: each 200 is a fix
stored durably (PROTOCOL 11). Prints one line with the acked rate and latencies.

    swift build -c release
    python3 bench/devices/osmand_keepalive.py --connections 16 --seconds 10
"""

import argparse
import http.client
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time


def start_hub(binary, data):
    proc = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--data", data, "--log-level", "warn",
                             "--max-fix-rate", "1000000"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("listening on http://"):
            host, port = line.strip()[len("listening on http://"):].rsplit(":", 1)
            return proc, host, int(port)
        if not line:
            break
    proc.kill()
    sys.exit("the hub did not start")


def request(conn, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
    resp = conn.getresponse()
    return resp.status, resp.read()


def worker(args):
    host, port, index, seconds, start_at = args
    conn = http.client.HTTPConnection(host, port, timeout=30)
    device = f"bench-device-{index:04d}-0123456789"
    t0 = int(time.time() * 1000) - 3_600_000
    while time.time() < start_at:
        time.sleep(0.001)
    end = time.time() + seconds
    latencies = []
    n = 0
    while time.time() < end:
        lat = 38.7 + (n % 1000) * 1e-5
        began = time.perf_counter()
        status, _ = request(conn, "GET", f"/v1/osmand?id={device}&lat={lat}&lon=-9.14&timestamp={t0 + n * 1000}&speed=10&altitude=50&batt=80")
        latencies.append(time.perf_counter() - began)
        if status != 200:
            raise SystemExit(f"answer {status}")
        n += 1
    conn.close()
    return n, latencies


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "../../.build/release/trackhub"))
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trackhub-osmand-bench-") as tmp:
        proc, host, port = start_hub(options.bin, os.path.join(tmp, "data"))
        try:
            conn = http.client.HTTPConnection(host, port, timeout=30)
            for i in range(options.connections):
                trip = f"bench-trip-{i:04d}"
                assert request(conn, "POST", "/v1/trips", {"id": trip})[0] == 201
                assert request(conn, "PUT", f"/v1/devices/bench-device-{i:04d}-0123456789", {"trip": trip})[0] == 200
            conn.close()
            start_at = time.time() + 0.5
            with multiprocessing.Pool(options.connections) as pool:
                results = pool.map(worker, [(host, port, i, options.seconds, start_at) for i in range(options.connections)])
        finally:
            proc.terminate()
            proc.wait(20)
    total = sum(n for n, _ in results)
    latencies = sorted(l for _, ls in results for l in ls)
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[int(len(latencies) * 0.99)] * 1000
    print(f"osmand keep-alive: {options.connections} connections, {total} fixes acked in {options.seconds:.0f} s: "
          f"{total / options.seconds:.0f} fixes/s, 200 after p50 {p50:.1f} ms, p99 {p99:.1f} ms")


if __name__ == "__main__":
    main()
