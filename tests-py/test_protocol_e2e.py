"""End-to-end protocol flows against the real `trackhub serve` binary (PROTOCOL.md 3-7).

Every test talks to the hub over real sockets, as a non-Swift client would: HTTP with
http.client, WebSocket with the `websockets` 12 asyncio client. Nothing sleeps to
synchronise: tests wait for messages with deadlines. Each test uses its own trip ids, so
the tests share one hub process (per class where a test needs a clean trip list).

Geometry: a straight route 1 km-ish east along latitude 38.70 in Lisbon, and an L-shaped
one for the polyline test. A courier moves at 20 m/s (max_speed_mps defaults to 70).
"""

import asyncio
import json
import math
import unittest

import hubproc
from hubproc import Client, Courier, HubProcess, distance_m, offset

HUB = None

LAT0, LON0 = 38.70, -9.15
LON1 = -9.14  # the route's end: about 868 m east
ROUTE = [[LON0, LAT0], [LON1, LAT0]]
ROUTE_LEN_M = distance_m(LAT0, LON0, LAT0, LON1)


def east(metres, north=0.0):
    """(lat, lon) `metres` east of the route's start, `north` metres off it."""
    return offset(LAT0, LON0, north_m=north, east_m=metres)


def setUpModule():
    global HUB
    hubproc.require_binary()
    HUB = HubProcess().start()


def tearDownModule():
    if HUB is not None:
        HUB.stop()


class ProtocolTestCase(hubproc.AsyncTestCase):
    hub = None  # set by subclasses that need their own hub; else the module's

    @property
    def h(self):
        return self.hub or HUB

    async def asyncSetUp(self):
        await super().asyncSetUp()
        self.clients = []

    async def asyncTearDown(self):
        for c in self.clients:
            try:
                await c.close()
            except Exception:
                pass

    async def client(self, **kwargs):
        c = await Client.open(self.h, **kwargs)
        self.clients.append(c)
        return c

    async def subscribe(self, client, trip, mode=None, since_event=None, tag=None):
        msg = {"op": "subscribe", "trip": trip, "id": tag or f"sub-{trip}-{mode}"}
        if mode:
            msg["mode"] = mode
        if since_event is not None:
            msg["since_event"] = since_event
        await client.send(**msg)
        snap = await client.wait_type("snapshot", re=msg["id"])
        self.assertEqual(snap["trip"], trip)
        return snap

    async def push(self, courier_conn, fix, tag):
        """Sends one fix with id `tag` and returns its ack."""
        await courier_conn.send(**fix, id=tag)
        ack = await courier_conn.wait_for(lambda m: m.get("re") == tag, what=f"the reply to {tag}")
        self.assertEqual(ack["type"], "ack", ack)
        return ack

    async def frames_until(self, viewer, trip, target_lat, target_lon, mark=None, within_m=None):
        """Frames of `trip` (from log position `mark`, else from the cursor) up to and
        including the first one exactly at the target (or within `within_m` of it)."""
        def at_target(f):
            if f.get("trip") != trip:
                return False
            if within_m is None:
                return f["lat"] == target_lat and f["lon"] == target_lon
            return distance_m(f["lat"], f["lon"], target_lat, target_lon) <= within_m
        frames = await viewer.scan(mark, at_target, "frame", what=f"a frame of {trip} at the target")
        return [f for f in frames if f["trip"] == trip]

    def assert_near(self, lat, lon, want_lat, want_lon, metres, msg=None):
        d = distance_m(lat, lon, want_lat, want_lon)
        self.assertLessEqual(d, metres, msg or f"({lat}, {lon}) is {d:.1f} m from ({want_lat}, {want_lon})")

    def assert_frames_move_toward(self, frames, target_lat, target_lon, start_seq=None):
        """seq rises by one, each frame no farther from the target, progress never down."""
        seqs = [f["seq"] for f in frames]
        self.assertEqual(seqs, list(range(seqs[0], seqs[0] + len(seqs))), f"frame seqs {seqs}")
        if start_seq is not None:
            self.assertGreater(seqs[0], start_seq)
        dists = [distance_m(f["lat"], f["lon"], target_lat, target_lon) for f in frames]
        for a, b in zip(dists, dists[1:]):
            self.assertLessEqual(b, a + 1e-6, f"a frame moved away from the target: {dists}")
        progress = [f["progress"] for f in frames if f["progress"] is not None]
        for a, b in zip(progress, progress[1:]):
            self.assertGreaterEqual(b, a, f"progress went down: {progress}")
        for f in frames:
            self.assertTrue(0 <= f["bearing"] < 360, f)
            for key in ("trip", "seq", "t", "lat", "lon", "bearing", "progress", "done_m", "remaining_m",
                        "eta_s", "leg", "status"):
                self.assertIn(key, f)


