#!/usr/bin/env python3
"""Hub CPU and fix-ack latency under the two CPU attacks of issue 41.

Each scenario starts its own `trackhub serve` (from BIN) on 127.0.0.1 with an ephemeral
port and a fresh data directory, OPEN mode (no --jwt-secret: the admin calls need no
token; the device id is the OsmAnd credential either way). One courier, a device bound
to a trip, sends a fix every 100 ms through `POST /v1/osmand?id=...&lat=...` on one
keep-alive connection and times each fix from request written to 200 read.

  osmand-bodies      5 s of baseline, then 6 s in which two client threads each POST
                     /v1/osmand again and again with a 4 MiB
                     application/x-www-form-urlencoded body of 200 000 parameters and no
                     valid device (id=nope&lat=..&lon=..&p0=...&p1=...: an unknown device is
                     its only fault, 404), written whole in 64 KiB pieces
                     (an answer that comes before the body is all written stops the
                     writing; a closed or reset connection is reopened). Reports the hub's
                     CPU-seconds over the 6 s (utime+stime of /proc/PID/stat), fix-ack
                     p50/p99 in the window vs the baseline, GET /healthz p50 in the window
                     (polled every 100 ms), and how many bad requests were answered.
  router-abandoned   the hub with --router routino:DB (the Helsinki sample roads through
                     scripts/geojson_to_osm.py and `trackhub router build`). 1 100
                     `GET /v1/route` with 40 via points each (42 points; mode=foot between
                     the two opposite corners of the network: every leg is found and long,
                     the costliest search a client can ask on these roads), sent from 16
                     loopback source addresses (127.0.0.2...; the fixed hub gives one
                     address a tenth of the queue), then every socket closed. Over the
                     next 20 s: hub CPU-seconds, the time a new short search (2 points on
                     one road, car) made right after the close takes to be answered
                     (capped at 30 s: "> 30 s"), the courier's fix-ack p50/p99, the hub's
                     CPU second by second (where the queued work ends); and
                     `trackhub_router_searches_total` from /metrics at the end. The queue
                     holds 1 000 (PROTOCOL 16), so of the 1 100 about 1 000 are queued and
                     the rest answered 503 at once (counted as "answered before close").
                     The long search never has two equal points in a row: on the hub before
                     issue 41, any search followed by one with three equal points in a row
                     (from=X&via=X&to=X) crashes it inside libroutino (SIGSEGV).

Each result line also says how busy the whole machine was (all processes, /proc/stat)
during the window, since a compile running beside the benchmark changes the numbers.

    bench/http/hostile_cpu.py --bin /tmp/before [--scenario osmand-bodies|router-abandoned|both] [--json]

Standard library only; loopback only; each scenario is under a minute.
"""

import argparse
import http.client
import json
import math
import os
import select
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROADS = os.path.join(ROOT, "data", "samples", "roads_helsinki.geojson")
TICKS = os.sysconf("SC_CLK_TCK")

DEVICE = "bench-courier-0123456789abcdef"  # >= 16 characters: valid on a secured hub too
TRIP = "bench-courier-trip"
FIX_INTERVAL_S = 0.1


# -- the hub -----------------------------------------------------------------------------

class Hub:
    def __init__(self, bindir, tmp, *extra):
        self.stderr_path = os.path.join(tmp, "hub.stderr")
        self.stderr = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(
            [os.path.join(bindir, "trackhub"), "serve", "--listen", "127.0.0.1:0", "--data", os.path.join(tmp, "data"),
             "--log-level", "warn", *extra],
            env={k: v for k, v in os.environ.items() if not k.startswith("TRACKHUB_")},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.stderr, text=True, cwd=tmp)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on http://"):
            self.stop()
            raise SystemExit(f"the hub did not start: {line!r}; stderr: {self.stderr_tail()}")
        self.host, port = line.strip()[len("listening on http://"):].rsplit(":", 1)
        self.port = int(port)
        self.pid = self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def cpu(self):
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def stderr_tail(self, n=600):
        if not self.stderr.closed:
            self.stderr.flush()
        with open(self.stderr_path, errors="replace") as f:
            return f.read()[-n:]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.stderr.close()


def machine_busy():
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    with open("/proc/stat") as f:
        vals = [int(x) for x in f.readline().split()[1:]]
    idle = vals[3] + vals[4]
    total = sum(vals[:8])
    return total - idle, total


def busy_cores(before, after):
    busy = after[0] - before[0]
    total = after[1] - before[1]
    return round(os.cpu_count() * busy / total, 2) if total else None


