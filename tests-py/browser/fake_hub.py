"""A tiny stand-in for the TrackHub hub, for the web client's browser tests.

It serves the web client (``web-client/`` at ``/``, the page routes ``/``,
``/trips/{id}`` and ``/fleet``, Leaflet under ``/vendor/leaflet/``), the read-only
HTTP API (``GET /v1/trips``, ``/v1/trips/{id}``, ``/v1/trips/{id}/trail``,
``/v1/fleet/clusters``, ``/healthz``) and enough of the WebSocket protocol
(``/v1/ws``, subprotocol ``trackhub.v1``) to drive the pages: ``hello``, ``ping``,
``subscribe`` (snapshots, segments and events; ``since_event`` replay),
``unsubscribe``, ``fix``, ``proceed`` and ``viewport`` (greedy clustering).

It is one asyncio server on one loopback port, in a background thread, using the
``websockets`` package's ``process_request`` hook for plain HTTP GETs. Trips are
created from Python (``create_trip``), since that hook serves only GET. The trip
logic is a simplification of PROTOCOL.md section 6 (snapping to the nearest point of
the route, clamping at waypoints, holding, arrival, off route), good enough for UI
tests, not a reference. It ignores tokens but records them (``seen_tokens``).

Run it by hand to look at the pages with a few simulated riders:

    python3 tests-py/browser/fake_hub.py --port 8080 --demo
"""

from __future__ import annotations

import asyncio
import hashlib
import http
import json
import logging
import math
import mimetypes
import os
import threading
import time
import urllib.parse
from typing import Any, Optional

import websockets
from websockets.legacy.server import serve as ws_serve

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
DEFAULT_WEB_ROOT = os.path.join(REPO, "web-client")
DEFAULT_LEAFLET = "/usr/share/javascript/leaflet"

EARTH_R = 6371008.8
SUBPROTOCOL = "trackhub.v1"

logging.getLogger("websockets").setLevel(logging.CRITICAL)


def now_ms() -> int:
    return int(time.time() * 1000)


def haversine(a, b) -> float:
    lon1, lat1, lon2, lat2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    s = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_R * math.asin(min(1.0, math.sqrt(s)))


def bearing(a, b) -> float:
    lon1, lat1, lon2, lat2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    y = math.sin(lon2 - lon1) * math.cos(lat2)
    x = math.cos(lat1) * math.sin(lat2) - math.sin(lat1) * math.cos(lat2) * math.cos(lon2 - lon1)
    return (math.degrees(math.atan2(y, x)) + 360) % 360


class Route:
    def __init__(self, pts):
        self.pts = [[float(p[0]), float(p[1])] for p in pts]
        self.cum = [0.0]
        for i in range(1, len(self.pts)):
            self.cum.append(self.cum[-1] + haversine(self.pts[i - 1], self.pts[i]))
        self.length = self.cum[-1]

    def project(self, lon, lat):
        """(along_m, distance_m, [lon, lat]) of the route point nearest (lon, lat)."""
        best = None
        k = math.cos(math.radians(lat))
        for i in range(len(self.pts) - 1):
            a, b = self.pts[i], self.pts[i + 1]
            ax, ay = (a[0] - lon) * k, a[1] - lat
            bx, by = (b[0] - lon) * k, b[1] - lat
            dx, dy = bx - ax, by - ay
            L2 = dx * dx + dy * dy
            f = 0.0 if L2 == 0 else max(0.0, min(1.0, -(ax * dx + ay * dy) / L2))
            p = [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f]
            d = haversine(p, [lon, lat])
            if best is None or d < best[1] - 1e-9:
                best = (self.cum[i] + (self.cum[i + 1] - self.cum[i]) * f, d, p)
        return best

    def point_at(self, d):
        d = max(0.0, min(self.length, d))
        for i in range(len(self.pts) - 1):
            if self.cum[i + 1] >= d:
                seg = self.cum[i + 1] - self.cum[i]
                f = 0.0 if seg == 0 else (d - self.cum[i]) / seg
                a, b = self.pts[i], self.pts[i + 1]
                return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f]
        return list(self.pts[-1])

    def bearing_at(self, d):
        for i in range(len(self.pts) - 1):
            if self.cum[i + 1] >= d and self.cum[i + 1] > self.cum[i]:
                return bearing(self.pts[i], self.pts[i + 1])
        return bearing(self.pts[-2], self.pts[-1])

    def slice(self, d0, d1):
        """The route's geometry from along-distance d0 to d1 (either direction)."""
        if d1 < d0:
            return list(reversed(self.slice(d1, d0)))
        out = [self.point_at(d0)]
        for i, c in enumerate(self.cum):
            if d0 < c < d1:
                out.append(list(self.pts[i]))
        out.append(self.point_at(d1))
        return out


