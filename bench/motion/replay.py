#!/usr/bin/env python3
"""Motion benchmark: replays the recorded traces of the project's GPS dataset (--data, kept
outside the repository) into a real hub and measures what a viewer sees, beside a naive
client-side animator (issue 16).

Each trace becomes one trip, played at its recorded spacing divided by --speedup, all
traces at once, into a release `trackhub serve` started for the run (or --url). I-95
traces follow their planned route; Mopsi and Višnjan have none, so their route is the
trace itself (fixes implying more than 70 m/s from the last kept one, the glitches,
dropped): that gives them progress, ETA and a destination to arrive at. Fixes carry
`duration_ms` = the recorded gap over the speed-up (as `trackhub simulate --replay`
does) and, on I-95, the reported speed as `speed_mps` and heading.

The naive animator is what a client does with raw fixes alone: when fix i arrives it
draws a straight line from fix i-1 to fix i over their recorded gap (sped up). It is
sampled at the hub's frame times.

Per trace, hub beside naive:
  on-route      largest and p99 distance (m) of on-route frames from the route (hub: not
                off_route, nor on the straight way back after back_on_route; naive:
                while the fixes either side are within 100 m of the route)
  back          backward steps: hub frames whose done_m drops, naive samples whose
                projection on the route drops, by more than 1 m
  max km/h      largest frame-to-frame speed (device time; jump frames left out) against
                the trace's own largest (between fixes not over 70 m/s)
  jumps         frames marked `jump`
  lag s         median time from a fix reaching the hub to the marker reaching it
                (along the route), device seconds; the naive one is the fix's gap
  off-route     off_route events (the naive client has none)
  last frame    the last frame's distance from the destination (m) and its progress
  ETA err s     eta_s minus the time the trace really took from there, at the first
                frame past 25/50/75 % progress (naive: remaining over the last fix's speed)

Usage: python3 bench/motion/replay.py [--speedup 10] [--bin .build/release] [--url http://H:P]
       [--only PREFIX] --data DIR
It is a benchmark: it prints numbers and asserts nothing.
"""

import argparse
import asyncio
import bisect
import csv
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime

import websockets

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
R = 6_371_008.8


# ---- geometry ----------------------------------------------------------------------------
def dist_m(a, b):
    """Haversine metres between (lat, lon) points, the hub's sphere."""
    p1, p2 = math.radians(a[0]), math.radians(b[0])
    dp, dl = p2 - p1, math.radians(b[1] - a[1])
    s = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * R * math.asin(min(1.0, math.sqrt(s)))


class RouteLine:
    """A route as (lat, lon) points, with nearest-point queries in a local plane."""

    def __init__(self, points):
        self.points = points
        self.lat0 = math.radians(points[0][0])
        self.xy = [self.project(p) for p in points]
        self.cum = [0.0]
        for a, b in zip(points, points[1:]):
            self.cum.append(self.cum[-1] + dist_m(a, b))
        self.length = self.cum[-1]

    def project(self, p):
        return (math.radians(p[1]) * math.cos(self.lat0) * R, math.radians(p[0]) * R)

    def nearest(self, p, near_along=None, window=1500.0):
        """(distance m, along m) of the route point nearest p; with near_along, searched
        within `window` metres of it first (a route that passes a street twice)."""
        x, y = self.project(p)
        lo, hi = 0, len(self.xy) - 1
        if near_along is not None:
            lo = max(0, bisect.bisect_left(self.cum, near_along - window) - 1)
            hi = min(len(self.xy) - 1, bisect.bisect_right(self.cum, near_along + window) + 1)
        best = (float("inf"), 0.0)
        for i in range(lo, hi):
            (ax, ay), (bx, by) = self.xy[i], self.xy[i + 1]
            dx, dy = bx - ax, by - ay
            seg2 = dx * dx + dy * dy
            f = 0.0 if seg2 == 0 else max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / seg2))
            d = math.hypot(ax + f * dx - x, ay + f * dy - y)
            if d < best[0]:
                best = (d, self.cum[i] + f * (self.cum[i + 1] - self.cum[i]))
        if near_along is not None and best[0] > 50:
            return self.nearest(p)
        return best


def percentile(values, q):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(math.ceil(q / 100 * len(s))) - 1)]


