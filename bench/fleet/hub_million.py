#!/usr/bin/env python3
"""A hub with a million trips: the fleet tick under a moving fleet (issue 21).

trackhub-load plays one trip per courier connection, so it cannot reach a million trips
(one open file each). This tool feeds many trips per connection instead:

1. starts a release hub on loopback (open, no JWT, a fresh data directory; `--max-trips`
   and `--max-fix-rate` raised so the limits do not cut the run, `--ping-interval` long),
   or uses `--url`;
2. creates `--trips` trips with `POST /v1/trips` on `--http-conns` keep-alive connections,
   one request in flight on each (the API has no bulk create);
3. gives every trip a first fix (PROTOCOL 8: only trips with a marker are in the fleet),
   over `--ws-conns` WebSocket connections, `--window` fixes in flight on each (the `fix`
   op names its trip, so one connection feeds many trips);
4. keeps one fleet viewer per `--zooms` entry connected (a `viewport` op), and for each
   rate of `--rates`, `--seconds` of fixes to the first `--moving` share of the trips,
   cycling through them at that many fixes per second (0: every moving trip once a
   second) or as fast as the hub acks, whichever is lower; each fix carries `duration_ms`
   = the time until that trip's next fix at that rate (at most 60 s), so at a rate the
   hub keeps up with every moving rider keeps moving between its fixes;
5. samples /metrics (`trackhub_fleet_tick_seconds`, `trackhub_fleet_ticks_total`, the
   last rebuild) and the hub's CPU and resident set, and prints what it saw, ending with
   one JSON line.

Positions: around 20 cities as bench/fleet/compare.py and `trackhub-bench fleet` place
them (60 % within σ 3 km of a centre, the rest σ 15 km); moving riders drive straight
at 10 m/s. Python stdlib only: raw sockets, WebSocket frames with a zero mask key.

  python3 bench/fleet/hub_million.py --bin .build/release --trips 1000000 --moving 0.2 --rates 0,auto --seconds 90
"""

import argparse
import asyncio
import base64
import fcntl
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from array import array

CITIES = [  # (lat, lon, weight), as compare.py
    (60.1699, 24.9384, 3), (51.5074, -0.1278, 8), (48.8566, 2.3522, 7), (52.5200, 13.4050, 5),
    (40.4168, -3.7038, 5), (38.7223, -9.1393, 3), (40.7128, -74.0060, 9), (41.8781, -87.6298, 5),
    (37.7749, -122.4194, 4), (19.4326, -99.1332, 7), (-23.5505, -46.6333, 8), (-34.6037, -58.3816, 5),
    (6.5244, 3.3792, 6), (30.0444, 31.2357, 6), (19.0760, 72.8777, 9), (1.3521, 103.8198, 4),
    (35.6762, 139.6503, 10), (-33.8688, 151.2093, 4), (-36.8485, 174.7633, 2), (-18.1248, 178.4501, 1),
]

# One viewer per zoom: a bbox a map at that zoom shows (about 1 000 px wide).
VIEWPORTS = {
    3: [-180, -85, 180, 85],
    5: [-30, 20, 60, 65],            # Europe and Africa's north
    8: [-2.0, 50.5, 2.0, 52.5],      # London and around
    11: [139.3, 35.4, 140.0, 35.9],  # Tokyo
    14: [139.70, 35.65, 139.78, 35.70],  # central Tokyo
}


def place_riders(n, seed):
    """n (lat, lon) around the cities, in two arrays."""
    rng = random.Random(seed)
    weights = [c[2] for c in CITIES]
    lats, lons = array("d"), array("d")
    picks = rng.choices(range(len(CITIES)), weights=weights, k=n)
    for k in picks:
        clat, clon, _ = CITIES[k]
        sigma = 3.0 if rng.random() < 0.6 else 15.0
        lat = max(-85.0, min(85.0, clat + rng.gauss(0, sigma / 111.32)))
        lon = clon + rng.gauss(0, sigma / (111.32 * math.cos(math.radians(clat))))
        lon = (lon + 180.0) % 360.0 - 180.0
        lats.append(lat)
        lons.append(lon)
    return lats, lons