DEFAULT_CONFIG = {"arrival_buffer_m": 50, "reroute_distance_m": 100, "wait_at_waypoints": True, "max_speed_mps": 70}


class Trip:
    def __init__(self, hub: "FakeHub", tid, route, waypoints, destination, rider, config):
        self.hub = hub
        self.id = tid
        self.route = Route(route) if route else None
        self.rider = rider
        self.config = dict(DEFAULT_CONFIG, **(config or {}))
        self.waypoints = []
        prev = 0.0
        for i, w in enumerate(waypoints or []):
            proj = None
            if self.route:
                proj = self.route.project(w["lon"], w["lat"])[0]
                proj = max(proj, prev)
                prev = proj
            self.waypoints.append({"index": i, "lat": w["lat"], "lon": w["lon"], "visited": False, "proj": proj})
        if destination is None and self.route:
            last = self.route.pts[-1]
            destination = {"lat": last[1], "lon": last[0]}
        self.destination = destination
        self.dest_proj = self.route.project(destination["lon"], destination["lat"])[0] if (self.route and destination) else None
        self.status = "pending"
        self.along = 0.0          # marker's along-route distance at the animation's target
        self.pos = None           # marker's target position [lon, lat]
        self.bearing = None
        self.anim = None          # {"path", "cum", "t0", "dur", "from_along", "to_along", "seq"}
        self.seg_seq = 0
        self.events = []
        self.last_ts = None
        self.last_fix_pos = None
        self.speed = None
        self.trail = []           # (lon, lat, ts, seq, reason)
        self.seqs = set()
        self.holding_index = None
        self.done_timer = None

    # -- derived values --
    def done_m(self):
        return None if (self.route is None or self.pos is None) else round(self.along, 1)

    def remaining_m(self):
        if self.route is None or self.pos is None:
            return None
        return round(max(0.0, self.dest_proj - self.along), 1)

    def progress(self):
        if self.route is None or self.pos is None or not self.dest_proj:
            return None
        return max(0.0, min(1.0, self.along / self.dest_proj))

    def eta_s(self):
        if self.status == "arrived":
            return 0
        if self.route is None or self.pos is None or self.speed is None or self.speed < 0.5:
            return None
        return int(math.ceil(self.remaining_m() / self.speed))

    def leg(self):
        return sum(1 for w in self.waypoints if w["visited"])

    def marker_now(self, t):
        """(position, bearing, along) of the marker at hub time t."""
        a = self.anim
        if not a or a["dur"] <= 0 or t >= a["t0"] + a["dur"]:
            return self.pos, self.bearing, self.along
        f = max(0.0, min(1.0, (t - a["t0"]) / a["dur"]))
        path, cum = a["path"], a["cum"]
        d = cum[-1] * f
        p = path[-1]
        b = self.bearing
        for i in range(len(path) - 1):
            if cum[i + 1] >= d:
                seg = cum[i + 1] - cum[i]
                g = 0.0 if seg == 0 else (d - cum[i]) / seg
                p = [path[i][0] + (path[i + 1][0] - path[i][0]) * g, path[i][1] + (path[i + 1][1] - path[i][1]) * g]
                if seg > 0:
                    b = bearing(path[i], path[i + 1])
                break
        along = a["from_along"] + (a["to_along"] - a["from_along"]) * f
        return p, b, along

    def state(self):
        pos = {"lat": self.pos[1], "lon": self.pos[0]} if self.pos else None
        return {
            "trip": self.id,
            "status": self.status,
            "rider": self.rider,
            "config": self.config,
            "route": self.route.pts if self.route else None,
            "waypoints": [{k: w[k] for k in ("index", "lat", "lon", "visited")} for w in self.waypoints],
            "destination": self.destination,
            "position": pos,
            "bearing": self.bearing if self.pos else None,
            "progress": self.progress(),
            "done_m": self.done_m(),
            "remaining_m": self.remaining_m(),
            "eta_s": self.eta_s(),
            "leg": self.leg(),
            "trail": [[f[0], f[1], f[2]] for f in self.trail[-100:]],
            "last_event": len(self.events),
        }


class Conn:
    def __init__(self, ws):
        self.ws = ws
        self.viewport = None      # (bbox, zoom)
        self.last_clusters = None


