#!/usr/bin/env python3
"""Stop ETA benchmark (issue 37): how right is each stop's `eta_s` on real traces?

For each recorded trace with at least three places where it stands still (a still: every
fix within STILL_RADIUS_M of the first one for at least STILL_MIN_S, not in the first or
last minute of the trace), the three longest stills become the trip's stops:

  * the route is the trace's own path: glitches (over 70 m/s from the last kept fix) left
    out, and each still collapsed to one point, its fixes' centroid, which is the stop;
  * the stops are stills at least STOP_SPACING_M apart, longest first; two stills one
    after the other within 2 * STILL_RADIUS_M of each other count as one;
  * each stop is a waypoint `{lat, lon, id, name, dwell_s}` (PROTOCOL 17) whose planned
    dwell is how long the trace really stood there, rounded to the minute (at least one);
  * the fixes are played at their recorded spacing divided by --speedup, each with its
    recorded `ts` and `duration_ms` = the recorded gap over the speed-up (as `trackhub
    simulate --replay` does), into a release `trackhub serve` started for the run;
  * `proceed` is sent when the trace moves on from a stop (its first fix beyond the still),
    or, if the marker reaches the stop only later, as soon as it does;
  * `GET /v1/trips/{id}` is read every --poll seconds, and each stop's `eta_s` noted.

Then, for each stop and for the destination, the ETA error at 10, 5 and 1 minute before
the marker really got there (its `waypoint_reached` event, or `arrived` for the
destination): `eta_s` of the last reading at or before that moment minus the time the
marker really still needed from that reading. Positive: the hub said later than it was.

Time. The hub's speed estimate divides along-route metres by the fixes' own `ts`
differences (6.9), so `eta_s` is in the trace's seconds, whatever the speed-up; the
readings' and events' hub times are turned into trace time as ts0 + (t - t0) * speedup,
t0 being when the first fix was sent. One part of `eta_s` runs on the hub's clock: while
the trip holds at a stop, that stop's dwell counts down from its `waypoint_reached` in hub
seconds (17), which at 20x is 20 times too slow in trace time. The bench puts that right
exactly: for the stops after the held one it replaces max(0, dwell - elapsed) by
max(0, dwell - elapsed * speedup) in each reading. Nothing else is corrected.

Until the hub reports per-stop `eta_s` (PROTOCOL 17), the stops' rows are empty and only
the destination row (the trip's own `eta_s`) is filled.

Traces: by default the project's data/samples (its fixtures' Mopsi tracks, the Mopsi
sample and the Višnjan drive); with --data DIR, also the traces of that folder's
gps_traces.csv (the shared dataset, ../shared/data, kept outside the repository).

Usage: python3 bench/eta/stop_eta.py [--speedup 20] [--bin .build/release] [--data DIR]
       [--only PREFIX] [--json FILE]
It is a benchmark: it prints numbers and asserts nothing.
"""

import argparse
import asyncio
import csv
import json
import math
import os
import platform
import re
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "motion"))
from replay import dist_m, load_traces, post_json, start_hub  # noqa: E402

import stop_eta_stats as stats  # noqa: E402

STILL_RADIUS_M = 25
STILL_MIN_S = 45
EDGE_S = 60
MAX_STEP_MPS = 70
STOPS = 3
STOP_SPACING_M = 100


# ---- traces ------------------------------------------------------------------------------
def load_samples(folder):
    """The traces data/samples ships: {name: [(ts ms, lat, lon, None, None)]}."""
    traces = {}
    fixtures = os.path.join(folder, "fixtures", "mopsi_tracks.csv")
    if os.path.exists(fixtures):
        with open(fixtures, newline="") as f:
            for row in csv.DictReader(f):
                traces.setdefault(row["trace"], []).append((int(row["ts"]), float(row["lat"]), float(row["lon"]), None, None))
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith(".csv"):
            with open(path, newline="") as f:
                traces[name[:-4]] = [(int(r["ts"]), float(r["lat"]), float(r["lon"]), None, None) for r in csv.DictReader(f)]
        elif name.endswith(".gpx"):
            with open(path) as f:
                text = f.read()
            points = re.findall(r'<trkpt lat="([-0-9.]+)" lon="([-0-9.]+)">.*?<time>([^<]+)</time>', text, re.S)
            traces[name[:-4]] = [(int(datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() * 1000), float(la), float(lo), None, None)
                                 for la, lo, t in points]
    return traces