def trip_id(k):
    return "m%07d" % k


# ---------------------------------------------------------------- HTTP


async def http_request(reader, writer, host, method, path, body=b""):
    head = "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n" % (method, path, host, len(body))
    if body:
        head += "Content-Type: application/json\r\n"
    writer.write(head.encode() + b"\r\n" + body)
    status_head = await reader.readuntil(b"\r\n\r\n")
    status = int(status_head[9:12])
    m = re.search(rb"(?i)content-length:\s*(\d+)", status_head)
    length = int(m.group(1)) if m else 0
    data = await reader.readexactly(length) if length else b""
    return status, data


async def http_get(host, port, path):
    reader, writer = await asyncio.open_connection(host, port)
    try:
        return await http_request(reader, writer, "%s:%d" % (host, port), "GET", path)
    finally:
        writer.close()


async def create_trips(host, port, n, conns):
    """POST /v1/trips for trips 0..n-1 on `conns` keep-alive connections."""
    next_k = iter(range(n))
    failures = []

    async def worker():
        reader, writer = await asyncio.open_connection(host, port)
        hostname = "%s:%d" % (host, port)
        for k in next_k:
            body = b'{"id":"%s"}' % trip_id(k).encode()
            status, data = await http_request(reader, writer, hostname, "POST", "/v1/trips", body)
            if status != 201 and status != 409:  # 409: already there (a rerun on --url)
                failures.append((status, data[:200]))
                if len(failures) > 10:
                    raise RuntimeError("creates failing: %r" % failures[:3])
        writer.close()

    await asyncio.gather(*(worker() for _ in range(conns)))
    return failures


# ---------------------------------------------------------------- WebSocket