def request(conn, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
    resp = conn.getresponse()
    return resp.status, resp.read()


def pct(values, q):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(math.ceil(q * len(s))) - 1))]


def ms(v):
    return None if v is None else round(v * 1000, 1)


def fmt_ms(v):
    return "n/a" if v is None else f"{v * 1000:.1f} ms"


def register_courier(hub):
    conn = http.client.HTTPConnection(hub.host, hub.port, timeout=30)
    status, raw = request(conn, "POST", "/v1/trips", {"id": TRIP})
    if status != 201:
        raise SystemExit(f"POST /v1/trips answered {status}: {raw[:300]!r}")
    status, raw = request(conn, "PUT", f"/v1/devices/{DEVICE}", {"trip": TRIP})
    if status != 200:
        raise SystemExit(f"PUT /v1/devices answered {status}: {raw[:300]!r}")
    conn.close()


class Courier(threading.Thread):
    """A phone: one OsmAnd fix every 100 ms (or at once after a late answer) on one
    keep-alive connection; keeps (sent at, latency, status) of each fix."""

    def __init__(self, hub):
        super().__init__(daemon=True)
        self.hub = hub
        self.samples = []
        self.errors = 0
        self.stop_flag = threading.Event()

    def run(self):
        conn = None
        ts = int(time.time() * 1000) - 3_600_000
        lat, lon = 60.1690, 24.9400
        n = 0
        next_at = time.monotonic()
        while not self.stop_flag.is_set():
            now = time.monotonic()
            if now < next_at:
                time.sleep(next_at - now)
            next_at += FIX_INTERVAL_S
            n += 1
            ts += 1000
            path = (f"/v1/osmand?id={DEVICE}&lat={lat + n * 4e-5:.6f}&lon={lon:.6f}&timestamp={ts}"
                    f"&speed=8&bearing=0&altitude=10&batt=80")
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(self.hub.host, self.hub.port, timeout=30)
                began = time.monotonic()
                conn.request("POST", path, body=b"", headers={"Content-Length": "0"})
                resp = conn.getresponse()
                resp.read()
                self.samples.append((began, time.monotonic() - began, resp.status))
            except (OSError, http.client.HTTPException):
                self.errors += 1
                if conn is not None:
                    conn.close()
                conn = None
            if next_at < time.monotonic():
                next_at = time.monotonic()
        if conn is not None:
            conn.close()

    def acks(self, start, end):
        """Latencies of the fixes sent in [start, end) that were answered 200."""
        return [lat for began, lat, status in self.samples if start <= began < end and status == 200]

    def statuses(self, start, end):
        out = {}
        for began, _, status in self.samples:
            if start <= began < end:
                out[status] = out.get(status, 0) + 1
        return out


# -- osmand-bodies -------------------------------------------------------------------------

BODY_BYTES = 4 * 1024 * 1024
BODY_PARAMS = 200_000
CHUNK = 64 * 1024


PREFIX = "id=nope&lat=60.170000&lon=24.940000"


def hostile_form_body():
    """Exactly 4 MiB: an unknown device with a valid position (so that the device is the
    only thing wrong: the hub before the fix checks lat/lon first and would answer 400),
    then 200 000 parameters p0..p199999 with padded values."""
    keys = [f"p{i}=" for i in range(BODY_PARAMS)]
    fixed = len(PREFIX) + sum(1 + len(k) for k in keys)
    spare = BODY_BYTES - fixed
    each, extra = divmod(spare, BODY_PARAMS)
    parts = [PREFIX]
    for i, k in enumerate(keys):
        parts.append(k + "v" * (each + (1 if i < extra else 0)))
    body = "&".join(parts).encode()
    assert len(body) == BODY_BYTES, len(body)
    return body


def read_response(sock, deadline):
    """(status, close?) of one HTTP response on `sock`, or raises OSError."""
    data = b""
    while b"\r\n\r\n" not in data:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before an answer")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip().lower()
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    closing = headers.get("connection") == "close" or lines[0].startswith("HTTP/1.0")
    return status, closing