def find_stills(fixes):
    """[(first, last)] fix index ranges where the trace stands still (module docstring)."""
    stills, i = [], 0
    start, end = fixes[0][0], fixes[-1][0]
    while i < len(fixes):
        j = i
        while j + 1 < len(fixes) and dist_m(fixes[i][1:3], fixes[j + 1][1:3]) < STILL_RADIUS_M:
            j += 1
        long_enough = fixes[j][0] - fixes[i][0] >= STILL_MIN_S * 1000
        inside = fixes[i][0] - start >= EDGE_S * 1000 and end - fixes[j][0] >= EDGE_S * 1000
        if long_enough and inside:
            # A still cut in two by the radius (the next fix starts the next one) is one stop.
            if stills and stills[-1][1] + 1 == i and dist_m(fixes[stills[-1][0]][1:3], fixes[i][1:3]) < 2 * STILL_RADIUS_M:
                stills[-1] = (stills[-1][0], j)
            else:
                stills.append((i, j))
            i = j + 1
        else:
            i += 1
    return stills


def plan_trip(fixes):
    """(route [(lat, lon)], stops [{lat, lon, id, name, dwell_s, first, last, still_s}]) or
    None when the trace has fewer than STOPS stills."""
    stills = find_stills(fixes)
    if len(stills) < STOPS:
        return None
    chosen = []
    for a, b in sorted(stills, key=lambda s: fixes[s[0]][0] - fixes[s[1]][0]):
        # Stops apart from each other, as customers' doors are.
        if len(chosen) < STOPS and all(dist_m(fixes[a][1:3], fixes[c][1:3]) >= STOP_SPACING_M for c, _ in chosen):
            chosen.append((a, b))
    if len(chosen) < STOPS:
        return None
    chosen.sort()
    stops = []
    for k, (a, b) in enumerate(chosen):
        lat = sum(f[1] for f in fixes[a:b + 1]) / (b - a + 1)
        lon = sum(f[2] for f in fixes[a:b + 1]) / (b - a + 1)
        still_s = (fixes[b][0] - fixes[a][0]) / 1000
        stops.append({"lat": lat, "lon": lon, "id": f"stop-{k + 1}", "name": f"Stop {k + 1}",
                      "dwell_s": max(60, round(still_s / 60) * 60), "first": a, "last": b, "still_s": still_s})
    route, kept_ts, i, at = [], None, 0, {s["first"]: s for s in stops}
    while i < len(fixes):
        if i in at:
            point, ts, is_stop, i = (at[i]["lat"], at[i]["lon"]), fixes[at[i]["last"]][0], True, at[i]["last"] + 1
        else:
            point, ts, is_stop, i = fixes[i][1:3], fixes[i][0], False, i + 1
        if route and not is_stop:
            d = dist_m(route[-1], point)
            if d < 1 or d / max(1e-3, (ts - kept_ts) / 1000) > MAX_STEP_MPS:
                continue
        route.append(point)
        kept_ts = ts
    return route, stops


