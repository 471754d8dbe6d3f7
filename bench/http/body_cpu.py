#!/usr/bin/env python3
"""Hub CPU per HTTP request body, by body size (issue 14: bodies were copied whole per
chunk, quadratic in their size).

Starts `trackhub serve` from BIN (default .build/release), then for each size POSTs
REPEAT bodies of valid JSON to /v1/trips (a small route padded with an unknown field),
each written in 16 KiB chunks as a browser or curl would send a large upload, and reads
the hub's user+system CPU time from /proc/PID/stat around them. Prints one line per size
and a final JSON line.

    bench/http/body_cpu.py [--bin DIR] [--repeat 5]
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

SIZES_KIB = [256, 1024, 2048, 4000]
CHUNK = 16 * 1024


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def post(port, body):
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    head = f"POST /v1/trips HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    s.sendall(head.encode())
    for start in range(0, len(body), CHUNK):
        s.sendall(body[start:start + CHUNK])
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return int(data.split(b" ")[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "../../.build/release"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        hub = subprocess.Popen([os.path.join(args.bin, "trackhub"), "serve", "--listen", "127.0.0.1:0", "--data", f"{tmp}/data",
                                "--log-level", "warn"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            line = hub.stdout.readline()
            port = int(line.strip().rsplit(":", 1)[1])
            results = {}
            for kib in SIZES_KIB:
                pad = "p" * (kib * 1024 - 200)
                spent = 0.0
                for i in range(args.repeat):
                    body = json.dumps({"route": [[24.9, 60.1], [24.91, 60.1]], "pad": pad}).encode()
                    before = cpu_seconds(hub.pid)
                    status = post(port, body)
                    time.sleep(0.05)  # let the hub finish its answer's bookkeeping before reading its CPU
                    spent += cpu_seconds(hub.pid) - before
                    if status != 201:
                        print(f"{kib} KiB: answered {status}", file=sys.stderr)
                results[kib] = round(spent / args.repeat * 1000, 1)
                print(f"{kib:5d} KiB body: {results[kib]:7.1f} ms of hub CPU per request", flush=True)
            print(json.dumps({"cpu_ms_per_request_by_kib": results}))
        finally:
            hub.terminate()
            hub.wait(timeout=20)


if __name__ == "__main__":
    main()