# ======================================================================================
# Creating trips, frames and segments
# ======================================================================================


class TestFramesAndSegments(ProtocolTestCase):
    async def test_route_pairs_frames_and_segments(self):
        trip = "e2e-frames-1"
        created = self.h.create_trip(id=trip, route=ROUTE, rider={"id": "r1", "name": "Ana"})
        self.assertEqual(created["trip"], trip)
        self.assertEqual(created["status"], "pending")
        self.assertEqual(created["route"], ROUTE)
        self.assertEqual(created["destination"], {"lat": LAT0, "lon": LON1})
        self.assertEqual(created["rider"], {"id": "r1", "name": "Ana"})
        # PROTOCOL 5: every default filled in; auto_reroute is off on a hub without --router (16).
        self.assertEqual(created["config"], {"arrival_buffer_m": 50, "reroute_distance_m": 100,
                                             "wait_at_waypoints": True, "max_speed_mps": 70,
                                             "mode": "car", "auto_reroute": False})
        self.assertEqual(created["route_source"], "client")
        for key in ("position", "bearing", "progress", "done_m", "remaining_m", "eta_s"):
            self.assertIsNone(created[key], key)
        self.assertNotIn("type", created)

        viewer = await self.client()
        segs = await self.client()
        courier = await self.client()
        await courier.send(op="hello", id="h1")
        welcome = await courier.wait_type("welcome", re="h1")
        self.assertEqual(welcome["protocol"], 1)
        self.assertEqual(welcome["tick_hz"], 10)

        snap = await self.subscribe(viewer, trip)
        self.assertEqual(snap["status"], "pending")
        self.assertEqual(snap["route"], ROUTE)
        self.assertEqual(snap["trail"], [])
        self.assertGreaterEqual(snap["last_event"], 1)  # trip_created
        self.assertIsNone(snap["position"])
        await self.subscribe(segs, trip, mode="segments")

        c = Courier(trip)
        # First fix: a few metres off the line; the marker is placed at once, snapped.
        lat, lon = east(60, north=4)
        ack = await self.push(courier, c.fix(lat, lon, accuracy_m=5), "f1")
        self.assertEqual(ack, {"type": "ack", "re": "f1", "trip": trip, "seq": 1, "applied": True})

        seg1 = await segs.wait_type("segment", trip=trip)
        self.assertEqual(seg1["duration_ms"], 0)
        self.assertEqual(len(seg1["path"]), 1)
        placed_lon, placed_lat = seg1["path"][0]
        self.assert_near(placed_lat, placed_lon, LAT0, lon, 1.0)
        first = await viewer.wait_type("frame", trip=trip)
        self.assertEqual((first["lat"], first["lon"]), (placed_lat, placed_lon))
        self.assertEqual(first["status"], "moving")
        self.assertAlmostEqual(first["done_m"], 60, delta=2)
        self.assertAlmostEqual(first["progress"], 60 / ROUTE_LEN_M, delta=0.005)
        self.assertAlmostEqual(first["done_m"] + first["remaining_m"], ROUTE_LEN_M, delta=1)

        # Second fix, 200 m on, animated over 800 ms.
        lat, lon = east(260, north=-3)
        ack = await self.push(courier, c.fix(lat, lon, duration_ms=800), "f2")
        self.assertTrue(ack["applied"])
        seg2 = await segs.wait_type("segment", trip=trip)
        self.assertEqual(seg2["seq"], seg1["seq"] + 1)
        self.assertEqual(seg2["duration_ms"], 800)
        self.assertEqual(seg2["path"][0], [placed_lon, placed_lat], "a segment starts at the marker")
        target_lon, target_lat = seg2["path"][-1]
        self.assert_near(target_lat, target_lon, LAT0, lon, 1.0)
        self.assertLess(seg2["progress_from"], seg2["progress_to"])
        self.assertAlmostEqual(seg2["done_m"], 260, delta=2)
        self.assertEqual(seg2["status"], "moving")

        frames = await self.frames_until(viewer, trip, target_lat, target_lon)
        self.assertGreaterEqual(len(frames), 2, "an 800 ms animation at 10 Hz has several frames")
        self.assert_frames_move_toward([first] + frames, target_lat, target_lon)
        last = frames[-1]
        self.assertGreater(last["progress"], first["progress"])
        self.assertEqual(last["progress"], seg2["progress_to"])
        self.assertEqual(last["done_m"], seg2["done_m"])
        self.assertIsNotNone(last["eta_s"], "speed is known after two fixes")
        self.assertAlmostEqual(last["bearing"], 90, delta=1)

        # The trip over HTTP agrees with the last frame once the animation is over.
        status, body, _ = self.h.http("GET", f"/v1/trips/{trip}")
        self.assertEqual(status, 200)
        self.assertEqual(body["position"], {"lat": target_lat, "lon": target_lon})
        self.assertEqual(body["status"], "moving")
        self.assertEqual(len(body["trail"]), 2)
        self.assertEqual(body["trail"][1][2], c.ts)

    async def test_route_polyline_follows_the_corner(self):
        trip = "e2e-polyline-1"
        # An L: 400 m east, then 400 m north.
        corner = east(400)
        end = offset(*corner, north_m=400)
        pts = [(LAT0, LON0), corner, end]
        created = self.h.create_trip(id=trip, route_polyline=hubproc.encode_polyline(pts))
        self.assertEqual(len(created["route"]), 3)
        for (lon, lat), (plat, plon) in zip(created["route"], pts):
            self.assertAlmostEqual(lat, plat, delta=1e-5)
            self.assertAlmostEqual(lon, plon, delta=1e-5)
        corner_lon, corner_lat = created["route"][1]
        self.assertEqual(created["destination"], {"lat": created["route"][2][1], "lon": created["route"][2][0]})

        segs = await self.client()
        viewer = await self.client()
        courier = await self.client()
        await self.subscribe(segs, trip, mode="segments")
        await self.subscribe(viewer, trip, mode="frames")
        c = Courier(trip)
        await self.push(courier, c.fix(*east(300)), "p1")
        await segs.wait_type("segment", trip=trip)
        # Past the corner: the marker goes along the route, never across the corner.
        ack = await self.push(courier, c.fix(*offset(*corner, north_m=100), duration_ms=600), "p2")
        self.assertTrue(ack["applied"])
        seg = await segs.wait_type("segment", trip=trip)
        self.assertIn([corner_lon, corner_lat], seg["path"], "the segment's path turns at the corner")
        target_lon, target_lat = seg["path"][-1]
        frames = await self.frames_until(viewer, trip, target_lat, target_lon)
        # Every frame is on the L: either on the east leg (lat == LAT0) or the north leg.
        for f in frames:
            on_east_leg = abs(f["lat"] - corner_lat) < 1e-6
            on_north_leg = abs(f["lon"] - corner_lon) < 1e-6
            self.assertTrue(on_east_leg or on_north_leg, f"frame cut the corner: {f}")
        self.assertAlmostEqual(frames[-1]["done_m"], 500, delta=3)

    async def test_subscribe_before_the_trip_exists(self):
        trip = "e2e-later-1"
        viewer = await self.client()
        snap = await self.subscribe(viewer, trip)
        self.assertEqual(snap["status"], "unknown")
        self.assertEqual(snap["waypoints"], [])
        self.assertEqual(snap["trail"], [])
        self.assertEqual(snap["leg"], 0)
        self.assertEqual(snap["last_event"], 0)
        for key in ("rider", "config", "route", "destination", "position", "bearing", "progress"):
            self.assertIsNone(snap[key], key)
        self.h.create_trip(id=trip, route=ROUTE)
        ev = await viewer.wait_type("event", trip=trip)
        self.assertEqual((ev["name"], ev["n"]), ("trip_created", 1))
        snap2 = await viewer.wait_type("snapshot", trip=trip)
        self.assertEqual(snap2["status"], "pending")
        self.assertNotIn("re", snap2)

    async def test_two_viewers_get_byte_identical_frames(self):
        trip = "e2e-identical-1"
        self.h.create_trip(id=trip, route=ROUTE)
        a, b, segs, courier = await self.client(), await self.client(), await self.client(), await self.client()
        await self.subscribe(a, trip)
        await self.subscribe(b, trip)
        await self.subscribe(segs, trip, mode="segments")
        ma, mb = a.mark(), b.mark()
        c = Courier(trip)
        await self.push(courier, c.fix(*east(100)), "i1")
        await self.push(courier, c.fix(*east(300), duration_ms=700), "i2")
        await segs.wait_type("segment", trip=trip, seq=1)
        seg = await segs.wait_type("segment", trip=trip, seq=2)
        target_lon, target_lat = seg["path"][-1]
        await self.frames_until(a, trip, target_lat, target_lon)
        await self.frames_until(b, trip, target_lat, target_lon)
        fa = {json.loads(t)["seq"]: t for t in a.texts_since(ma, "frame")}
        fb = {json.loads(t)["seq"]: t for t in b.texts_since(mb, "frame")}
        common = sorted(set(fa) & set(fb))
        self.assertGreaterEqual(len(common), 3, f"viewers saw frames {sorted(fa)} and {sorted(fb)}")
        for seq in common:
            self.assertEqual(fa[seq], fb[seq], f"frame {seq} differs between viewers")