# ---- data --------------------------------------------------------------------------------
def load_traces(folder):
    traces = {}
    with open(os.path.join(folder, "gps_traces.csv"), newline="") as f:
        for row in csv.DictReader(f):
            ts = int(round(datetime.fromisoformat(row["timestamp_iso8601"].replace("Z", "+00:00")).timestamp() * 1000))
            speed = float(row["speed_kmh"]) / 3.6 if row["speed_kmh"] else None
            heading = float(row["heading_deg"]) if row["heading_deg"] else None
            traces.setdefault(row["trip_id"], []).append((ts, float(row["lat"]), float(row["lon"]), speed, heading))
    return traces


def load_routes(folder):
    with open(os.path.join(folder, "planned_routes.geojson")) as f:
        features = json.load(f)["features"]
    return {ft["properties"]["trip_id"]: [(lat, lon) for lon, lat in ft["geometry"]["coordinates"]] for ft in features}


def trace_as_route(fixes):
    """The trace itself as a route: glitches (over 70 m/s from the last kept fix) and
    points within a metre of the last kept one left out."""
    kept = [fixes[0]]
    for f in fixes[1:]:
        last = kept[-1]
        d = dist_m(last[1:3], f[1:3])
        if d >= 1 and d / max(1e-3, (f[0] - last[0]) / 1000) <= 70:
            kept.append(f)
    return [(f[1], f[2]) for f in kept]