class FakeHub:
    def __init__(self, web_root=DEFAULT_WEB_ROOT, leaflet_dir=DEFAULT_LEAFLET, host="127.0.0.1", port=0, fleet_hz=2.0):
        self.web_root = web_root
        self.leaflet_dir = leaflet_dir
        self.host = host
        self.port = port
        self.fleet_hz = fleet_hz
        self.trips: dict[str, Trip] = {}
        self.subs: dict[str, dict[Conn, str]] = {}   # trip id -> {conn: mode}
        self.conns: set[Conn] = set()
        self.seen_tokens: list[tuple[str, str]] = []  # ("ws"|"http", token)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run_loop, name="fake-hub", daemon=True)
        self.server = None
        self.fleet_task = None
        self.thread.start()

    # ---- lifecycle (call from any thread) ------------------------------------
    def _run_loop(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def _call(self, coro_or_fn, *args, timeout=10):
        async def wrap():
            r = coro_or_fn(*args)
            if asyncio.iscoroutine(r):
                r = await r
            return r
        return asyncio.run_coroutine_threadsafe(wrap(), self.loop).result(timeout)

    def start(self):
        self._call(self._start)
        return self

    async def _start(self):
        self.server = await ws_serve(
            self._ws_handler, self.host, self.port,
            process_request=self._process_request,
            subprotocols=[SUBPROTOCOL],
            max_size=64 * 1024,
            ping_interval=30, ping_timeout=60,
        )
        self.port = self.server.sockets[0].getsockname()[1]
        self.fleet_task = asyncio.ensure_future(self._fleet_loop())

    def stop(self):
        """Stops listening and drops every connection (state is kept, as after a restart)."""
        self._call(self._stop)

    async def _stop(self):
        if self.fleet_task:
            self.fleet_task.cancel()
            self.fleet_task = None
        if self.server:
            self.server.close()
            await self.server.wait_closed()
            self.server = None
        self.conns.clear()
        self.subs.clear()

    def close(self):
        try:
            self.stop()
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
            if not self.thread.is_alive():
                self.loop.close()

    @property
    def base_url(self):
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self):
        return f"ws://{self.host}:{self.port}/v1/ws"

    # ---- trips (from Python) ---------------------------------------------------
    def create_trip(self, trip_id, route=None, waypoints=None, destination=None, rider=None, config=None):
        return self._call(self._create_trip, trip_id, route, waypoints, destination, rider, config)

    def _create_trip(self, trip_id, route, waypoints, destination, rider, config):
        if trip_id in self.trips:
            raise ValueError(f"trip {trip_id} exists")
        t = Trip(self, trip_id, route, waypoints, destination, rider, config)
        self.trips[trip_id] = t
        self._event(t, "trip_created", lat=None, lon=None)
        for conn in list(self.subs.get(trip_id, {})):
            self._send(conn, dict(type="snapshot", **t.state()))
        return t.state()

    def trip_state(self, trip_id):
        return self._call(lambda: self.trips[trip_id].state())

    # ---- messaging ---------------------------------------------------------------
    def _send(self, conn: Conn, msg):
        data = json.dumps(msg)

        async def go():
            try:
                await conn.ws.send(data)
            except Exception:
                pass
        asyncio.ensure_future(go())

    def _broadcast(self, trip: Trip, msg):
        for conn in list(self.subs.get(trip.id, {})):
            self._send(conn, msg)

    def _event(self, trip: Trip, name, lat="marker", lon="marker", **extra):
        if lat == "marker":
            p = trip.marker_now(now_ms())[0]
            lat, lon = (p[1], p[0]) if p else (None, None)
        ev = {"type": "event", "trip": trip.id, "n": len(trip.events) + 1, "name": name, "t": now_ms(), "lat": lat, "lon": lon}
        ev.update(extra)
        trip.events.append(ev)
        self._broadcast(trip, ev)

    # ---- WebSocket -----------------------------------------------------------------
    async def _ws_handler(self, ws, path=None):
        conn = Conn(ws)
        self.conns.add(conn)
        try:
            async for raw in ws:
                if isinstance(raw, bytes):
                    await ws.close(1003, "binary frames are not supported")
                    break
                try:
                    msg = json.loads(raw)
                except ValueError:
                    self._send(conn, {"type": "error", "code": "bad_request", "message": "not JSON"})
                    continue
                if not isinstance(msg, dict):
                    self._send(conn, {"type": "error", "code": "bad_request", "message": "not an object"})
                    continue
                try:
                    self._on_op(conn, msg)
                except Exception as e:  # a bug in the fake hub; report it, keep the connection
                    self._reply(conn, msg, {"type": "error", "code": "bad_request", "message": f"fake hub: {e!r}"})
        except websockets.ConnectionClosed:
            pass
        finally:
            self.conns.discard(conn)
            for subs in self.subs.values():
                subs.pop(conn, None)

    def _reply(self, conn, msg, reply):
        if "id" in msg:
            reply["re"] = msg["id"]
        self._send(conn, reply)

    def _on_op(self, conn: Conn, msg):
        op = msg.get("op")
        if op == "hello":
            if msg.get("token"):
                self.seen_tokens.append(("hello", msg["token"]))
            self._reply(conn, msg, {"type": "welcome", "session": hashlib.sha1(str(id(conn)).encode()).hexdigest()[:12],
                                    "server": "fake-hub", "protocol": 1, "tick_hz": 10, "fleet_hz": self.fleet_hz})
        elif op == "ping":
            self._reply(conn, msg, {"type": "pong", "t": now_ms()})
        elif op == "subscribe":
            self._subscribe(conn, msg)
        elif op == "unsubscribe":
            self.subs.get(msg.get("trip"), {}).pop(conn, None)
            self._reply(conn, msg, {"type": "unsubscribed", "trip": msg.get("trip")})
        elif op == "fix":
            self._reply(conn, msg, self._fix(msg))
        elif op == "proceed":
            self._reply(conn, msg, self._proceed(msg.get("trip")))
        elif op == "viewport":
            bbox = msg.get("bbox")
            if bbox is None:
                conn.viewport = None
                return
            z = msg.get("zoom")
            if not isinstance(z, (int, float)) or not (0 <= math.floor(z) <= 22):
                self._reply(conn, msg, {"type": "error", "code": "bad_request", "message": "zoom must be 0-22"})
                return
            try:
                nb = normalise_bbox(bbox)
            except ValueError as e:
                self._reply(conn, msg, {"type": "error", "code": "bad_request", "message": f"bbox: {e}"})
                return
            conn.viewport = (nb, int(math.floor(z)))
            body = self.clusters(nb, int(math.floor(z)))
            conn.last_clusters = _cluster_key(body)
            self._reply(conn, msg, dict(type="clusters", **body))
        else:
            self._reply(conn, msg, {"type": "error", "code": "bad_request", "message": f"unknown op {op!r}"})

    def _subscribe(self, conn, msg):
        tid = msg.get("trip")
        if not isinstance(tid, str) or not tid:
            self._reply(conn, msg, {"type": "error", "code": "bad_request", "message": "trip is required"})
            return
        mode = msg.get("mode", "frames")
        self.subs.setdefault(tid, {})[conn] = mode
        trip = self.trips.get(tid)
        since = msg.get("since_event")
        if trip is None:
            snap = {"trip": tid, "status": "unknown", "rider": None, "config": None, "route": None, "waypoints": [],
                    "destination": None, "position": None, "bearing": None, "progress": None, "done_m": None,
                    "remaining_m": None, "eta_s": None, "leg": 0, "trail": [], "last_event": 0}
            if since is not None:
                snap["recovered"] = False
            self._reply(conn, msg, dict(type="snapshot", **snap))
            return
        snap = dict(type="snapshot", **trip.state())
        replay = []
        if since is not None:
            if since <= len(trip.events):
                snap["recovered"] = True
                replay = trip.events[since:]
            else:
                snap["recovered"] = False
        self._reply(conn, msg, snap)
        for ev in replay:
            self._send(conn, ev)
        # Mid-animation: the rest of it.
        t = now_ms()
        a = trip.anim
        if a and a["dur"] > 0 and t < a["t0"] + a["dur"]:
            p, _, along = trip.marker_now(t)
            if trip.route and not a.get("off"):
                path = trip.route.slice(along, a["to_along"])
            else:
                path = [p, a["path"][-1]]
            self._send(conn, self._segment_msg(trip, a["seq"], t, a["t0"] + a["dur"] - t, path,
                                               (max(0.0, min(1.0, along / trip.dest_proj)) if trip.dest_proj else None)))

    def _segment_msg(self, trip, seq, t0, dur, path, progress_from):
        return {"type": "segment", "trip": trip.id, "seq": seq, "t0": t0, "duration_ms": int(dur), "path": path,
                "progress_from": progress_from, "progress_to": trip.progress(), "done_m": trip.done_m(),
                "remaining_m": trip.remaining_m(), "eta_s": trip.eta_s(), "leg": trip.leg(), "status": trip.status}

    # ---- trip logic --------------------------------------------------------------------
    def _fix(self, msg):
        tid = msg.get("trip")
        trip = self.trips.get(tid)
        if trip is None:
            return {"type": "error", "code": "not_found", "message": f"trip {tid!r} not found"}
        for f in ("lat", "lon", "ts"):
            if not isinstance(msg.get(f), (int, float)) or isinstance(msg.get(f), bool):
                return {"type": "error", "code": "bad_request", "message": f"{f} must be a number"}
        lat, lon, ts, seq = float(msg["lat"]), float(msg["lon"]), int(msg["ts"]), msg.get("seq")
        ack = {"type": "ack", "trip": tid}
        if seq is not None:
            ack["seq"] = seq
        reason = None
        if (seq is not None and seq in trip.seqs) or (seq is None and any(f[2] == ts for f in trip.trail)):
            reason = "duplicate"
        elif trip.last_ts is not None and ts <= trip.last_ts:
            reason = "out_of_order"
        elif trip.last_fix_pos is not None and trip.last_ts is not None and \
                haversine(trip.last_fix_pos, [lon, lat]) / max(1e-3, (ts - trip.last_ts) / 1000) > trip.config["max_speed_mps"]:
            reason = "outlier"
        elif trip.status in ("holding", "arrived", "ended"):
            reason = trip.status
        if reason != "duplicate":
            trip.trail.append((lon, lat, ts, seq, reason))
            trip.trail.sort(key=lambda f: (f[2], f[3] if f[3] is not None else -1))
            if seq is not None:
                trip.seqs.add(seq)
        if reason:
            ack.update(applied=False, reason=reason)
            return ack
        self._apply(trip, lon, lat, ts, msg.get("duration_ms"))
        ack["applied"] = True
        return ack

    def _apply(self, trip: Trip, lon, lat, ts, duration_ms):
        t = now_ms()
        cur_pos, cur_bearing, cur_along = trip.marker_now(t)
        first = trip.pos is None
        if duration_ms is None:
            dur = 0 if trip.last_ts is None else min(ts - trip.last_ts, 10000)
        else:
            dur = duration_ms
        dur = int(max(0, min(60000, round(dur))))
        prev_ts, prev_pos = trip.last_ts, trip.last_fix_pos
        trip.last_ts, trip.last_fix_pos = ts, [lon, lat]
        cfg = trip.config
        off = False
        if trip.route:
            a, dist, snapped = trip.route.project(lon, lat)
            limit = cfg["reroute_distance_m"] / (2 if trip.status == "off_route" else 1)
            on_route = dist <= limit
        else:
            on_route = False
        progress_from = trip.progress()
        if trip.route and on_route:
            limit_along = None
            nxt = next((w for w in trip.waypoints if not w["visited"]), None)
            if nxt is not None:
                limit_along = nxt["proj"]
            elif trip.dest_proj is not None:
                limit_along = trip.dest_proj
            target = min(a, limit_along) if limit_along is not None else a
            if trip.status == "off_route":
                trip.status = "moving"
                self._event(trip, "back_on_route")
            if prev_ts is not None and ts > prev_ts:
                v = abs(target - trip.along) / ((ts - prev_ts) / 1000)
                trip.speed = v if trip.speed is None else 0.3 * v + 0.7 * trip.speed
            if not first and trip.along - 30 < target < trip.along:
                return  # backward jitter: applied, no animation
            from_along = cur_along
            was_off = trip.anim is not None and trip.anim.get("off")
            trip.along = target
            path = trip.route.slice(from_along, target) if not was_off else [cur_pos, trip.route.point_at(target)]
            to_pos = trip.route.point_at(target)
            new_bearing = trip.route.bearing_at(target) if target >= from_along else bearing(path[0], path[-1]) if path[0] != path[-1] else cur_bearing
        else:
            off = True
            if trip.route and trip.status != "off_route":
                trip.status = "off_route"
                self._event(trip, "off_route", distance_m=round(dist, 1))
            if prev_ts is not None and prev_pos is not None and ts > prev_ts:
                v = haversine(prev_pos, [lon, lat]) / ((ts - prev_ts) / 1000)
                trip.speed = v if trip.speed is None else 0.3 * v + 0.7 * trip.speed
            from_along = cur_along
            to_pos = [lon, lat]
            path = [cur_pos, to_pos] if cur_pos else [to_pos]
            new_bearing = bearing(cur_pos, to_pos) if cur_pos and cur_pos != to_pos else cur_bearing
        if trip.status == "pending":
            trip.status = "moving"
        if first:
            dur = 0
            path = [to_pos]
            progress_from = trip.progress()
        trip.pos = to_pos
        trip.bearing = new_bearing if new_bearing is not None else 0.0
        trip.seg_seq += 1
        cum = [0.0]
        for i in range(1, len(path)):
            cum.append(cum[-1] + haversine(path[i - 1], path[i]))
        trip.anim = {"path": path, "cum": cum, "t0": t, "dur": dur, "from_along": from_along, "to_along": trip.along,
                     "seq": trip.seg_seq, "off": off, "pf": progress_from}
        self._broadcast(trip, self._segment_msg(trip, trip.seg_seq, t, dur, path, progress_from))
        if trip.done_timer:
            trip.done_timer.cancel()
        trip.done_timer = self.loop.call_later(dur / 1000, self._reached, trip, trip.seg_seq)

    def _reached(self, trip: Trip, seq):
        if trip.seg_seq != seq or trip.status in ("arrived", "ended", "holding"):
            return
        trip.anim = None
        buf = trip.config["arrival_buffer_m"]
        nxt = next((w for w in trip.waypoints if not w["visited"]), None)

        def near(w_proj, w_pt):
            if trip.route and trip.status != "off_route" and w_proj is not None:
                return abs(trip.along - w_proj) <= buf
            return trip.pos is not None and haversine(trip.pos, w_pt) <= buf

        if nxt is not None:
            if near(nxt["proj"], [nxt["lon"], nxt["lat"]]):
                remaining = sum(1 for w in trip.waypoints if not w["visited"]) - 1
                self._event(trip, "waypoint_reached", index=nxt["index"], remaining_waypoints=remaining)
                if trip.config["wait_at_waypoints"]:
                    trip.status = "holding"
                    trip.holding_index = nxt["index"]
                else:
                    nxt["visited"] = True
                    self._event(trip, "waypoint_resumed", index=nxt["index"], remaining_waypoints=remaining)
                    self._check_arrival(trip)
        else:
            self._check_arrival(trip)

    def _check_arrival(self, trip):
        if any(not w["visited"] for w in trip.waypoints) or trip.destination is None or trip.pos is None:
            return
        d = trip.destination
        if trip.route and trip.status != "off_route":
            close = abs(trip.dest_proj - trip.along) <= trip.config["arrival_buffer_m"]
        else:
            close = haversine(trip.pos, [d["lon"], d["lat"]]) <= trip.config["arrival_buffer_m"]
        if close:
            trip.status = "arrived"
            self._event(trip, "arrived")

    def _proceed(self, tid):
        trip = self.trips.get(tid)
        if trip is None:
            return {"type": "error", "code": "not_found", "message": f"trip {tid!r} not found"}
        if trip.status != "holding":
            return {"type": "error", "code": "conflict", "message": f"trip is {trip.status}, not holding"}
        w = next(w for w in trip.waypoints if w["index"] == trip.holding_index)
        w["visited"] = True
        trip.holding_index = None
        trip.status = "moving"
        remaining = sum(1 for x in trip.waypoints if not x["visited"])
        self._event(trip, "waypoint_resumed", index=w["index"], remaining_waypoints=remaining)
        self._check_arrival(trip)
        return {"type": "ack", "trip": tid, "applied": True}

    def end_trip(self, tid):
        def go():
            trip = self.trips[tid]
            if trip.status != "ended":
                trip.status = "ended"
                trip.anim = None
                self._event(trip, "ended")
        self._call(go)

    # ---- fleet -----------------------------------------------------------------------
    def clusters(self, bbox, zoom, max_items=2000):
        t = now_ms()
        riders = []
        for trip in sorted(self.trips.values(), key=lambda x: x.id):
            if trip.pos is None or trip.status == "ended":
                continue
            p, b, _ = trip.marker_now(t)
            riders.append({"id": trip.id, "lon": p[0], "lat": p[1], "status": trip.status, "bearing": b})
        items = []
        for group in greedy_clusters(riders, zoom):
            if len(group) == 1:
                r = group[0]
                it = {"id": r["id"], "lat": r["lat"], "lon": r["lon"], "count": 1, "trip": r["id"],
                      "status": r["status"], "bearing": round(r["bearing"] or 0.0, 1)}
                bounds = [r["lon"], r["lat"], r["lon"], r["lat"]]
            else:
                ids = sorted(r["id"] for r in group)
                bounds = [min(r["lon"] for r in group), min(r["lat"] for r in group),
                          max(r["lon"] for r in group), max(r["lat"] for r in group)]
                ez = zoom + 1
                while ez <= 17 and len(greedy_clusters(group, ez)) == 1:
                    ez += 1
                it = {"id": "#" + hashlib.sha1("|".join(ids).encode()).hexdigest()[:12],
                      "lat": sum(r["lat"] for r in group) / len(group), "lon": sum(r["lon"] for r in group) / len(group),
                      "count": len(group), "bounds": bounds, "expansion_zoom": min(ez, 17)}
            if bbox_intersects(bbox, bounds):
                items.append(it)
        items.sort(key=lambda i: (-i["count"], i["id"]))
        truncated = len(items) > max_items
        return {"t": t, "zoom": zoom, "bbox": bbox, "total": len(riders), "truncated": truncated, "items": items[:max_items]}

    async def _fleet_loop(self):
        while True:
            await asyncio.sleep(1.0 / self.fleet_hz)
            for conn in list(self.conns):
                if not conn.viewport:
                    continue
                body = self.clusters(*conn.viewport)
                key = _cluster_key(body)
                if key != conn.last_clusters:
                    conn.last_clusters = key
                    self._send(conn, dict(type="clusters", **body))

    # ---- HTTP ------------------------------------------------------------------------
    async def _process_request(self, path, headers):
        url = urllib.parse.urlsplit(path)
        p = urllib.parse.unquote(url.path)
        q = urllib.parse.parse_qs(url.query)
        if p == "/v1/ws":
            if "token" in q:
                self.seen_tokens.append(("ws", q["token"][0]))
            return None
        auth = headers.get("Authorization")
        if auth and auth.startswith("Bearer "):
            self.seen_tokens.append(("http", auth[7:]))
        try:
            if p == "/healthz":
                return self._json(200, {"status": "ok"})
            if p.startswith("/v1/"):
                return self._api(p, q)
            if p == "/" or p == "/fleet" or (p.startswith("/trips/") and "/" not in p[len("/trips/"):]):
                return self._file(os.path.join(self.web_root, "index.html"))
            if p.startswith("/vendor/leaflet/"):
                return self._file(_safe_join(self.leaflet_dir, p[len("/vendor/leaflet/"):]))
            return self._file(_safe_join(self.web_root, p.lstrip("/")))
        except Exception as e:
            return self._json(500, {"error": {"code": "internal", "message": repr(e)}})

    def _api(self, p, q):
        parts = p.strip("/").split("/")
        if parts[:2] == ["v1", "trips"] and len(parts) == 2:
            statuses = set(q.get("status", [""])[0].split(",")) - {""}
            limit = int(q.get("limit", ["100"])[0])
            after = q.get("after", [None])[0]
            trips = sorted(self.trips.values(), key=lambda t: t.id.encode())
            out = []
            for t in trips:
                if statuses and t.status not in statuses:
                    continue
                if after is not None and t.id.encode() <= after.encode():
                    continue
                s = t.state()
                s.pop("route")
                s.pop("trail")
                out.append(s)
            nxt = out[limit - 1]["trip"] if len(out) > limit else None
            return self._json(200, {"trips": out[:limit], "next": nxt})
        if parts[:2] == ["v1", "trips"] and len(parts) in (3, 4):
            trip = self.trips.get(parts[2])
            if trip is None:
                return self._json(404, {"error": {"code": "not_found", "message": f"trip {parts[2]!r} not found"}})
            if len(parts) == 3:
                return self._json(200, trip.state())
            if parts[3] == "trail":
                fixes = trip.trail
                geom = {"type": "LineString", "coordinates": [[f[0], f[1]] for f in fixes]} if len(fixes) >= 2 else None
                return self._json(200, {"type": "Feature", "geometry": geom,
                                        "properties": {"trip": trip.id, "ts": [f[2] for f in fixes], "reason": [f[4] for f in fixes]}})
        if parts == ["v1", "fleet", "clusters"]:
            bbox = normalise_bbox([float(x) for x in q["bbox"][0].split(",")]) if "bbox" in q else [-180, -85.05112878, 180, 85.05112878]
            return self._json(200, self.clusters(bbox, int(math.floor(float(q["zoom"][0])))))
        return self._json(404, {"error": {"code": "not_found", "message": f"no route {p}"}})

    @staticmethod
    def _json(status, body):
        data = json.dumps(body).encode()
        return (http.HTTPStatus(status), [("Content-Type", "application/json"), ("Content-Length", str(len(data))),
                                          ("Cache-Control", "no-store"), ("Connection", "close")], data)

    def _file(self, path):
        if not path or not os.path.isfile(path):
            return self._json(404, {"error": {"code": "not_found", "message": "no such file"}})
        with open(path, "rb") as f:
            data = f.read()
        ctype = mimetypes.guess_type(path)[0] or "application/octet-stream"
        if path.endswith(".js"):
            ctype = "text/javascript"
        if ctype.startswith("text/"):
            ctype += "; charset=utf-8"
        return (http.HTTPStatus.OK, [("Content-Type", ctype), ("Content-Length", str(len(data))),
                                     ("Cache-Control", "no-cache"), ("Connection", "close")], data)


