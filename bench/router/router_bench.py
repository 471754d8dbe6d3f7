#!/usr/bin/env python3
"""Router benchmarks (PROTOCOL 16) against a release `trackhub serve --router`.

    python3 bench/router/router_bench.py search [--searches 3000] [--clients 1,4]
        builds the Helsinki database (data/samples), starts a hub with it, and times
        GET /v1/route between seeded random pairs of road vertices: searches per second
        and p50/p99 per search, seen by the client (HTTP on loopback included), plus the
        hub's own trackhub_router_search_seconds.
    python3 bench/router/router_bench.py reroutes --port P [--riders 20] [--duration 40]
        drives riders on an existing hub (with --router and the Helsinki database) that
        leave their route again and again: two fixes on a road >160 m off the route, then
        wait for the hub's new route (auto_reroute), and again. Prints reroutes per second.

Standard library only; bounded in count and time; loopback only.
"""

import argparse
import http.client
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROADS = os.path.join(ROOT, "data", "samples", "roads_helsinki.geojson")


def vertices():
    with open(ROADS, encoding="utf-8") as f:
        feats = json.load(f)["features"]
    seen = set()
    out = []
    for feat in feats:
        for lon, lat in feat["geometry"]["coordinates"]:
            if (lat, lon) not in seen:
                seen.add((lat, lon))
                out.append((lat, lon))
    return out


def dist(a, b):
    k = 111_194.9
    return math.hypot((a[1] - b[1]) * k * math.cos(math.radians(a[0])), (a[0] - b[0]) * k)


def seg_dist(p, a, b):
    k = 111_194.9
    c = math.cos(math.radians(p[0]))
    ax, ay = (a[1] - p[1]) * k * c, (a[0] - p[0]) * k
    bx, by = (b[1] - p[1]) * k * c, (b[0] - p[0]) * k
    dx, dy = bx - ax, by - ay
    l2 = dx * dx + dy * dy
    t = 0 if l2 == 0 else max(0.0, min(1.0, (-ax * dx - ay * dy) / l2))
    return math.hypot(ax + t * dx, ay + t * dy)


def request(conn, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
    resp = conn.getresponse()
    payload = resp.read()
    return resp.status, (json.loads(payload) if payload else None)


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(math.ceil(q * len(s))) - 1)]


def build_db(binary, tmp):
    osm = os.path.join(tmp, "helsinki.osm")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "geojson_to_osm.py"), ROADS, osm], check=True, capture_output=True)
    db = os.path.join(tmp, "db")
    subprocess.run([binary, "router", "build", osm, db], check=True, capture_output=True)
    return db


def start_hub(binary, tmp, db):
    proc = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--data", os.path.join(tmp, "data"),
                             "--log-level", "warn", "--router", f"routino:{db}"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    if not line.startswith("listening on"):
        raise SystemExit(f"hub did not start: {line!r}")
    return proc, int(line.rsplit(":", 1)[1])