# ======================================================================================
# Acks
# ======================================================================================


class TestAcks(ProtocolTestCase):
    async def test_acks_in_order_with_re_and_reasons(self):
        trip = "e2e-acks-1"
        self.h.create_trip(id=trip, route=ROUTE)
        courier = await self.client()
        c = Courier(trip)
        f1 = c.fix(*east(100))
        f2 = c.fix(*east(150))
        dup = dict(f2, lat=east(155)[0])  # same seq, other fields: still a duplicate
        older = dict(c.fix(*east(160)), ts=f1["ts"] - 1000)  # new seq, ts before the last applied
        far = c.fix(*east(150, north=20_000))  # 20 km in ~1 s: an outlier
        far["ts"] = f2["ts"] + 2000
        f3 = c.fix(*east(200))
        f3["ts"] = f2["ts"] + 3000
        no_seq = {k: v for k, v in c.fix(*east(230)).items() if k != "seq"}
        no_seq["ts"] = f3["ts"] + 1500
        sent = [("a1", f1), (2, f2), ("a3", dup), ("a4", older), ("a5", far), (6.5, f3), ("a7", no_seq)]
        for tag, fix in sent:
            await courier.send(**fix, id=tag)
        await courier.send(**dict(no_seq, ts=no_seq["ts"] + 1000, lat=east(240)[0], lon=east(240)[1]))  # no id
        acks = []
        while len(acks) < len(sent) + 1:
            acks.append(await courier.wait_type("ack"))
        self.assertEqual([a.get("re") for a in acks], [t for t, _ in sent] + [None])
        self.assertNotIn("re", acks[-1])
        self.assertEqual([a.get("seq") for a in acks], [1, 2, 2, 3, 4, 5, None, None])
        self.assertEqual([a["applied"] for a in acks], [True, True, False, False, False, True, True, True])
        self.assertEqual([a.get("reason") for a in acks],
                         [None, None, "duplicate", "out_of_order", "outlier", None, None, None])
        for a in acks:
            self.assertEqual(a["trip"], trip)
        # A numeric id comes back as the same number.
        self.assertIsInstance(acks[1]["re"], int)
        self.assertEqual(acks[5]["re"], 6.5)

        # A resent seqless fix with the same ts is a duplicate too.
        ack = await self.push(courier, no_seq, "a9")
        self.assertEqual((ack["applied"], ack.get("reason")), (False, "duplicate"))

    async def test_http_fix_batch_acks(self):
        trip = "e2e-batch-1"
        self.h.create_trip(id=trip, route=ROUTE)
        c = Courier(trip)
        fixes = [c.fix(*east(m)) for m in (50, 100, 150)]
        for f in fixes:
            del f["op"], f["trip"]
        fixes.append(dict(fixes[1]))  # duplicate seq
        status, body, raw = self.h.http("POST", f"/v1/trips/{trip}/fixes", {"fixes": fixes})
        self.assertEqual(status, 200, raw)
        self.assertEqual([(a["seq"], a["applied"], a.get("reason")) for a in body["acks"]],
                         [(1, True, None), (2, True, None), (3, True, None), (2, False, "duplicate")])
        status, body, _ = self.h.http("POST", f"/v1/trips/{trip}/fixes", {"fixes": []})
        self.assertEqual((status, body), (200, {"acks": []}))
        # One bad fix: 400 naming it, nothing stored.
        bad = [c.fix(*east(200)), c.fix(*east(250))]
        for f in bad:
            del f["op"], f["trip"]
        bad[1]["lat"] = 123
        status, body, _ = self.h.http("POST", f"/v1/trips/{trip}/fixes", {"fixes": bad})
        self.assertEqual(status, 400)
        self.assertEqual(body["error"]["code"], "bad_request")
        self.assertIn("fixes[1].lat", body["error"]["message"])
        status, trail, _ = self.h.http("GET", f"/v1/trips/{trip}/trail")
        self.assertEqual(trail["properties"]["ts"], [f["ts"] for f in fixes[:3]])