# ---- the replay --------------------------------------------------------------------------
def http(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, None


async def replay(base, trip, fixes, route, stops, speedup, poll_s):
    """Plays one trace; returns (t0 wall ms, readings [(wall ms, body)], events)."""
    import websockets

    waypoints = [{k: s[k] for k in ("lat", "lon", "id", "name", "dwell_s")} for s in stops]
    post_json(base + "/v1/trips", {"id": trip, "route": [[lon, lat] for lat, lon in route], "waypoints": waypoints})
    readings, events = [], []
    moved_on = set()       # stops the trace has left
    proceeded = set()
    finished = asyncio.Event()
    loop = asyncio.get_running_loop()

    def proceed_if_due():
        reached = {e["index"] for e in events if e.get("name") == "waypoint_reached"}
        for k in sorted(moved_on & reached - proceeded):
            proceeded.add(k)
            loop.run_in_executor(None, http, "POST", f"{base}/v1/trips/{trip}/proceed", {})

    async with websockets.connect(base.replace("http", "ws", 1) + "/v1/ws", subprotocols=["trackhub.v1"], max_size=None) as ws:
        await ws.send(json.dumps({"op": "subscribe", "trip": trip, "id": 0}))

        async def receive():
            async for raw in ws:
                m = json.loads(raw)
                if m.get("type") == "event":
                    events.append(m)
                    proceed_if_due()
                    if m.get("name") == "arrived":
                        finished.set()

        async def poll():
            while not finished.is_set():
                status, body = await loop.run_in_executor(None, http, "GET", f"{base}/v1/trips/{trip}")
                if status == 200:
                    readings.append((time.time() * 1000, body))
                await asyncio.sleep(poll_s)

        tasks = [asyncio.create_task(receive()), asyncio.create_task(poll())]
        leaves = {s["last"] + 1: k for k, s in enumerate(stops)}
        t0 = time.time() * 1000
        for seq, (ts, lat, lon, _, _) in enumerate(fixes):
            due = t0 + (ts - fixes[0][0]) / speedup
            await asyncio.sleep(max(0, due - time.time() * 1000) / 1000)
            if seq in leaves:
                moved_on.add(leaves[seq])
                proceed_if_due()
            fix = {"op": "fix", "trip": trip, "id": seq + 1, "seq": seq, "lat": lat, "lon": lon, "ts": ts}
            if seq > 0:
                fix["duration_ms"] = min(60_000, round((ts - fixes[seq - 1][0]) / speedup))
            await ws.send(json.dumps(fix))
        # The marker may still be on its way to the door; a trip that never arrives (the
        # marker stuck short of it) is cut off after a minute of hub time.
        try:
            await asyncio.wait_for(finished.wait(), 60)
        except asyncio.TimeoutError:
            finished.set()
        for t in tasks:
            t.cancel()
    return t0, readings, events


# ---- the measures ------------------------------------------------------------------------
def measure(name, fixes, stops, t0, readings, events, speedup):
    """Per stop and the destination: the ETA errors (s) at each horizon, or None."""
    device = lambda t: fixes[0][0] / 1000 + (t - t0) * speedup / 1000  # noqa: E731  trace s
    reached = {e["index"]: e["t"] for e in events if e.get("name") == "waypoint_reached"}
    arrived = next((e["t"] for e in events if e.get("name") == "arrived"), None)

    def corrected(t, body, upto):
        """The reading's eta_s to stop `upto` (None: the destination), the held stop's dwell
        counted down in trace seconds (module docstring)."""
        waypoints = body.get("waypoints") or []
        eta = body.get("eta_s") if upto is None else (waypoints[upto].get("eta_s") if upto < len(waypoints) else None)
        if eta is None:
            return None
        for k, r in reached.items():
            held = body.get("status") == "holding" and (waypoints[k].get("visited") is False if k < len(waypoints) else False)
            if held and r <= t and (upto is None or k < upto):
                elapsed = (t - r) / 1000
                eta += max(0.0, stops[k]["dwell_s"] - elapsed * speedup) - max(0.0, stops[k]["dwell_s"] - elapsed)
        return eta

    rows = []
    for k in list(range(len(stops))) + [None]:
        arrive_t = arrived if k is None else reached.get(k)
        series = []
        if arrive_t is not None:
            series = [(device(t), corrected(t, body, k)) for t, body in readings if t <= arrive_t]
        errors = stats.errors_before(series, device(arrive_t) if arrive_t is not None else None, stats.HORIZONS_S)
        rows.append({"trace": name, "stop": "destination" if k is None else stops[k]["id"],
                     "reached": arrive_t is not None, "errors": errors})
    return rows


async def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--speedup", type=float, default=20)
    ap.add_argument("--poll", type=float, default=0.25, help="seconds between GET /v1/trips/{id} readings (hub time)")
    ap.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    ap.add_argument("--samples", default=os.path.join(ROOT, "data", "samples"))
    ap.add_argument("--data", help="also the traces of DIR/gps_traces.csv (e.g. ../shared/data)")
    ap.add_argument("--only", default="", help="only traces whose name starts with this")
    ap.add_argument("--json", help="also write every figure to this file")
    args = ap.parse_args()

    traces = load_samples(args.samples)
    if args.data:
        traces.update(load_traces(args.data))
    plans = {n: plan_trip(f) for n, f in sorted(traces.items()) if n.startswith(args.only)}
    plans = {n: p for n, p in plans.items() if p is not None}
    if not plans:
        ap.error("no trace has three stills")
    proc, base = start_hub(args.bin, tempfile.mkdtemp(prefix="trackhub-stop-eta-"))
    try:
        run = f"{int(time.time()) % 100000}"
        played = await asyncio.gather(*(replay(base, f"stops-{run}-{n}", traces[n], r, s, args.speedup, args.poll)
                                        for n, (r, s) in plans.items()))
    finally:
        proc.terminate()
        proc.wait()
    rows = []
    for (n, (_, s)), p in zip(plans.items(), played):
        rows += measure(n, traces[n], s, *p, args.speedup)
    print(f"# {len(plans)} traces, {sum(len(s) for _, s in plans.values())} stops, at {args.speedup:g}x, "
          f"{platform.node()}, {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}")
    print("\nStops:")
    for n, (route, s) in plans.items():
        print(f"  {n}: route {len(route)} points; " + "; ".join(
            f"{x['id']} at {(traces[n][x['first']][0] - traces[n][0][0]) / 60000:.1f} min, still {x['still_s']:.0f} s, dwell_s {x['dwell_s']}" for x in s))
    print()
    print(stats.table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"plans": {n: s for n, (_, s) in plans.items()}, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    asyncio.run(main())