# ---- the hub -----------------------------------------------------------------------------
def start_hub(bin_dir, data_dir):
    exe = os.path.join(bin_dir, "trackhub")
    proc = subprocess.Popen([exe, "serve", "--listen", "127.0.0.1:0", "--data", data_dir],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in proc.stdout:
        if line.startswith("listening on "):
            return proc, line.split()[-1].strip()
    raise RuntimeError("the hub exited before listening")


def post_json(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


async def replay(base_url, trip, fixes, route, speedup):
    """Plays one trace; returns the fixes' send times (ms), frames and events as received."""
    post_json(base_url + "/v1/trips", {"id": trip, "route": [[lon, lat] for lat, lon in route]})
    ws_url = base_url.replace("http", "ws", 1) + "/v1/ws"
    frames, events, sent = [], [], []
    async with websockets.connect(ws_url, subprotocols=["trackhub.v1"], max_size=None) as ws:
        await ws.send(json.dumps({"op": "subscribe", "trip": trip, "id": 0}))

        async def receive():
            async for raw in ws:
                m = json.loads(raw)
                if m.get("type") == "frame":
                    frames.append(m)
                elif m.get("type") == "event":
                    events.append(m)

        reader = asyncio.create_task(receive())
        start = time.time() * 1000
        for seq, (ts, lat, lon, speed, heading) in enumerate(fixes):
            due = start + (ts - fixes[0][0]) / speedup
            await asyncio.sleep(max(0, due - time.time() * 1000) / 1000)
            fix = {"op": "fix", "trip": trip, "id": seq + 1, "seq": seq, "lat": lat, "lon": lon, "ts": ts}
            if seq > 0:
                fix["duration_ms"] = min(60_000, round((ts - fixes[seq - 1][0]) / speedup))
            if speed is not None:
                fix["speed_mps"] = round(speed, 2)
            if heading is not None:
                fix["heading"] = heading
            sent.append(time.time() * 1000)
            await ws.send(json.dumps(fix))
        # Until the marker has been still for 3 s (it may still be going on to the door).
        while time.time() * 1000 - max([sent[-1]] + [f["t"] for f in frames[-1:]]) < 3000:
            await asyncio.sleep(0.2)
        reader.cancel()
    return sent, frames, events


# ---- the naive client and the measures ------------------------------------------------------
def naive_at(t, fixes, sent, speedup):
    """(position, i): the naive marker at hub time t, straight from fix i-1 to fix i over
    their gap from when fix i arrived. None before the first fix."""
    i = bisect.bisect_right(sent, t) - 1
    if i < 0:
        return None
    if i == 0:
        return fixes[0][1:3], 0
    gap = (fixes[i][0] - fixes[i - 1][0]) / speedup
    f = 1.0 if gap <= 0 else min(1.0, (t - sent[i]) / gap)
    a, b = fixes[i - 1], fixes[i]
    return (a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f), i


def measure(name, fixes, route_pts, sent, frames, events, speedup):
    route = RouteLine(route_pts)
    dest = route_pts[-1]
    device = lambda t: fixes[0][0] + (t - sent[0]) * speedup  # noqa: E731
    out = {"trace": name, "fixes": len(fixes), "km": route.length / 1000}

    # The trace's own: fastest believable step, and when it reached the destination.
    steps = [dist_m(a[1:3], b[1:3]) / ((b[0] - a[0]) / 1000) for a, b in zip(fixes, fixes[1:]) if b[0] > a[0]]
    out["trace_kmh"] = max([s for s in steps if s <= 70] or [0]) * 3.6
    fix_along, along = [], None
    for f in fixes:
        d, along = route.nearest(f[1:3], along)
        fix_along.append(along if d <= 100 else None)
    arrive_ts = next((f[0] for f, a in zip(fixes, fix_along) if a is not None and a >= route.length - 50), None)

    # Hub frames. On-route ones: not off_route, and not on the straight way back after
    # back_on_route (until done_m moves again, the marker has not joined the route yet).
    rejoins = sorted(e["t"] for e in events if e.get("name") == "back_on_route")
    on_route, joining = [], None
    for f in frames:
        while rejoins and rejoins[0] <= f["t"]:
            rejoins.pop(0)
            joining = f.get("done_m")
        if joining is not None and f.get("done_m") == joining:
            continue
        joining = None
        if f["status"] in ("moving", "arrived"):
            on_route.append(route.nearest((f["lat"], f["lon"]), f.get("done_m"))[0])
    done = [f["done_m"] for f in frames if f["status"] != "off_route" and f.get("done_m") is not None]
    slides = [dist_m((a["lat"], a["lon"]), (b["lat"], b["lon"])) / ((b["t"] - a["t"]) * speedup / 1000)
              for a, b in zip(frames, frames[1:]) if not b.get("jump") and b["t"] > a["t"]]
    lags = []
    for i, a in enumerate(fix_along):
        if a is None or i == 0 or fix_along[i - 1] is None or a <= fix_along[i - 1] + 1:
            continue
        reach = next((f["t"] for f in frames if f["t"] >= sent[i] and (f.get("done_m") or 0) >= a - 1), None)
        if reach is not None:
            lags.append((reach - sent[i]) * speedup / 1000)
    hub = {
        "on_max": max(on_route or [0]), "on_p99": percentile(on_route, 99) or 0,
        "back": sum(1 for x, y in zip(done, done[1:]) if y < x - 1),
        "kmh": max(slides or [0]) * 3.6, "jumps": sum(1 for f in frames if f.get("jump")),
        "lag": percentile(lags, 50), "off": sum(1 for e in events if e.get("name") == "off_route"),
        "arrived": any(e.get("name") == "arrived" for e in events),
        "last_m": dist_m((frames[-1]["lat"], frames[-1]["lon"]), dest) if frames else None,
        "last_progress": frames[-1].get("progress") if frames else None,
        "eta": [],
    }
    for q in (0.25, 0.5, 0.75):
        f = next((f for f in frames if (f.get("progress") or 0) >= q), None)
        ok = f is not None and f.get("eta_s") is not None and arrive_ts is not None
        hub["eta"].append(f["eta_s"] - (arrive_ts - device(f["t"])) / 1000 if ok else None)

    # The naive client, sampled at the frames' times.
    samples = []
    for f in frames:
        s = naive_at(f["t"], fixes, sent, speedup)
        if s is not None:
            samples.append((f["t"], s[0], s[1]))
    naive_on, naive_along, along = [], [], None
    for _, p, i in samples:
        d, along = route.nearest(p, along)
        if fix_along[i] is not None and fix_along[max(0, i - 1)] is not None:
            naive_on.append(d)
        naive_along.append(along)
    naive_steps = [dist_m(a[1], b[1]) / ((b[0] - a[0]) * speedup / 1000) for a, b in zip(samples, samples[1:]) if b[0] > a[0]]
    naive = {
        "on_max": max(naive_on or [0]), "on_p99": percentile(naive_on, 99) or 0,
        "back": sum(1 for x, y in zip(naive_along, naive_along[1:]) if y < x - 1),
        "kmh": max(naive_steps or [0]) * 3.6,
        "lag": percentile([(b[0] - a[0]) / 1000 for a, b in zip(fixes, fixes[1:])], 50),
        "last_m": dist_m(fixes[-1][1:3], dest), "eta": [],
    }
    for q in (0.25, 0.5, 0.75):
        k = next((k for k, a in enumerate(naive_along) if a >= q * route.length), None)
        est = None
        if k is not None and arrive_ts is not None:
            t, p, i = samples[k]
            a, b = fixes[max(0, i - 1)], fixes[i]
            v = dist_m(a[1:3], b[1:3]) / max(1e-3, (b[0] - a[0]) / 1000)
            if v >= 0.5:
                est = (route.length - naive_along[k]) / v - (arrive_ts - device(t)) / 1000
        naive["eta"].append(est)
    out["hub"], out["naive"] = hub, naive
    return out


# ---- the table -------------------------------------------------------------------------------
def fmt(x, digits=1):
    if x is None:
        return "–"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def eta_cell(values):
    return "/".join("–" if v is None else f"{v:+.0f}" for v in values)


def print_table(results):
    print("| trace | fixes | route km | on-route max / p99 m: hub · naive | back: hub · naive "
          "| max km/h: hub · naive · trace | jumps | lag s: hub · naive | off-route | last frame to dest m (progress) · naive "
          "| ETA err s 25/50/75 %: hub · naive |")
    print("|---|---:|---:|---|---|---|---:|---|---:|---|---|")
    for r in results:
        h, n = r["hub"], r["naive"]
        last = f"{fmt(h['last_m'])} ({fmt(h['last_progress'], 3)}{', arrived' if h['arrived'] else ''}) · {fmt(n['last_m'])}"
        print(f"| {r['trace']} | {r['fixes']} | {r['km']:.2f} "
              f"| {h['on_max']:.3f} / {h['on_p99']:.3f} · {n['on_max']:.1f} / {n['on_p99']:.1f} "
              f"| {h['back']} · {n['back']} | {h['kmh']:.0f} · {n['kmh']:.0f} · {r['trace_kmh']:.0f} | {h['jumps']} "
              f"| {fmt(h['lag'])} · {fmt(n['lag'])} | {h['off']} | {last} | {eta_cell(h['eta'])} · {eta_cell(n['eta'])} |")


async def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--speedup", type=float, default=10)
    ap.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    ap.add_argument("--url", help="an already running hub (http://HOST:PORT) instead of starting one")
    # The full dataset (gps_traces.csv, planned_routes.geojson: 36 traces, of which only a part
    # is in data/samples/) lives outside the repository, so it is named, never guessed.
    ap.add_argument("--data", default=os.environ.get("TRACKHUB_SHARED_DATA"),
                    help="the folder of gps_traces.csv and planned_routes.geojson (or $TRACKHUB_SHARED_DATA)")
    ap.add_argument("--only", default="", help="only traces whose id starts with this")
    ap.add_argument("--json", help="also write every figure to this file")
    args = ap.parse_args()
    if not args.data:
        ap.error("--data DIR (or TRACKHUB_SHARED_DATA): the folder of gps_traces.csv and planned_routes.geojson")

    traces, routes = load_traces(args.data), load_routes(args.data)
    names = sorted(n for n in traces if n.startswith(args.only) and (n.startswith("i95_") or n.startswith("mopsi_") or n.startswith("visnjan")))
    proc = None
    base = args.url
    if base is None:
        proc, base = start_hub(args.bin, tempfile.mkdtemp(prefix="trackhub-motion-"))
    try:
        run = f"{int(time.time()) % 100000}"
        plans = {n: routes.get(n) or trace_as_route(traces[n]) for n in names}
        played = await asyncio.gather(*(replay(base, f"motion-{run}-{n}", traces[n], plans[n], args.speedup) for n in names))
    finally:
        if proc:
            proc.terminate()
            proc.wait()
    results = [measure(n, traces[n], plans[n], *p, args.speedup) for n, p in zip(names, played)]
    print(f"# {len(names)} traces at {args.speedup:g}x, {platform.node()}, {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}")
    print_table(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    asyncio.run(main())