# ======================================================================================
# Waypoints, arrival, off route
# ======================================================================================


class TestTripLifecycle(ProtocolTestCase):
    async def test_waypoint_hold_proceed_and_arrival(self):
        trip = "e2e-waypoint-1"
        wp_lat, wp_lon = east(300)
        created = self.h.create_trip(id=trip, route=ROUTE, waypoints=[{"lat": wp_lat, "lon": wp_lon}])
        (wp,) = created["waypoints"]
        self.assertEqual((wp["index"], wp["visited"]), (0, False))
        self.assertAlmostEqual(wp["lat"], wp_lat, places=6)
        self.assertAlmostEqual(wp["lon"], wp_lon, places=6)
        viewer, courier = await self.client(), await self.client()
        await self.subscribe(viewer, trip)
        c = Courier(trip)
        await self.push(courier, c.fix(*east(50)), "w1")
        mark = viewer.mark()
        # Beyond the waypoint: applied, but clamped to it.
        ack = await self.push(courier, c.fix(*east(420), duration_ms=600), "w2")
        self.assertEqual((ack["applied"], ack.get("reason")), (True, None))
        reached = await viewer.wait_type("event", trip=trip, name="waypoint_reached")
        self.assertEqual((reached["index"], reached["remaining_waypoints"]), (0, 0))
        before = viewer.since(mark, "frame")
        self.assertTrue(before, "a frame comes before the event it triggers")
        self.assertEqual(before[-1]["status"], "moving")
        self.assertEqual((before[-1]["lat"], before[-1]["lon"]), (reached["lat"], reached["lon"]),
                         "the event is where the frame that triggered it is")
        self.assertGreaterEqual(before[-1]["done_m"], 300 - 50 - 0.5)
        # The animation still ends at its (clamped) target: the waypoint's projection.
        frames = await self.frames_until(viewer, trip, wp_lat, wp_lon, mark=mark, within_m=0.5)
        self.assertAlmostEqual(frames[-1]["done_m"], 300, delta=0.5)
        self.assert_frames_move_toward(frames, wp_lat, wp_lon)
        status, body, _ = self.h.http("GET", f"/v1/trips/{trip}")
        self.assertEqual(body["status"], "holding")
        self.assertAlmostEqual(body["done_m"], 300, delta=0.2)

        # While holding: stored, acked, not animated.
        ack = await self.push(courier, c.fix(*east(450)), "w3")
        self.assertEqual((ack["applied"], ack["reason"]), (False, "holding"))
        # proceed: ack {trip, applied: true} with re, then waypoint_resumed.
        await courier.send(op="proceed", trip=trip, id="go")
        pack = await courier.wait_for(lambda m: m.get("re") == "go", what="proceed's ack")
        self.assertEqual(pack, {"type": "ack", "re": "go", "trip": trip, "applied": True})
        resumed = await viewer.wait_type("event", trip=trip, name="waypoint_resumed")
        self.assertEqual((resumed["index"], resumed["remaining_waypoints"]), (0, 0))
        self.assertEqual(resumed["n"], reached["n"] + 1)
        status, body, _ = self.h.http("GET", f"/v1/trips/{trip}")
        self.assertEqual(body["waypoints"][0]["visited"], True)
        # proceed again: conflict naming the status.
        await courier.send(op="proceed", trip=trip, id="again")
        err = await courier.wait_for(lambda m: m.get("re") == "again", what="the second proceed's reply")
        self.assertEqual((err["type"], err["code"]), ("error", "conflict"))
        self.assertIn(body["status"], err["message"])
        status, body, _ = self.h.http("POST", f"/v1/trips/{trip}/proceed")
        self.assertEqual(status, 409)
        self.assertEqual(body["error"]["code"], "conflict")

        # On to the destination: arrived.
        ack = await self.push(courier, c.fix(*east(860), duration_ms=600), "w4")
        self.assertTrue(ack["applied"])
        arrived = await viewer.wait_type("event", trip=trip, name="arrived")
        self.assertEqual(arrived["n"], resumed["n"] + 1)
        ack = await self.push(courier, c.fix(*east(865)), "w5")
        self.assertEqual((ack["applied"], ack["reason"]), (False, "arrived"))
        status, body, _ = self.h.http("GET", f"/v1/trips/{trip}")
        self.assertEqual(body["status"], "arrived")
        self.assertEqual(body["eta_s"], 0)
        self.assertEqual(body["last_event"], arrived["n"])
        # Event numbers seen live: 1.. without gaps, in order.
        ns = [e["n"] for e in viewer.since(0, "event")]
        self.assertEqual(ns, list(range(ns[0], ns[0] + len(ns))))

    async def test_http_proceed_and_no_wait_waypoints(self):
        trip = "e2e-nowait-1"
        wps = [{"lat": east(200)[0], "lon": east(200)[1]}, {"lat": east(400)[0], "lon": east(400)[1]}]
        self.h.create_trip(id=trip, route=ROUTE, waypoints=wps, config={"wait_at_waypoints": False})
        viewer, courier = await self.client(), await self.client()
        await self.subscribe(viewer, trip)
        c = Courier(trip)
        await self.push(courier, c.fix(*east(20)), "n1")
        await self.push(courier, c.fix(*east(190), duration_ms=400), "n2")
        # (A fix sent before waypoint 0 is visited would be clamped to it.)
        await viewer.wait_type("event", trip=trip, name="waypoint_resumed", index=0)
        await self.push(courier, c.fix(*east(380), duration_ms=400), "n3")
        names = []
        for e in viewer.since(0, "event"):
            names.append((e["name"], e.get("index"), e.get("remaining_waypoints")))
        while len(names) < 4:
            e = await viewer.wait_type("event", trip=trip)
            names.append((e["name"], e.get("index"), e.get("remaining_waypoints")))
        self.assertEqual(names, [("waypoint_reached", 0, 1), ("waypoint_resumed", 0, 1),
                                 ("waypoint_reached", 1, 0), ("waypoint_resumed", 1, 0)])
        status, body, _ = self.h.http("POST", f"/v1/trips/{trip}/proceed")
        self.assertEqual(status, 409)
        self.assertIn("moving", body["error"]["message"])

    async def test_off_route_and_back_on_route(self):
        trip = "e2e-offroute-1"
        self.h.create_trip(id=trip, route=ROUTE)
        viewer, courier = await self.client(), await self.client()
        await self.subscribe(viewer, trip)
        c = Courier(trip)
        await self.push(courier, c.fix(*east(50)), "o1")
        await self.push(courier, c.fix(*east(150), duration_ms=300), "o2")
        # The animation's last frame is exactly at its target (6.3): wait for it, so the marker
        # has stopped at 150 m before the rider leaves the route.
        on_route = (await self.frames_until(viewer, trip, *east(150), within_m=0.05))[-1]
        # 250 m north of the route: off route (reroute_distance_m 100).
        off_lat, off_lon = east(200, north=250)
        mark = viewer.mark()
        ack = await self.push(courier, c.fix(off_lat, off_lon, duration_ms=500), "o3")
        self.assertTrue(ack["applied"])
        off = await viewer.wait_type("event", trip=trip, name="off_route")
        self.assertAlmostEqual(off["distance_m"], 250, delta=3)
        self.assert_near(off["lat"], off["lon"], on_route["lat"], on_route["lon"], 1)
        # A straight animation to the reported position (frames may come before the event).
        frames = await self.frames_until(viewer, trip, off_lat, off_lon, mark=mark, within_m=0.05)
        self.assert_frames_move_toward(frames, off_lat, off_lon)
        self.assertEqual(frames[-1]["status"], "off_route")
        self.assertEqual(frames[-1]["done_m"], on_route["done_m"], "done_m keeps its last on-route value")
        self.assertEqual(frames[-1]["progress"], on_route["progress"])
        # Still off (within 100 m but not within 50 m): no new event.
        await self.push(courier, c.fix(*east(230, north=80), duration_ms=300), "o4")
        # Back on route (within 50 m).
        ack = await self.push(courier, c.fix(*east(300, north=10), duration_ms=500), "o5")
        self.assertTrue(ack["applied"])
        back = await viewer.wait_type("event", trip=trip, name="back_on_route")
        self.assertEqual(back["n"], off["n"] + 1)
        # The way back is straight, so a frame just before the animation's last one can be
        # within a metre of the target and still off the route's line: wait for the frame
        # on the route (the last one is exactly at its target, 6.3).
        back_lat, back_lon = east(300)

        def back_on_the_line(f):
            return (f.get("trip") == trip and abs(f["lat"] - LAT0) <= 1e-7
                    and distance_m(f["lat"], f["lon"], back_lat, back_lon) <= 1)
        frames = await viewer.scan(None, back_on_the_line, "frame", what=f"a frame of {trip} back on the route")
        frames = [f for f in frames if f["trip"] == trip]
        self.assertEqual(frames[-1]["status"], "moving")
        self.assertAlmostEqual(frames[-1]["done_m"], 300, delta=1)
        self.assertEqual([e["name"] for e in viewer.since(0, "event")], ["off_route", "back_on_route"])