def _safe_join(root, rel):
    full = os.path.realpath(os.path.join(root, rel))
    if not full.startswith(os.path.realpath(root) + os.sep):
        return None
    return full


def _cluster_key(body):
    return json.dumps([body["items"], body["total"], body["truncated"]], sort_keys=True)


def normalise_bbox(bbox):
    if not isinstance(bbox, list) or len(bbox) != 4 or not all(isinstance(x, (int, float)) for x in bbox):
        raise ValueError("must be [west, south, east, north]")
    w, s, e, n = (float(x) for x in bbox)
    if s > n:
        raise ValueError("south > north")
    s, n = max(-85.05112878, s), min(85.05112878, n)
    if e - w >= 360:
        return [-180, s, 180, n]

    def wrap(x):
        y = ((x + 180) % 360 + 360) % 360 - 180
        return 180.0 if (y == -180 and x > 0) else y
    return [wrap(w), s, wrap(e), n]


def bbox_intersects(bbox, b):
    w, s, e, n = bbox
    bw, bs, be, bn = b
    if bn < s or bs > n:
        return False
    if w <= e:
        return not (be < w or bw > e)
    return be >= w or bw <= e  # crosses the antimeridian


def _px(lon, lat, zoom):
    scale = 512 * (2 ** zoom)
    x = (lon + 180) / 360 * scale
    s = math.sin(math.radians(max(-85.05112878, min(85.05112878, lat))))
    y = (0.5 - 0.25 * math.log((1 + s) / (1 - s)) / math.pi) * scale
    return x, y


