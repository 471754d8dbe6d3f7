#!/usr/bin/env python3
"""Acked fixes per second and ack latency with the durable (SQLite) store.

Starts the release `trackhub serve` on a fresh data directory, creates one trip per courier
connection, then every connection pushes fixes (with seq, each applied) keeping `--window`
fixes in flight: a new fix goes out as soon as an ack comes back ("as fast as acks allow").
Reports acked fixes/s and the latency from sending a fix to receiving its ack (p50/p99),
for each connection count given.

The client is a minimal WebSocket client on raw asyncio streams (pre-built frames, no JSON
parsing of acks: acks come in order per connection), spread over several processes, so
that the measurement is the hub's, not the client's. Client and hub share the machine.

    swift build -c release
    python3 bench/store/ack_throughput.py --bin "$(swift build -c release --show-bin-path)" \
        --connections 1,100,1000
"""

import argparse
import asyncio
import http.client
import json
import multiprocessing as mp
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque

HANDSHAKE = (
    "GET /v1/ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    "Sec-WebSocket-Protocol: trackhub.v1\r\n\r\n"
)


def frame(payload: bytes) -> bytes:
    """A masked client text frame with an all-zero mask (the payload stays as is)."""
    n = len(payload)
    if n < 126:
        header = bytes((0x81, 0x80 | n))
    else:
        header = bytes((0x81, 0x80 | 126)) + n.to_bytes(2, "big")
    return header + b"\0\0\0\0" + payload


async def courier(host, port, trip, window, base_ts, t_start, t_end, out):
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(HANDSHAKE.format(host=host, port=port).encode())
    response = await reader.readuntil(b"\r\n\r\n")
    if b" 101 " not in response.split(b"\r\n", 1)[0]:
        raise RuntimeError(f"upgrade refused: {response[:80]!r}")
    prefix = ('{"op":"fix","trip":"%s","seq":' % trip).encode()
    sent = deque()
    seq = 0

    def send_one():
        nonlocal seq
        # A device clock that cannot run ahead of the hub's: 10 ms of device time per fix,
        # from a week ago, leaves room for 60 million fixes per courier before `ts` would pass
        # the hub's clock (it used to advance 1 s per fix and ran past section 3's 5-minute
        # skew after ~605 000 fixes). 0.55 m per 10 ms is 55 m/s, under max_speed_mps.
        lat = 48.0 + (seq % 1_000_000) * 0.000005  # stays a valid latitude however long the run
        payload = prefix + b'%d,"ts":%d,"lat":%.7f,"lon":11.0,"duration_ms":0}' % (seq, base_ts + seq * 10, lat)
        seq += 1
        sent.append(time.perf_counter())
        writer.write(frame(payload))

    for _ in range(window):
        send_one()
    acked = 0
    latencies = out["latencies"]
    buffer = b""
    while True:
        chunk = await reader.read(65536)
        if not chunk:
            raise RuntimeError("hub closed the connection")
        buffer += chunk
        now = time.perf_counter()
        position = 0
        replies = 0
        while True:
            if len(buffer) - position < 2:
                break
            opcode = buffer[position] & 0x0F
            length = buffer[position + 1] & 0x7F
            start = position + 2
            if length == 126:
                if len(buffer) - position < 4:
                    break
                length = int.from_bytes(buffer[position + 2:position + 4], "big")
                start = position + 4
            elif length == 127:
                if len(buffer) - position < 10:
                    break
                length = int.from_bytes(buffer[position + 2:position + 10], "big")
                start = position + 10
            if len(buffer) < start + length:
                break
            body = buffer[start:start + length]
            position = start + length
            if opcode == 1:
                if body.startswith(b'{"type":"ack"') or b'"type":"ack"' in body:
                    sent_at = sent.popleft()
                    if t_start <= now < t_end:
                        acked += 1
                        latencies.append(now - sent_at)
                    replies += 1
                elif b'"type":"error"' in body:
                    raise RuntimeError(body.decode())
            elif opcode == 9:  # ping → pong
                writer.write(bytes((0x8A, 0x80 | length)) + b"\0\0\0\0" + body)
        buffer = buffer[position:]
        if now >= t_end:
            break
        for _ in range(replies):
            send_one()
    out["acked"] += acked
    writer.close()