# ======================================================================================
# Replay, end of trip
# ======================================================================================


class TestReplayAndEnd(ProtocolTestCase):
    @staticmethod
    def not_frames(messages):
        return [m for m in messages if m.get("type") not in ("frame", "segment")]

    async def make_events(self, trip):
        """A trip with events 1 trip_created, 2 off_route, 3 back_on_route, seen live."""
        self.h.create_trip(id=trip, route=ROUTE)
        live, courier = await self.client(), await self.client()
        await self.subscribe(live, trip)
        c = Courier(trip)
        await self.push(courier, c.fix(*east(50)), "r1")
        await self.push(courier, c.fix(*east(100, north=300), duration_ms=100), "r2")
        await self.push(courier, c.fix(*east(150), duration_ms=100), "r3")
        await live.wait_type("event", trip=trip, name="back_on_route")
        return live, courier, c

    async def test_since_event_replay(self):
        trip = "e2e-replay-1"
        live, _, _ = await self.make_events(trip)
        live_texts = {json.loads(t)["n"]: t for t in live.texts_since(0, "event")}
        self.assertEqual(sorted(live_texts), [2, 3])

        late = await self.client()
        snap = await self.subscribe(late, trip, since_event=1, tag="late1")
        self.assertIs(snap["recovered"], True)
        self.assertEqual(snap["last_event"], 3)
        self.assertEqual(snap["status"], "moving")
        replay = [await late.next_message(), await late.next_message()]
        self.assertEqual([(m["type"], m["n"]) for m in replay], [("event", 2), ("event", 3)])
        self.assertEqual(late.log[-2][0], live_texts[2], "replayed events are as first sent")
        self.assertEqual(late.log[-1][0], live_texts[3])

        zero = await self.client()
        await self.subscribe(zero, trip, since_event=0, tag="z")
        names = [(await zero.next_message())["name"] for _ in range(3)]
        self.assertEqual(names, ["trip_created", "off_route", "back_on_route"])

        ahead = await self.client()
        snap = await self.subscribe(ahead, trip, since_event=99, tag="ahead")
        self.assertIs(snap["recovered"], False)
        self.assertEqual(self.not_frames(await ahead.barrier("b")), [], "nothing is replayed past the last event")

        plain = await self.client()
        snap = await self.subscribe(plain, trip, tag="plain")
        self.assertNotIn("recovered", snap)
        self.assertEqual(self.not_frames(await plain.barrier("b")), [])

        # Subscribing again on the same connection: fresh snapshot, never duplicated live messages.
        snap = await self.subscribe(late, trip, mode="segments", tag="late2")
        self.assertEqual(snap["last_event"], 3)

    async def test_delete_ends_the_trip(self):
        trip = "e2e-end-1"
        live, courier, c = await self.make_events(trip)
        status, body, _ = self.h.http("DELETE", f"/v1/trips/{trip}")
        self.assertEqual(status, 200)
        self.assertEqual(body["status"], "ended")
        self.assertEqual(body["trip"], trip)
        ended = await live.wait_type("event", trip=trip, name="ended")
        self.assertEqual(ended["n"], 4)
        status, body, _ = self.h.http("DELETE", f"/v1/trips/{trip}")
        self.assertEqual((status, body["status"]), (200, "ended"))
        ack = await self.push(courier, c.fix(*east(200)), "after-end")
        self.assertEqual((ack["applied"], ack["reason"]), (False, "ended"))
        self.assertEqual([e for e in await live.barrier("b") if e.get("type") == "event"], [],
                         "a second DELETE sends no second event")
        status, body, _ = self.h.http("GET", f"/v1/trips/{trip}")
        self.assertEqual((status, body["status"], body["last_event"]), (200, "ended", 4))

    async def test_unsubscribe(self):
        trip = "e2e-unsub-1"
        self.h.create_trip(id=trip, route=ROUTE)
        viewer, other, courier = await self.client(), await self.client(), await self.client()
        await self.subscribe(viewer, trip)
        await self.subscribe(other, trip)
        await viewer.send(op="unsubscribe", trip=trip, id="u")
        self.assertEqual(await viewer.wait_type("unsubscribed", re="u"), {"type": "unsubscribed", "re": "u", "trip": trip})
        await viewer.send(op="unsubscribe", trip="never-subscribed", id="u2")
        await viewer.wait_type("unsubscribed", re="u2", trip="never-subscribed")
        c = Courier(trip)
        await self.push(courier, c.fix(*east(50)), "x1")
        # The frame went out to the other subscriber at that tick: none came here.
        await other.wait_type("frame", trip=trip)
        self.assertEqual([m for m in await viewer.barrier("b") if m.get("trip") == trip], [])