def greedy_clusters(riders, zoom, radius=40):
    """Greedy clustering in the order given (like supercluster, simplified)."""
    if zoom > 16:
        return [[r] for r in riders]
    pts = [(r, _px(r["lon"], r["lat"], zoom)) for r in riders]
    used = [False] * len(pts)
    groups = []
    for i, (r, (x, y)) in enumerate(pts):
        if used[i]:
            continue
        used[i] = True
        group = [r]
        for j in range(i + 1, len(pts)):
            if not used[j]:
                x2, y2 = pts[j][1]
                if (x - x2) ** 2 + (y - y2) ** 2 <= radius * radius:
                    used[j] = True
                    group.append(pts[j][0])
        groups.append(group)
    return groups


# ---- by hand ---------------------------------------------------------------------------
def _demo(hub: FakeHub):
    """A few riders going round Lisbon and Porto, forever."""
    import random
    rnd = random.Random(7)
    lisbon = [[-9.1500, 38.7100], [-9.1450, 38.7140], [-9.1400, 38.7160], [-9.1350, 38.7200], [-9.1300, 38.7230]]
    hub.create_trip("demo-1", route=lisbon, waypoints=[{"lat": 38.7160, "lon": -9.1400}], rider={"id": "r1", "name": "Ana"})
    for i in range(2, 9):
        base = [-8.61 + rnd.uniform(-0.02, 0.02), 41.15 + rnd.uniform(-0.02, 0.02)] if i % 2 else \
            [-9.14 + rnd.uniform(-0.03, 0.03), 38.72 + rnd.uniform(-0.03, 0.03)]
        hub.create_trip(f"demo-{i}", route=[base, [base[0] + 0.01, base[1] + 0.005]], rider={"id": f"r{i}", "name": f"Rider {i}"})
    from websockets.sync.client import connect
    ws = connect(hub.ws_url, subprotocols=[SUBPROTOCOL])
    k = 0
    while True:
        k += 1
        for i in range(1, 9):
            st = hub.trip_state(f"demo-{i}")
            route = st["route"]
            f = (k % 40) / 40
            lon = route[0][0] + (route[-1][0] - route[0][0]) * f
            lat = route[0][1] + (route[-1][1] - route[0][1]) * f
            ws.send(json.dumps({"op": "fix", "trip": f"demo-{i}", "lat": lat, "lon": lon, "ts": now_ms(), "duration_ms": 2000}))
            if st["status"] == "holding":
                ws.send(json.dumps({"op": "proceed", "trip": f"demo-{i}"}))
        time.sleep(2)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--demo", action="store_true", help="drive a few fake riders")
    a = ap.parse_args()
    hub = FakeHub(host=a.host, port=a.port).start()
    print(f"listening on {hub.base_url}", flush=True)
    try:
        if a.demo:
            _demo(hub)
        else:
            threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        hub.close()