class WS:
    """A minimal WebSocket client: text frames out (zero mask key), frames in, pings answered."""

    def __init__(self, reader, writer, on_message):
        self.reader, self.writer, self.on_message = reader, writer, on_message
        self.closed = None

    @classmethod
    async def connect(cls, host, port, on_message):
        reader, writer = await asyncio.open_connection(host, port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(("GET /v1/ws HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: trackhub.v1\r\n\r\n"
                      % (host, port, key)).encode())
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise RuntimeError("upgrade refused: %r" % head[:100])
        ws = cls(reader, writer, on_message)
        ws.task = asyncio.get_running_loop().create_task(ws._read())
        return ws

    @staticmethod
    def frame(payload, opcode=0x1):
        n = len(payload)
        if n < 126:
            head = bytes((0x80 | opcode, 0x80 | n))
        elif n < 65536:
            head = bytes((0x80 | opcode, 0x80 | 126)) + n.to_bytes(2, "big")
        else:
            head = bytes((0x80 | opcode, 0x80 | 127)) + n.to_bytes(8, "big")
        return head + b"\0\0\0\0" + payload  # a zero mask key leaves the payload as it is

    def send(self, payloads):
        self.writer.write(b"".join(WS.frame(p) for p in payloads))

    async def _read(self):
        buf = bytearray()
        try:
            while True:
                data = await self.reader.read(1 << 18)
                if not data:
                    self.closed = "eof"
                    return
                buf += data
                pos = 0
                while True:
                    if len(buf) - pos < 2:
                        break
                    b0, b1 = buf[pos], buf[pos + 1]
                    n = b1 & 0x7F
                    hl = 2
                    if n == 126:
                        if len(buf) - pos < 4:
                            break
                        n = int.from_bytes(buf[pos + 2:pos + 4], "big")
                        hl = 4
                    elif n == 127:
                        if len(buf) - pos < 10:
                            break
                        n = int.from_bytes(buf[pos + 2:pos + 10], "big")
                        hl = 10
                    if len(buf) - pos < hl + n:
                        break
                    payload = bytes(buf[pos + hl:pos + hl + n])
                    pos += hl + n
                    op = b0 & 0x0F
                    if op == 0x9:
                        self.writer.write(WS.frame(payload, 0xA))
                    elif op == 0x8:
                        self.closed = "close %r" % payload[:2]
                        return
                    elif op == 0x1:
                        self.on_message(payload)
                del buf[:pos]
        except (ConnectionError, asyncio.IncompleteReadError) as e:
            self.closed = repr(e)


class FixFeed:
    """Fixes over several connections, `window` unacked on each, at most `rate` a second."""

    def __init__(self):
        self.acked = 0
        self.applied = 0
        self.errors = 0
        self.error_samples = []
        self.sent = 0

    def counter(self, conn):
        def on_message(payload):
            if b'"type":"ack"' in payload:
                conn["out"] -= 1
                self.acked += 1
                if b'"applied":true' in payload:
                    self.applied += 1
                conn["ev"].set()
            elif b'"type":"error"' in payload:
                conn["out"] -= 1
                self.errors += 1
                if len(self.error_samples) < 5:
                    self.error_samples.append(payload[:200].decode(errors="replace"))
                conn["ev"].set()
        return on_message

    async def run(self, host, port, conns, window, make_fix, keys, rate, until, batch=200):
        """Sends make_fix(key, now_ms) for each key from the iterator `keys` until it ends or
        time `until` passes; `rate` None: as fast as acks allow."""
        started = time.monotonic()
        sent_at_start = self.sent
        stop = False

        async def worker():
            nonlocal stop
            conn = {"out": 0, "ev": asyncio.Event()}
            ws = await WS.connect(host, port, self.counter(conn))
            try:
                while not stop:
                    if ws.closed:
                        raise RuntimeError("fix connection closed: %s" % ws.closed)
                    now = time.monotonic()
                    if until is not None and now >= until:
                        break
                    room = window - conn["out"]
                    if rate is not None:
                        room = min(room, int(rate * (now - started)) - (self.sent - sent_at_start))
                    if room < min(batch, window // 4, max(1, (rate or 0) // (20 * conns)) if rate else batch):
                        conn["ev"].clear()
                        if rate is not None and window - conn["out"] >= batch:
                            await asyncio.sleep(0.005)
                        else:
                            try:
                                await asyncio.wait_for(conn["ev"].wait(), 1.0)
                            except asyncio.TimeoutError:
                                pass
                        continue
                    now_ms = int(time.time() * 1000)
                    payloads = []
                    for _ in range(min(room, batch)):
                        key = next(keys, None)
                        if key is None:
                            stop = True
                            break
                        payloads.append(make_fix(key, now_ms))
                    if payloads:
                        conn["out"] += len(payloads)
                        self.sent += len(payloads)
                        ws.send(payloads)
                        await ws.writer.drain()
                # the acks still in flight
                deadline = time.monotonic() + 30
                while conn["out"] > 0 and time.monotonic() < deadline and not ws.closed:
                    conn["ev"].clear()
                    try:
                        await asyncio.wait_for(conn["ev"].wait(), 1.0)
                    except asyncio.TimeoutError:
                        pass
            finally:
                ws.writer.close()

        await asyncio.gather(*(worker() for _ in range(conns)))


# ---------------------------------------------------------------- metrics


def parse_metrics(text):
    out = {"buckets": []}
    for line in text.splitlines():
        if line.startswith("trackhub_fleet_tick_seconds_bucket"):
            le = line.split('le="')[1].split('"')[0]
            out["buckets"].append((float("inf") if le == "+Inf" else float(le), float(line.split()[-1])))
        else:
            for name in ("trackhub_fleet_tick_seconds_sum", "trackhub_fleet_tick_seconds_count",
                         "trackhub_fleet_ticks_total", "trackhub_fleet_rebuild_seconds_last",
                         "trackhub_fleet_messages_encoded_total", "trackhub_trips_active",
                         "trackhub_unsent_bytes", "trackhub_slow_consumer_closes_total"):
                if line.startswith(name + " "):
                    out[name] = float(line.split()[-1])
    return out


def quantile(buckets_before, buckets_after, q):
    """q-quantile of the observations between two samples, linear within a bucket (s)."""
    deltas = [(le, a - b) for (le, a), (_, b) in zip(buckets_after, buckets_before)]
    total = deltas[-1][1]
    if total <= 0:
        return None
    target = q * total
    prev_le, prev_c = 0.0, 0.0
    for le, c in deltas:
        if c >= target:
            if le == float("inf"):
                return prev_le  # past the last bound: report the bound ("> prev_le")
            frac = (target - prev_c) / (c - prev_c) if c > prev_c else 1.0
            return prev_le + (le - prev_le) * frac
        prev_le, prev_c = le, c
    return prev_le


def proc_sample(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / tck
    rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    return cpu, rss


# ---------------------------------------------------------------- the run


async def main_async(args, host, port, pid):
    n = args.trips
    print("placing %d riders" % n, flush=True)
    lats, lons = place_riders(n, args.seed)
    moving = int(n * args.moving)
    rng = random.Random(args.seed ^ 0x5EED)
    # a heading per moving rider: 10 m/s straight, in degrees per second
    dlat = array("d", (0.0,) * moving)
    dlon = array("d", (0.0,) * moving)
    for k in range(moving):
        h = rng.uniform(0, 2 * math.pi)
        dlat[k] = args.speed * math.cos(h) / 111_320.0
        dlon[k] = args.speed * math.sin(h) / (111_320.0 * max(0.1, math.cos(math.radians(lats[k]))))

    report = {"trips": n, "moving": args.moving, "fleet_hz": args.fleet_hz}
    feed = FixFeed()
    t_start = time.time()
    if args.skip_setup:
        print("--skip-setup: the trips and their first fixes are there already", flush=True)
    else:
        # 1. trips
        t0 = time.monotonic()
        failures = await create_trips(host, port, n, args.http_conns)
        dt = time.monotonic() - t0
        report["create_per_s"] = round(n / dt)
        print("created %d trips in %.1f s (%d/s), %d refused" % (n, dt, n / dt, len(failures)), flush=True)
        if pid:
            print("hub: %.1f s CPU, %.0f MB resident" % (proc_sample(pid)[0], proc_sample(pid)[1] / 2**20), flush=True)

        # 2. a first fix for each: every trip gets a marker

        def first_fix(k, now_ms):
            return b'{"op":"fix","trip":"%s","lat":%.6f,"lon":%.6f,"ts":%d}' % (
                trip_id(k).encode(), lats[k], lons[k], now_ms)

        t0 = time.monotonic()
        await feed.run(host, port, args.ws_conns, args.window, first_fix, iter(range(n)), None, None)
        dt = time.monotonic() - t0
        report["first_fixes_per_s"] = round(feed.acked / dt)
        print("first fixes: %d acked in %.1f s (%d/s), %d errors %s" % (
            feed.acked, dt, feed.acked / dt, feed.errors, feed.error_samples[:2]), flush=True)

    # 3. viewers
    clusters = {z: 0 for z in args.zooms}
    last_total = [None]
    viewers = []
    for z in args.zooms:
        def on_message(payload, z=z):
            if b'"type":"clusters"' in payload:
                clusters[z] += 1
                m = re.search(rb'"total":(\d+)', payload)
                if m:
                    last_total[0] = int(m.group(1))
        ws = await WS.connect(host, port, on_message)
        ws.send([json.dumps({"op": "viewport", "id": 1, "bbox": VIEWPORTS.get(z, VIEWPORTS[3]), "zoom": z}).encode()])
        viewers.append(ws)

    # 4. the moving fifth, for --seconds at each rate
    async def sample():
        status, body = await http_get(host, port, "/metrics")
        m = parse_metrics(body.decode())
        m["t"] = time.monotonic()
        if pid:
            m["cpu"], m["rss"] = proc_sample(pid)
        return m

    def cycle():
        while True:
            yield from range(moving)

    if args.lock:
        # The setup above is load like a build; only the measured phases hold the lock.
        print("waiting for %s" % args.lock, flush=True)
        lock_file = open(args.lock, "a")
        await asyncio.to_thread(fcntl.flock, lock_file.fileno(), fcntl.LOCK_EX)
        print("holding %s" % args.lock, flush=True)
    # let the first ticks of the full fleet pass before measuring
    await asyncio.sleep(args.warmup)
    report["phases"] = []
    for rate in args.rates:
        if rate == "auto":  # 90 % of what the previous phase got acked
            rate = max(1, int(0.9 * report["phases"][-1]["fixes_per_s"])) if report["phases"] else moving
        rate = int(rate) or moving  # 0: each moving trip once a second
        interval_ms = min(60_000, int(1000 * moving / rate)) if moving else 1000

        def moving_fix(k, now_ms, interval_ms=interval_ms):
            t = (now_ms / 1000.0) - t_start
            return b'{"op":"fix","trip":"%s","lat":%.6f,"lon":%.6f,"ts":%d,"duration_ms":%d}' % (
                trip_id(k).encode(), lats[k] + dlat[k] * t, lons[k] + dlon[k] * t, now_ms, interval_ms)

        before = await sample()
        acked_before, errors_before = feed.acked, feed.errors
        rebuilds = []
        stop_at = time.monotonic() + args.seconds

        async def sampler():
            last_ticks = before.get("trackhub_fleet_ticks_total", 0)
            while time.monotonic() < stop_at:
                await asyncio.sleep(0.5)
                m = await sample()
                if m.get("trackhub_fleet_ticks_total", 0) != last_ticks:
                    last_ticks = m["trackhub_fleet_ticks_total"]
                    rebuilds.append(m.get("trackhub_fleet_rebuild_seconds_last", 0))

        clusters_before = dict(clusters)
        if moving:
            await asyncio.gather(
                feed.run(host, port, args.ws_conns, args.window, moving_fix, cycle(), rate, stop_at),
                sampler())
        else:
            await sampler()
        after = await sample()
        elapsed = after["t"] - before["t"]
        acked = feed.acked - acked_before
        ticks = after.get("trackhub_fleet_ticks_total", 0) - before.get("trackhub_fleet_ticks_total", 0)
        count = after["trackhub_fleet_tick_seconds_count"] - before["trackhub_fleet_tick_seconds_count"]
        ssum = after["trackhub_fleet_tick_seconds_sum"] - before["trackhub_fleet_tick_seconds_sum"]
        p50 = quantile(before["buckets"], after["buckets"], 0.5)
        p99 = quantile(before["buckets"], after["buckets"], 0.99)
        rebuilds.sort()
        phase = {
            "target_fixes_per_s": rate,
            "duration_ms": interval_ms,
            "fixes_per_s": round(acked / elapsed),
            "fix_errors": feed.errors - errors_before,
            "seconds": round(elapsed, 1),
            "fleet_ticks": int(ticks),
            "ticks_due": round(elapsed * args.fleet_hz, 1),
            "tick_p50_ms": None if p50 is None else round(p50 * 1000),
            "tick_p99_ms": None if p99 is None else round(p99 * 1000),
            "tick_mean_ms": round(1000 * ssum / count) if count else None,
            "tick_buckets": {("+Inf" if le == float("inf") else str(le)): int(a - b)
                             for (le, a), (_, b) in zip(after["buckets"], before["buckets"])},
            "rebuild_median_ms": round(1000 * rebuilds[len(rebuilds) // 2]) if rebuilds else None,
            "rebuild_max_ms": round(1000 * rebuilds[-1]) if rebuilds else None,
            "clusters_messages": {str(z): clusters[z] - clusters_before[z] for z in args.zooms},
            "fleet_total_seen": last_total[0],
            "viewers_closed": [ws.closed for ws in viewers if ws.closed],
        }
        if pid:
            phase["hub_cpu_per_s"] = round((after["cpu"] - before["cpu"]) / elapsed, 2)
            phase["hub_rss_mb"] = round(after["rss"] / 2**20)
        report["phases"].append(phase)
        print("rate %d/s (duration_ms %d): %d fixes/s acked, %d errors; fleet ticks %d in %.1f s (%.1f due); "
              "tick p50 %s ms, p99 %s ms, mean %s ms; rebuild median %s ms; hub %.2f cores, %s MB"
              % (rate, interval_ms, phase["fixes_per_s"], phase["fix_errors"], phase["fleet_ticks"], elapsed,
                 phase["ticks_due"], phase["tick_p50_ms"], phase["tick_p99_ms"], phase["tick_mean_ms"],
                 phase["rebuild_median_ms"], phase.get("hub_cpu_per_s", 0), phase.get("hub_rss_mb")), flush=True)
    gen = os.times()
    report["generator_cpu_s"] = round(gen.user + gen.system, 1)
    for ws in viewers:
        ws.writer.close()
    return report


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", help="directory with the release trackhub (starts a hub on loopback)")
    p.add_argument("--url", help="an open hub already running, http://HOST:PORT (instead of --bin)")
    p.add_argument("--trips", type=int, default=1_000_000)
    p.add_argument("--moving", type=float, default=0.2, help="share of the trips sent fixes (default 0.2)")
    p.add_argument("--rates", default="0", help="fixes per second to the moving trips, one measured phase "
                   "each, comma-separated (0, the default: each moving trip once a second; auto: 90 %% "
                   "of what the phase before got acked)")
    p.add_argument("--seconds", type=float, default=60, help="the measured phase (default 60)")
    p.add_argument("--warmup", type=float, default=5, help="seconds after the first fixes before measuring")
    p.add_argument("--fleet-hz", type=float, default=1.0)
    p.add_argument("--tick-hz", type=int, default=10)
    p.add_argument("--http-conns", type=int, default=32)
    p.add_argument("--ws-conns", type=int, default=8)
    p.add_argument("--window", type=int, default=500, help="unacked fixes per connection")
    p.add_argument("--zooms", default="5,8,11,14", help="one fleet viewer per zoom")
    p.add_argument("--speed", type=float, default=10.0, help="m/s of a moving rider")
    p.add_argument("--seed", type=int, default=21)
    p.add_argument("--ping-interval", default="10m",
                   help="the hub's --ping-interval (default 10m: a feed connection's pong waits behind its "
                        "fixes, and an overloaded hub dropped one at the default 30 s)")
    p.add_argument("--lock", help="a lock file (flock) to hold for the measured phases only, "
                   "e.g. /work/bench.lock, so that the long setup does not hold it")
    p.add_argument("--skip-setup", action="store_true",
                   help="with --url: the trips exist and have their first fix; measure only")
    p.add_argument("--pid", type=int, help="with --url: the hub's process id, for its CPU and memory")
    p.add_argument("--keep-data", action="store_true")
    args = p.parse_args()
    args.zooms = [int(z) for z in args.zooms.split(",") if z]
    args.rates = [r if r == "auto" else int(r) for r in args.rates.split(",") if r]

    hub = None
    data = None
    pid = None
    if args.url:
        m = re.match(r"https?://([^:/]+):(\d+)", args.url)
        host, port = m.group(1), int(m.group(2))
        pid = args.pid
    else:
        if not args.bin:
            p.error("--bin or --url")
        data = tempfile.mkdtemp(prefix="hub-million-")
        cmd = [os.path.join(args.bin, "trackhub"), "serve", "--listen", "127.0.0.1:0", "--data", data,
               "--max-trips", str(args.trips + 1000), "--max-fix-rate", "1000000",
               "--fleet-hz", str(args.fleet_hz), "--tick-hz", str(args.tick_hz), "--log-level", "warn",
               "--ping-interval", args.ping_interval]
        print(" ".join(cmd), flush=True)
        hub = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        line = hub.stdout.readline()
        m = re.search(r"listening on http://([\d.]+):(\d+)", line)
        if not m:
            hub.kill()
            sys.exit("the hub did not start: %r" % line)
        host, port = m.group(1), int(m.group(2))
        pid = hub.pid
    try:
        report = asyncio.run(main_async(args, host, port, pid))
    finally:
        if hub:
            hub.terminate()
            try:
                hub.wait(30)
            except subprocess.TimeoutExpired:
                hub.kill()
        if data and not args.keep_data:
            shutil.rmtree(data, ignore_errors=True)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