def client_process(host, port, trips, window, base_ts, t_start, t_end, queue):
    out = {"acked": 0, "latencies": []}

    async def main():
        await asyncio.gather(*(courier(host, port, trip, window, base_ts, t_start, t_end, out) for trip in trips))

    try:
        asyncio.run(main())
        queue.put((out["acked"], out["latencies"], None))
    except Exception as error:  # report, do not hang the parent
        queue.put((0, [], repr(error)))


def start_hub(binary, data_dir, sync):
    proc = subprocess.Popen(
        [os.path.join(binary, "trackhub"), "serve", "--listen", "127.0.0.1:0", "--data", data_dir,
         "--sync", sync, "--max-fix-rate", "1000000", "--log-level", "warn"],
        stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("listening on http://"):
        proc.kill()
        raise RuntimeError("hub did not start")
    host, port = line.strip()[len("listening on http://"):].rsplit(":", 1)
    return proc, host, int(port)


def run(binary, connections, window, seconds, warmup, processes, sync):
    data_dir = tempfile.mkdtemp(prefix="trackhub-bench-")
    proc, host, port = start_hub(binary, data_dir, sync)
    try:
        trips = [f"bench-{connections}-{i}" for i in range(connections)]
        conn = http.client.HTTPConnection(host, port, timeout=30)
        for trip in trips:
            conn.request("POST", "/v1/trips", body=json.dumps({"id": trip}), headers={"content-type": "application/json"})
            response = conn.getresponse()
            response.read()
            if response.status != 201:
                raise RuntimeError(f"create {trip}: {response.status}")
        conn.close()
        base_ts = int(time.time() * 1000) - 7 * 86_400_000
        t_start = time.perf_counter() + 1.0 + warmup  # time for every client to connect first
        t_end = t_start + seconds
        processes = max(1, min(processes, connections))
        queue = mp.Queue()
        workers = []
        for p in range(processes):
            mine = trips[p::processes]
            worker = mp.Process(target=client_process, args=(host, port, mine, window, base_ts, t_start, t_end, queue))
            worker.start()
            workers.append(worker)
        total = 0
        latencies = []
        for _ in workers:
            acked, lat, error = queue.get(timeout=seconds + warmup + 120)
            if error:
                raise RuntimeError(error)
            total += acked
            latencies.extend(lat)
        for worker in workers:
            worker.join()
        db_size = sum(os.path.getsize(os.path.join(data_dir, f)) for f in os.listdir(data_dir))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data_dir, ignore_errors=True)
    latencies.sort()

    def pct(q):
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else float("nan")

    return {
        "connections": connections, "window": window, "sync": sync, "seconds": seconds,
        "acked": total, "acked_per_s": round(total / seconds), "p50_ms": round(pct(0.50), 2),
        "p99_ms": round(pct(0.99), 2), "client_processes": processes, "data_bytes": db_size,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.environ.get("TRACKHUB_BIN"), help="directory of the release trackhub binary")
    parser.add_argument("--connections", default="1,100,1000")
    parser.add_argument("--window", default="", help="fixes in flight per connection, per connection count (default 256,8,2)")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--processes", type=int, default=2, help="client processes")
    parser.add_argument("--sync", default="normal", choices=["normal", "full"])
    args = parser.parse_args()
    if not args.bin:
        sys.exit("--bin or TRACKHUB_BIN: the release build's bin directory")
    counts = [int(c) for c in args.connections.split(",")]
    defaults = {1: 256, 100: 8, 1000: 2}
    windows = [int(w) for w in args.window.split(",")] if args.window else [defaults.get(c, 4) for c in counts]
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; sync={args.sync}", flush=True)
    print(f"{'connections':>11} {'window':>6} {'acked/s':>9} {'p50 ms':>8} {'p99 ms':>8}", flush=True)
    for count, window in zip(counts, windows):
        r = run(args.bin, count, window, args.seconds, args.warmup, args.processes, args.sync)
        print(f"{r['connections']:>11} {r['window']:>6} {r['acked_per_s']:>9} {r['p50_ms']:>8} {r['p99_ms']:>8}   {json.dumps(r)}", flush=True)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    main()