def search(args):
    binary = os.path.join(args.bin, "trackhub")
    verts = vertices()
    with tempfile.TemporaryDirectory(prefix="router-bench-") as tmp:
        db = build_db(binary, tmp)
        proc, port = start_hub(binary, tmp, db)
        try:
            for clients in [int(c) for c in args.clients.split(",")]:
                rng = random.Random(args.seed)
                pairs = [(rng.choice(verts), rng.choice(verts)) for _ in range(args.searches)]
                chunks = [pairs[i::clients] for i in range(clients)]
                latencies, statuses = [], {}
                lock = threading.Lock()

                def run(chunk):
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                    mine, codes = [], {}
                    for a, b in chunk:
                        t = time.perf_counter()
                        status, _ = request(conn, "GET", "/v1/route?from=%.7f,%.7f&to=%.7f,%.7f" % (a + b))
                        mine.append(time.perf_counter() - t)
                        codes[status] = codes.get(status, 0) + 1
                    conn.close()
                    with lock:
                        latencies.extend(mine)
                        for k, v in codes.items():
                            statuses[k] = statuses.get(k, 0) + v

                threads = [threading.Thread(target=run, args=(c,)) for c in chunks]
                t0 = time.perf_counter()
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                wall = time.perf_counter() - t0
                print(f"router search: {len(pairs)} searches, {clients} client(s): {len(pairs) / wall:.0f} searches/s; "
                      f"per search p50 {pct(latencies, 0.5) * 1000:.2f} ms, p99 {pct(latencies, 0.99) * 1000:.2f} ms, "
                      f"max {max(latencies) * 1000:.2f} ms; answers {statuses}")
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/metrics")
            text = conn.getresponse().read().decode()
            hist = [l for l in text.splitlines() if l.startswith("trackhub_router_search_seconds") or l.startswith("trackhub_router_searches_total{")]
            print("hub: " + "; ".join(hist))
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def reroutes(args):
    verts = vertices()
    stop_at = time.monotonic() + args.duration
    counts = {"reroutes": 0, "creates": 0, "misses": 0}
    lock = threading.Lock()

    def rider(i):
        rng = random.Random(args.seed + i)
        conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
        while time.monotonic() < stop_at:
            a, b = rng.choice(verts), rng.choice(verts)
            if dist(a, b) < 800:
                continue
            status, trip = request(conn, "POST", "/v1/trips", {"origin": {"lat": a[0], "lon": a[1]}, "destination": {"lat": b[0], "lon": b[1]},
                                                               "config": {"wait_at_waypoints": False}})
            if status != 201:
                continue
            with lock:
                counts["creates"] += 1
            tid, route = trip["trip"], [(lat, lon) for lon, lat in trip["route"]]
            ts = int(time.time() * 1000) - 3_600_000
            seq = 0
            last = route[0]

            def fix(p):
                nonlocal ts, seq, last
                ts += max(1000, int(dist(last, p) / 15 * 1000))
                seq += 1
                last = p
                return request(conn, "POST", f"/v1/trips/{tid}/fixes", {"fixes": [{"lat": p[0], "lon": p[1], "ts": ts, "seq": seq}]})

            fix(route[0])
            for _ in range(6):  # six excursions per trip, each rerouted
                if time.monotonic() >= stop_at:
                    break
                off = sorted((v for v in verts if min(seg_dist(v, p, q) for p, q in zip(route, route[1:])) > 160),
                             key=lambda v: dist(v, last))
                if len(off) < 2:
                    break
                first = off[0]
                second = next((v for v in off[1:] if 30 < dist(v, first) < 200), None)
                if second is None:
                    break
                fix(first)
                fix(second)
                deadline = time.monotonic() + 5
                changed = None
                while time.monotonic() < deadline:
                    _, doc = request(conn, "GET", f"/v1/trips/{tid}")
                    if doc and doc.get("route") and [(lat, lon) for lon, lat in doc["route"]] != route:
                        changed = doc
                        break
                    time.sleep(0.02)  # polling interval; the deadline decides
                with lock:
                    counts["reroutes" if changed else "misses"] += 1
                if not changed:
                    break
                route = [(lat, lon) for lon, lat in changed["route"]]
            request(conn, "DELETE", f"/v1/trips/{tid}")
        conn.close()

    threads = [threading.Thread(target=rider, args=(i,)) for i in range(args.riders)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    print(f"reroutes: {counts['reroutes']} in {wall:.1f} s ({counts['reroutes'] / wall:.1f}/s), "
          f"{counts['creates']} trips from stops, {counts['misses']} excursions not rerouted within 5 s; {args.riders} riders")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("search")
    s.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    s.add_argument("--searches", type=int, default=3000)
    s.add_argument("--clients", default="1,4")
    s.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("reroutes")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--riders", type=int, default=20)
    r.add_argument("--duration", type=float, default=40)
    r.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    search(args) if args.cmd == "search" else reroutes(args)


if __name__ == "__main__":
    main()