class BodySender(threading.Thread):
    """POSTs the hostile body again and again until `stop_at`, reconnecting as needed."""

    def __init__(self, hub, body, stop_at):
        super().__init__(daemon=True)
        self.hub, self.body, self.stop_at = hub, body, stop_at
        self.head = (f"POST /v1/osmand HTTP/1.1\r\nHost: {hub.host}:{hub.port}\r\n"
                     f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n").encode()
        self.answers = {}       # status -> count
        self.early = 0          # answered before the whole body was written
        self.resets = 0         # connection closed/reset with no answer read
        self.abandoned = 0      # stopped at the end of the window mid-request
        self.connects = 0

    def run(self):
        sock = None
        while time.monotonic() < self.stop_at:
            if sock is None:
                try:
                    sock = socket.create_connection((self.hub.host, self.hub.port), timeout=30)
                    self.connects += 1
                except OSError:
                    self.resets += 1
                    time.sleep(0.01)
                    continue
            reuse = False
            try:
                sock.settimeout(30)
                sock.sendall(self.head)
                early = False
                abandoned = False
                for start in range(0, len(self.body), CHUNK):
                    if time.monotonic() >= self.stop_at:
                        abandoned = True
                        break
                    readable, _, _ = select.select([sock], [], [], 0)
                    if readable:
                        early = True
                        break
                    sock.sendall(self.body[start:start + CHUNK])
                if abandoned:
                    self.abandoned += 1
                else:
                    status, closing = read_response(sock, time.monotonic() + 30)
                    self.answers[status] = self.answers.get(status, 0) + 1
                    if early:
                        self.early += 1
                    reuse = not early and not closing
            except (OSError, ValueError, IndexError):
                self.resets += 1
            if not reuse:
                sock.close()
                sock = None
        if sock is not None:
            sock.close()


class Pinger(threading.Thread):
    """GET /healthz every 100 ms on one keep-alive connection."""

    def __init__(self, hub):
        super().__init__(daemon=True)
        self.hub = hub
        self.samples = []
        self.stop_flag = threading.Event()

    def run(self):
        conn = None
        next_at = time.monotonic()
        while not self.stop_flag.is_set():
            now = time.monotonic()
            if now < next_at:
                time.sleep(next_at - now)
            next_at = max(next_at + 0.1, time.monotonic())
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(self.hub.host, self.hub.port, timeout=30)
                began = time.monotonic()
                conn.request("GET", "/healthz")
                resp = conn.getresponse()
                resp.read()
                self.samples.append((began, time.monotonic() - began))
            except (OSError, http.client.HTTPException):
                if conn is not None:
                    conn.close()
                conn = None

    def latencies(self, start, end):
        return [lat for began, lat in self.samples if start <= began < end]


def osmand_bodies(args):
    body = hostile_form_body()
    baseline_s, window_s = 5.0, 6.0
    with tempfile.TemporaryDirectory(prefix="hostile-cpu-") as tmp:
        hub = Hub(args.bin, tmp)
        try:
            register_courier(hub)
            load0 = os.getloadavg()
            courier, pinger = Courier(hub), Pinger(hub)
            courier.start()
            pinger.start()
            b0 = time.monotonic()
            time.sleep(baseline_s)
            w0 = time.monotonic()
            cpu0, mach0 = hub.cpu(), machine_busy()
            senders = [BodySender(hub, body, w0 + window_s) for _ in range(2)]
            for s in senders:
                s.start()
            time.sleep(max(0.0, w0 + window_s - time.monotonic()))
            w1 = time.monotonic()
            cpu1, mach1 = hub.cpu(), machine_busy()
            for s in senders:
                s.join(timeout=40)
            time.sleep(1.0)  # let fixes sent in the window be answered
            cpu_after = hub.cpu()
            courier.stop_flag.set()
            pinger.stop_flag.set()
            courier.join(timeout=40)
            pinger.join(timeout=40)
            alive = hub.alive()
            load1 = os.getloadavg()
        finally:
            hub.stop()
        base, during = courier.acks(b0, w0), courier.acks(w0, w1)
        answers = {}
        for s in senders:
            for k, v in s.answers.items():
                answers[k] = answers.get(k, 0) + v
        result = {
            "scenario": "osmand-bodies",
            "bin": os.path.abspath(args.bin),
            "body_bytes": len(body), "body_params": BODY_PARAMS + 3,
            "window_s": round(w1 - w0, 2),
            "hub_cpu_s_window": round(cpu1 - cpu0, 2),
            "hub_cpu_s_window_plus_tail": round(cpu_after - cpu0, 2),
            "machine_busy_cores_window": busy_cores(mach0, mach1),
            "fix_ack_ms_baseline": {"n": len(base), "p50": ms(pct(base, 0.5)), "p99": ms(pct(base, 0.99)), "max": ms(max(base, default=None))},
            "fix_ack_ms_window": {"n": len(during), "p50": ms(pct(during, 0.5)), "p99": ms(pct(during, 0.99)), "max": ms(max(during, default=None))},
            "fix_statuses_window": courier.statuses(w0, w1),
            "fix_errors": courier.errors,
            "healthz_ms_baseline_p50": ms(pct(pinger.latencies(b0, w0), 0.5)),
            "healthz_ms_window": {"n": len(pinger.latencies(w0, w1)), "p50": ms(pct(pinger.latencies(w0, w1), 0.5)),
                                  "max": ms(max(pinger.latencies(w0, w1), default=None))},
            "bad_requests_answered": sum(answers.values()),
            "bad_request_answers": answers,
            "bad_requests_answered_early": sum(s.early for s in senders),
            "bad_requests_reset": sum(s.resets for s in senders),
            "bad_requests_abandoned_at_end": sum(s.abandoned for s in senders),
            "bad_connections": sum(s.connects for s in senders),
            "hub_alive": alive,
            "loadavg_start": load0, "loadavg_end": load1,
        }
        fb, fw = result["fix_ack_ms_baseline"], result["fix_ack_ms_window"]
        line = (f"osmand-bodies: hub {result['hub_cpu_s_window']:.2f} CPU-s in {result['window_s']:.1f} s "
                f"(+tail {result['hub_cpu_s_window_plus_tail'] - result['hub_cpu_s_window']:.2f}); "
                f"fix ack p50/p99 {fb['p50']}/{fb['p99']} ms baseline (n={fb['n']}) -> {fw['p50']}/{fw['p99']} ms in window "
                f"(n={fw['n']}, max {fw['max']}); /healthz p50 {result['healthz_ms_baseline_p50']} -> "
                f"{result['healthz_ms_window']['p50']} ms (n={result['healthz_ms_window']['n']}); "
                f"bad requests answered {result['bad_requests_answered']} {answers} "
                f"(early {result['bad_requests_answered_early']}, reset {result['bad_requests_reset']}, "
                f"cut at end {result['bad_requests_abandoned_at_end']}, connections {result['bad_connections']}); "
                f"machine busy {result['machine_busy_cores_window']} of {os.cpu_count()} cores; load {load0[0]:.2f} -> {load1[0]:.2f}"
                + ("" if alive else f"; HUB DIED: {hub.stderr_tail(300)!r}"))
        return line, result


# -- router-abandoned ----------------------------------------------------------------------

def roads():
    with open(ROADS, encoding="utf-8") as f:
        return json.load(f)["features"]


def route_path(points, mode):
    (flat, flon), (tlat, tlon) = points[0], points[-1]
    path = f"/v1/route?from={flat:.6f},{flon:.6f}&to={tlat:.6f},{tlon:.6f}"
    if len(points) > 2:
        path += "&via=" + ";".join(f"{lat:.6f},{lon:.6f}" for lat, lon in points[1:-1])
    return path + f"&mode={mode}"


def metrics(hub):
    conn = http.client.HTTPConnection(hub.host, hub.port, timeout=30)
    try:
        _, raw = request(conn, "GET", "/metrics")
    finally:
        conn.close()
    return raw.decode()


def router_lines(text):
    searches = {}
    total = count = None
    for line in text.splitlines():
        if line.startswith("trackhub_router_searches_total{"):
            name, value = line.rsplit(" ", 1)
            searches[name[len("trackhub_router_searches_total"):]] = int(float(value))
        elif line.startswith("trackhub_router_search_seconds_sum"):
            total = float(line.rsplit(" ", 1)[1])
        elif line.startswith("trackhub_router_search_seconds_count"):
            count = int(float(line.rsplit(" ", 1)[1]))
    return searches, total, count


def timed_get(hub, path, timeout):
    conn = http.client.HTTPConnection(hub.host, hub.port, timeout=timeout)
    began = time.monotonic()
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, time.monotonic() - began, body
    except socket.timeout:
        return None, time.monotonic() - began, b""
    except (OSError, http.client.HTTPException) as e:
        return f"error: {e!r}", time.monotonic() - began, b""
    finally:
        conn.close()


def router_abandoned(args):
    feats = roads()
    verts = sorted({(lat, lon) for f in feats for lon, lat in f["geometry"]["coordinates"]})
    sw = min(verts, key=lambda v: v[0] + v[1])
    ne = max(verts, key=lambda v: v[0] + v[1])
    # 40 via points: corner to corner and back. Never two equal points in a row.
    long_points = [sw if i % 2 == 0 else ne for i in range(args.via + 2)]
    long_path = route_path(long_points, args.mode)
    # Short searches: the two ends of one two-way road piece of 20-100 m.
    short_candidates = []
    for f in feats:
        c = f["geometry"]["coordinates"]
        if not f["properties"].get("oneway") and len(c) >= 2:
            (lon1, lat1), (lon2, lat2) = c[0], c[-1]
            d = math.hypot((lon2 - lon1) * 111_194.9 * math.cos(math.radians(lat1)), (lat2 - lat1) * 111_194.9)
            if 20 <= d <= 100:
                short_candidates.append(((lat1, lon1), (lat2, lon2)))
    window_s, short_cap_s = 20.0, 30.0
    with tempfile.TemporaryDirectory(prefix="hostile-cpu-router-") as tmp:
        osm = os.path.join(tmp, "helsinki.osm")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "geojson_to_osm.py"), ROADS, osm],
                       check=True, capture_output=True, timeout=60)
        db = os.path.join(tmp, "db")
        subprocess.run([os.path.join(args.bin, "trackhub"), "router", "build", osm, db], check=True, capture_output=True, timeout=120)
        hub = Hub(args.bin, tmp, "--router", f"routino:{db}")
        try:
            register_courier(hub)
            # One of each search alone, before anything else: they work, and what one costs.
            short_path = None
            for a, b in short_candidates[:30]:
                status, _, _ = timed_get(hub, route_path([a, b], "car"), 10)
                if status == 200:
                    short_path = route_path([a, b], "car")
                    break
            if short_path is None:
                raise SystemExit("no short car search answered 200 on the idle hub")
            _, sum_a, count_a = router_lines(metrics(hub))
            alone = []
            for _ in range(3):
                status, took, body = timed_get(hub, long_path, 30)
                if status != 200:
                    raise SystemExit(f"the long search answered {status} on the idle hub: {body[:300]!r}")
                alone.append(took)
            _, sum_b, count_b = router_lines(metrics(hub))
            long_alone_hub_ms = round(((sum_b or 0) - (sum_a or 0)) / max(1, (count_b or 0) - (count_a or 0)) * 1000, 1)

            load0 = os.getloadavg()
            courier = Courier(hub)
            courier.start()
            time.sleep(1.0)
            request_bytes = f"GET {long_path} HTTP/1.1\r\nHost: {hub.host}:{hub.port}\r\n\r\n".encode()
            socks, connect_errors = [], 0
            t_open = time.monotonic()
            for i in range(args.searches):
                src = f"127.0.0.{2 + i % args.addresses}"
                try:
                    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    s.bind((src, 0))
                    s.settimeout(10)
                    s.connect((hub.host, hub.port))
                    s.sendall(request_bytes)
                    s.setblocking(False)
                    socks.append(s)
                except OSError:
                    connect_errors += 1
                    s.close()  # (socket() itself does not fail here)
            t_sent = time.monotonic()
            # Read what is answered at once (a full queue: 503) for a moment, then close all.
            answered = {}
            pending = {s: b"" for s in socks}
            poller = selectors.DefaultSelector()  # epoll: select() stops at fd 1023
            for s in socks:
                poller.register(s, selectors.EVENT_READ)
            settle_end = time.monotonic() + args.settle
            while pending and time.monotonic() < settle_end:
                for key, _ in poller.select(max(0.0, settle_end - time.monotonic())):
                    s = key.fileobj
                    if s not in pending:
                        continue
                    try:
                        chunk = s.recv(65536)
                    except OSError:
                        chunk = b""
                    data = pending[s] + chunk
                    if not chunk or b"\r\n" in data:
                        status = data.split(b" ")[1].decode() if data.startswith(b"HTTP/") else "closed"
                        answered[status] = answered.get(status, 0) + 1
                        del pending[s]
                        poller.unregister(s)
                    else:
                        pending[s] = data
            held = len(pending)
            poller.close()
            cpu0, mach0 = hub.cpu(), machine_busy()
            t_close = time.monotonic()
            for s in socks:
                s.close()
            # The hub's CPU second by second through the window (where the work ends).
            timeline = []

            def sample():
                last = cpu0
                for k in range(1, int(window_s) + 1):
                    time.sleep(max(0.0, t_close + k - time.monotonic()))
                    try:
                        now = hub.cpu()
                    except OSError:
                        return
                    timeline.append(round(now - last, 2))
                    last = now

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            # A new short search right after: how long does it wait?
            short_status, short_took, _ = timed_get(hub, short_path, short_cap_s)
            remaining = t_close + window_s - time.monotonic()
            if remaining > 0:
                time.sleep(remaining)
            t_end = time.monotonic()
            cpu1, mach1 = hub.cpu(), machine_busy()
            sampler.join(timeout=5)
            courier.stop_flag.set()
            courier.join(timeout=40)
            alive = hub.alive()
            searches, sum1, count1 = router_lines(metrics(hub)) if alive else ({}, None, None)
            load1 = os.getloadavg()
        finally:
            hub.stop()
    during = courier.acks(t_close, t_close + window_s)
    short_ok = short_status == 200
    result = {
        "scenario": "router-abandoned",
        "bin": os.path.abspath(args.bin),
        "searches_sent": len(socks), "connect_errors": connect_errors, "source_addresses": args.addresses,
        "points_per_search": len(long_points), "mode": args.mode,
        "long_search_alone_ms": [ms(t) for t in alone],
        "long_search_alone_hub_ms": long_alone_hub_ms,
        "open_and_send_s": round(t_sent - t_open, 2),
        "answered_before_close": answered, "held_open_at_close": held,
        "window_s": round(t_end - t_close, 2),
        "hub_cpu_s_window": round(cpu1 - cpu0, 2),
        "hub_cpu_s_per_second": timeline,
        "machine_busy_cores_window": busy_cores(mach0, mach1),
        "short_search_status": short_status,
        "short_search_s": round(short_took, 3) if short_ok else None,
        "short_search": f"{short_took:.3f} s" if short_ok else (f"> {short_cap_s:.0f} s" if short_status is None else f"{short_status} after {short_took:.3f} s"),
        "fix_ack_ms_window": {"n": len(during), "p50": ms(pct(during, 0.5)), "p99": ms(pct(during, 0.99)), "max": ms(max(during, default=None))},
        "fix_statuses_window": courier.statuses(t_close, t_close + window_s),
        "fix_errors": courier.errors,
        "router_searches_total": searches,
        "router_search_seconds_sum": sum1, "router_search_seconds_count": count1,
        "hub_alive": alive,
        "loadavg_start": load0, "loadavg_end": load1,
    }
    fw = result["fix_ack_ms_window"]
    line = (f"router-abandoned: {len(socks)} searches of {len(long_points)} points ({args.mode}; alone "
            f"{', '.join(str(x) for x in result['long_search_alone_ms'])} ms, hub's own {long_alone_hub_ms} ms) from {args.addresses} addresses in "
            f"{result['open_and_send_s']} s; answered before close {answered}, {held} held open and closed; "
            f"then in {result['window_s']:.1f} s: hub {result['hub_cpu_s_window']:.2f} CPU-s (per second: "
            f"{' '.join(f'{x:.2f}' for x in timeline)}), new short search "
            f"{result['short_search']}, fix ack p50/p99 {fw['p50']}/{fw['p99']} ms (n={fw['n']}, max {fw['max']}); "
            f"searches_total {searches} (search seconds sum {sum1}, count {count1}); "
            f"machine busy {result['machine_busy_cores_window']} of {os.cpu_count()} cores; load {load0[0]:.2f} -> {load1[0]:.2f}"
            + ("" if alive else f"; HUB DIED: {hub.stderr_tail(300)!r}"))
    return line, result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"), help="directory with the trackhub binary")
    ap.add_argument("--scenario", choices=["osmand-bodies", "router-abandoned", "both"], default="both")
    ap.add_argument("--json", action="store_true", help="also print each result as one JSON line")
    ap.add_argument("--searches", type=int, default=1100)
    ap.add_argument("--via", type=int, default=40)
    ap.add_argument("--mode", default="foot", help="travel mode of the long searches (foot: every leg found)")
    ap.add_argument("--addresses", type=int, default=16, help="loopback source addresses 127.0.0.2...")
    ap.add_argument("--settle", type=float, default=0.5, help="seconds between the last search sent and the close")
    args = ap.parse_args()
    with open("/proc/cpuinfo") as f:
        model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    print(f"# {time.strftime('%Y-%m-%dT%H:%M:%S')} bin {os.path.abspath(args.bin)}; {os.cpu_count()} CPUs ({model}); "
          f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    scenarios = ["osmand-bodies", "router-abandoned"] if args.scenario == "both" else [args.scenario]
    for name in scenarios:
        line, result = (osmand_bodies if name == "osmand-bodies" else router_abandoned)(args)
        print(line, flush=True)
        if args.json:
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