# ======================================================================================
# HTTP: list paging and trails
# ======================================================================================


class TestHTTPListAndTrail(ProtocolTestCase):
    @classmethod
    def setUpClass(cls):
        # A hub of its own, so the trip list holds exactly this class's trips.
        cls.hub = HubProcess().start()

    @classmethod
    def tearDownClass(cls):
        cls.hub.stop()

    async def test_list_paging_and_status_filter(self):
        ids = ["p-a", "p-B", "p-_", "p-1", "p-z", "P-0"]
        for i in ids:
            self.h.create_trip(id=i, route=ROUTE)
        courier = await self.client()
        await self.push(courier, Courier("p-z").fix(*east(50)), "m")
        want = sorted(ids, key=lambda s: s.encode())  # bytewise
        got, after, pages = [], None, 0
        while True:
            q = "/v1/trips?limit=2" + (f"&after={after}" if after else "")
            status, body, raw = self.h.http("GET", q)
            self.assertEqual(status, 200, raw)
            pages += 1
            for t in body["trips"]:
                self.assertNotIn("route", t)
                self.assertNotIn("trail", t)
                self.assertNotIn("type", t)
                self.assertIn("status", t)
            got += [t["trip"] for t in body["trips"]]
            if body["next"] is None:
                break
            self.assertEqual(body["next"], body["trips"][-1]["trip"])
            after = body["next"]
        self.assertEqual(got, want)
        self.assertEqual(pages, 3)

        status, body, _ = self.h.http("GET", "/v1/trips")
        self.assertEqual(([t["trip"] for t in body["trips"]], body["next"]), (want, None))
        status, body, _ = self.h.http("GET", "/v1/trips?status=moving")
        self.assertEqual([t["trip"] for t in body["trips"]], ["p-z"])
        status, body, _ = self.h.http("GET", "/v1/trips?status=pending,moving&limit=1000")
        self.assertEqual(len(body["trips"]), len(ids))
        status, body, _ = self.h.http("GET", "/v1/trips?status=arrived")
        self.assertEqual(body, {"trips": [], "next": None})
        for bad in ("limit=0", "limit=1001", "limit=x", "status=flying"):
            status, body, _ = self.h.http("GET", f"/v1/trips?{bad}")
            self.assertEqual(status, 400, bad)
            self.assertEqual(body["error"]["code"], "bad_request")
            self.assertIn(bad.split("=")[0], body["error"]["message"], bad)

    async def test_trail_geojson(self):
        trip = "trail-1"
        self.h.create_trip(id=trip, route=ROUTE)
        status, body, _ = self.h.http("GET", f"/v1/trips/{trip}/trail")
        self.assertEqual(status, 200)
        self.assertEqual(body["type"], "Feature")
        self.assertIsNone(body["geometry"])
        self.assertEqual(body["properties"]["ts"], [])

        courier = await self.client()
        c = Courier(trip)
        f1 = c.fix(*east(50))
        f2 = c.fix(*east(100))
        late = dict(c.fix(*east(120)), ts=f1["ts"] - 500)  # out of order: stored, not applied
        f3 = c.fix(*east(150))
        for i, f in enumerate((f1, f2, late, f3, f2)):
            await self.push(courier, f, f"t{i}")
        status, body, _ = self.h.http("GET", f"/v1/trips/{trip}/trail")
        self.assertEqual(status, 200)
        order = [late, f1, f2, f3]  # by ts; the duplicate is not stored twice
        self.assertEqual(body["geometry"]["type"], "LineString")
        coords = body["geometry"]["coordinates"]
        self.assertEqual(len(coords), 4)
        for (lon, lat), f in zip(coords, order):
            self.assertAlmostEqual(lon, f["lon"], delta=1e-7)
            self.assertAlmostEqual(lat, f["lat"], delta=1e-7)
        self.assertEqual(body["properties"]["ts"], [f["ts"] for f in order])
        self.assertEqual(body["properties"]["reason"], ["out_of_order", None, None, None])

        q = f"/v1/trips/{trip}/trail?from={f1['ts']}&to={f2['ts']}"
        status, body, _ = self.h.http("GET", q)
        self.assertEqual(body["properties"]["ts"], [f1["ts"], f2["ts"]])
        q = f"/v1/trips/{trip}/trail?from={f3['ts']}"
        status, body, _ = self.h.http("GET", q)
        self.assertIsNone(body["geometry"], "one fix is no line")
        self.assertEqual(body["properties"]["ts"], [f3["ts"]])

        # The snapshot's trail is [lon, lat, ts] in the same order.
        viewer = await self.client()
        snap = await self.subscribe(viewer, trip)
        self.assertEqual([p[2] for p in snap["trail"]], [f["ts"] for f in order])


if __name__ == "__main__":
    unittest.main()
