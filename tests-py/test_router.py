"""Routes the hub finds (PROTOCOL 16) against the release `trackhub serve --router`.

The Routino database is built here, as the test command builds it: the Helsinki roads the
project ships (data/samples/roads_helsinki.geojson) through scripts/geojson_to_osm.py to
OpenStreetMap XML, then `trackhub router build`. Every stop is a vertex of those roads, so
the checks ("on a road", "passes the stop") are against the same data the router has.
Nothing sleeps to synchronise: the tests wait for messages with deadlines.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest
import urllib.parse

import hubproc
from hubproc import Client, Courier, HubProcess, distance_m

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
ROADS = os.path.join(ROOT, "data", "samples", "roads_helsinki.geojson")

HUB = None       # --router routino:DB
PLAIN = None     # no --router
TMP = None
DB = None
FEATURES = []
SEGMENTS = []    # ((lat, lon), (lat, lon)) of every road
VERTICES = []    # (lat, lon) of every road vertex

ON_ROAD_M = 3.0      # a route vertex this close to a road is on it (Routino stores ~1 cm)
AT_STOP_M = 30.0     # a route passes a stop within this


def setUpModule():
    global HUB, PLAIN, TMP, DB, FEATURES
    hubproc.require_binary()
    TMP = tempfile.TemporaryDirectory(prefix="trackhub-router-")
    osm = os.path.join(TMP.name, "helsinki.osm")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "geojson_to_osm.py"), ROADS, osm],
                   check=True, capture_output=True, timeout=60)
    DB = os.path.join(TMP.name, "db")
    built = hubproc.run_cli(["router", "build", osm, DB], timeout=120)
    if built.returncode != 0:
        raise AssertionError(f"trackhub router build failed: {built.stderr}")
    with open(ROADS, encoding="utf-8") as f:
        FEATURES = json.load(f)["features"]
    for feature in FEATURES:
        coords = [(lat, lon) for lon, lat in feature["geometry"]["coordinates"]]
        VERTICES.extend(coords)
        SEGMENTS.extend(zip(coords, coords[1:]))
    HUB = HubProcess("--router", f"routino:{DB}").start()
    PLAIN = HubProcess().start()


def tearDownModule():
    for hub in (HUB, PLAIN):
        if hub is not None:
            hub.stop()
    if TMP is not None:
        TMP.cleanup()


# -- geometry ----------------------------------------------------------------------------

def _xy(p, origin):
    """Metres east, north of `origin` (a local plane: fine over a few km)."""
    k = 111_194.9
    return ((p[1] - origin[1]) * k * math.cos(math.radians(origin[0])), (p[0] - origin[0]) * k)


def project(p, a, b):
    """(distance of p from segment ab, fraction t of ab at the nearest point), metres."""
    (ax, ay), (bx, by) = _xy(a, p), _xy(b, p)
    dx, dy = bx - ax, by - ay
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, (-ax * dx - ay * dy) / length2))
    return math.hypot(ax + t * dx, ay + t * dy), t


def point_segment_m(p, a, b):
    return project(p, a, b)[0]


def distance_to_road_m(p):
    return min(point_segment_m(p, a, b) for a, b in SEGMENTS)


def along_m(route_latlon, p):
    """(along-route distance of the route's point nearest p, that point's distance from p)."""
    best, done = (math.inf, 0.0), 0.0
    for a, b in zip(route_latlon, route_latlon[1:]):
        seg = distance_m(a[0], a[1], b[0], b[1])
        d, t = project(p, a, b)
        if d < best[0]:
            best = (d, done + t * seg)
        done += seg
    return best[1], best[0]


def distance_to_route_m(route_latlon, p):
    return min(point_segment_m(p, a, b) for a, b in zip(route_latlon, route_latlon[1:]))


def latlon(route):
    return [(lat, lon) for lon, lat in route]


def road_vertex_near(lat, lon):
    """The road vertex nearest (lat, lon): stops in these tests are on the roads."""
    return min(VERTICES, key=lambda v: distance_m(v[0], v[1], lat, lon))


def point(p):
    return {"lat": p[0], "lon": p[1]}


# The stops of the main trip: south-west to north-east across the centre.
ORIGIN = (60.1660, 24.9400)
STOP_A = (60.1690, 24.9440)
STOP_B = (60.1720, 24.9480)
DESTINATION = (60.1770, 24.9510)


class RouterTestCase(hubproc.AsyncTestCase):
    async def asyncSetUp(self):
        await super().asyncSetUp()
        self.clients = []

    async def asyncTearDown(self):
        for c in self.clients:
            try:
                await c.close()
            except Exception:
                pass

    async def client(self, hub=None):
        c = await Client.open(hub or HUB)
        self.clients.append(c)
        return c

    async def subscribe(self, client, trip):
        tag = f"sub-{trip}"
        await client.send(op="subscribe", trip=trip, id=tag)
        return await client.wait_type("snapshot", re=tag)

    async def push(self, courier, fix, tag):
        await courier.send(**fix, id=tag)
        ack = await courier.wait_for(lambda m: m.get("re") == tag, what=f"the reply to {tag}")
        self.assertEqual(ack["type"], "ack", ack)
        self.assertTrue(ack["applied"], ack)
        return ack

    def find_route(self, points, mode="car", hub=None):
        query = {"from": "%.7f,%.7f" % points[0], "to": "%.7f,%.7f" % points[-1], "mode": mode}
        if len(points) > 2:
            query["via"] = ";".join("%.7f,%.7f" % p for p in points[1:-1])
        return (hub or HUB).http("GET", "/v1/route?" + urllib.parse.urlencode(query, safe=",;"))

    def create(self, stops, hub=None, **extra):
        body = {"origin": point(stops[0]), "destination": point(stops[-1])}
        if len(stops) > 2:
            body["waypoints"] = [point(p) for p in stops[1:-1]]
        body.update(extra)
        return (hub or HUB).http("POST", "/v1/trips", body)

    def assert_on_roads(self, route):
        worst = max(distance_to_road_m(p) for p in latlon(route))
        self.assertLess(worst, ON_ROAD_M, "every route vertex lies on a road of the database")

    def assert_passes_in_order(self, route, stops):
        along = []
        for i, stop in enumerate(stops):
            a, d = along_m(latlon(route), stop)
            self.assertLess(d, AT_STOP_M, f"the route passes stop {i}")
            along.append(a)
        self.assertEqual(along, sorted(along), "stops are passed in order")


class TripsFromStops(RouterTestCase):
    async def test_trip_from_origin_two_waypoints_and_destination_follows_the_roads(self):
        stops = [road_vertex_near(*p) for p in (ORIGIN, STOP_A, STOP_B, DESTINATION)]
        status, trip, raw = self.create(stops, id="rt-stops-1", config={"wait_at_waypoints": False})
        self.assertEqual(status, 201, raw)
        self.assertEqual(trip["route_source"], "router")
        self.assertEqual(trip["config"]["mode"], "car")
        self.assertTrue(trip["config"]["auto_reroute"], "auto_reroute defaults to true with a router")
        self.assertEqual([(w["index"], w["visited"]) for w in trip["waypoints"]], [(0, False), (1, False)])
        self.assertEqual(trip["destination"], point(stops[-1]))
        route = trip["route"]
        self.assertGreater(len(route), 5)
        self.assert_on_roads(route)
        self.assert_passes_in_order(route, stops)
        self.assertLess(distance_m(route[0][1], route[0][0], *stops[0]), 1, "the route starts at the origin")
        self.assertLess(distance_m(route[-1][1], route[-1][0], *stops[-1]), 1, "and ends at the destination")
        # The same route on a later read (without route_source: that is the create's answer).
        status, again, _ = HUB.http("GET", "/v1/trips/rt-stops-1")
        self.assertEqual((status, again["route"]), (200, route))
        # GET /v1/route finds the same path without a trip.
        status, found, raw = self.find_route(stops)
        self.assertEqual(status, 200, raw)
        self.assertEqual(found["route"], route)
        length = sum(distance_m(a[1], a[0], b[1], b[0]) for a, b in zip(route, route[1:]))
        self.assertAlmostEqual(found["distance_m"], length, delta=max(5, length * 0.01))
        self.assertGreater(found["duration_s"], 0)

    async def test_car_keeps_one_way_streets_where_foot_does_not(self):
        # The longest one-way street a car can still reach its start of by going round.
        checked = 0
        for feature in sorted((f for f in FEATURES if f["properties"]["oneway"]), key=lambda f: -self._length(f)):
            coords = latlon(feature["geometry"]["coordinates"])
            length = self._length(feature)
            start, end = coords[0], coords[-1]
            status, against, _ = self.find_route([end, start], mode="car")
            checked += 1
            if status != 200:
                self.assertLess(checked, 20, "no one-way street with a way round found")
                continue
            status, with_it, _ = self.find_route([start, end], mode="car")
            self.assertEqual(status, 200)
            self.assertAlmostEqual(with_it["distance_m"], length, delta=5, msg="along the one-way: the street itself")
            self.assertGreater(against["distance_m"], 1.5 * length, "car against the one-way goes round")
            status, walk, _ = self.find_route([end, start], mode="foot")
            self.assertEqual(status, 200)
            self.assertAlmostEqual(walk["distance_m"], length, delta=5, msg="foot walks the one-way street back")
            # And as a trip: mode foot is taken and kept.
            status, trip, raw = self.create([end, start], id="rt-foot-1", config={"mode": "foot"})
            self.assertEqual(status, 201, raw)
            self.assertEqual(trip["config"]["mode"], "foot")
            self.assert_on_roads(trip["route"])
            return
        self.fail("no one-way street found")

    @staticmethod
    def _length(feature):
        c = feature["geometry"]["coordinates"]
        return sum(distance_m(a[1], a[0], b[1], b[0]) for a, b in zip(c, c[1:]))

    async def test_an_unreachable_point_is_bad_request_naming_it(self):
        stops = [road_vertex_near(*p) for p in (ORIGIN, STOP_A, STOP_B, DESTINATION)]
        far = (60.2100, 24.9500)  # about 3 km north of every road in the database
        for field, points in (("origin", [far] + stops[1:]),
                              ("waypoints[1]", stops[:2] + [far] + stops[3:]),
                              ("destination", stops[:3] + [far])):
            status, doc, raw = self.create(points)
            self.assertEqual(status, 400, raw)
            self.assertEqual(doc["error"]["code"], "bad_request")
            self.assertIn(field, doc["error"]["message"])
        # Nearer than Routino's own search but farther than 500 m: still too far.
        near_far = (60.1500, 24.9450)  # ~1.6 km south of the southernmost road
        status, doc, _ = self.create([stops[0], near_far])
        self.assertEqual((status, doc["error"]["code"]), (400, "bad_request"))
        self.assertIn("destination", doc["error"]["message"])
        # A point on a road no car can reach (the end of a one-way street at the map's edge).
        for feature in (f for f in FEATURES if f["properties"]["oneway"]):
            coords = latlon(feature["geometry"]["coordinates"])
            status, doc, _ = self.find_route([coords[-1], coords[0]], mode="car")
            if status == 400 and "no car route" in doc["error"]["message"]:
                status, doc, raw = self.create([stops[0], coords[-1], coords[0]])
                self.assertEqual(status, 400, raw)
                self.assertIn("destination", doc["error"]["message"])
                break
        status, doc, _ = self.find_route([stops[0], far])
        self.assertEqual(status, 400)
        self.assertIn("to", doc["error"]["message"])

    async def test_equal_points_in_a_row_are_routed_once_and_the_hub_lives(self):
        """Routino 3.3 crashed (SIGSEGV) routing three equal points in a row after any other
        search; the hub routes a point within a metre of the one before it once."""
        hub = HubProcess("--router", f"routino:{DB}").start()
        try:
            x = road_vertex_near(*STOP_A)
            for mode in ("car", "foot"):
                status, _, raw = self.find_route([x, x], mode=mode, hub=hub)
                self.assertEqual(status, 200, raw)
                status, doc, raw = self.find_route([x, x, x], mode=mode, hub=hub)
                self.assertEqual(status, 200, raw)
                self.assertEqual(doc["distance_m"], 0)
                status, doc, raw = self.find_route([x, x, road_vertex_near(*STOP_B), road_vertex_near(*STOP_B)], mode=mode, hub=hub)
                self.assertEqual(status, 200, raw)
                self.assertGreater(doc["distance_m"], 100)
            self.assertIsNone(hub.proc.poll(), "the hub is still running")
            self.assertEqual(hub.http("GET", "/healthz")[0], 200)
        finally:
            hub.stop()

    async def test_a_hub_without_router_answers_as_before(self):
        status, doc, raw = self.create([ORIGIN, DESTINATION], hub=PLAIN)
        self.assertEqual(status, 400, raw)
        self.assertEqual(doc["error"]["code"], "bad_request")
        self.assertIn("route", doc["error"]["message"])
        self.assertIn("no router", doc["error"]["message"])
        status, doc, _ = self.find_route([ORIGIN, DESTINATION], hub=PLAIN)
        self.assertEqual((status, doc["error"]["code"]), (400, "bad_request"))
        route = [[ORIGIN[1], ORIGIN[0]], [DESTINATION[1], DESTINATION[0]]]
        created = PLAIN.create_trip(route=route)
        self.assertEqual(created["route_source"], "client")
        self.assertFalse(created["config"]["auto_reroute"])
        status, doc, _ = PLAIN.http("POST", "/v1/trips", {"route": route, "origin": point(ORIGIN), "destination": point(DESTINATION)})
        self.assertEqual(status, 400)
        self.assertIn("origin", doc["error"]["message"])
        status, doc, _ = HUB.http("POST", "/v1/trips", {"origin": point(ORIGIN)})
        self.assertEqual(status, 400)
        self.assertIn("destination", doc["error"]["message"])


class Rerouting(RouterTestCase):
    async def test_eta_is_known_from_the_first_frame(self):
        stops = [road_vertex_near(*p) for p in (ORIGIN, DESTINATION)]
        status, trip, raw = self.create(stops, id="rt-eta-1")
        self.assertEqual(status, 201, raw)
        viewer, courier = await self.client(), await self.client()
        await self.subscribe(viewer, "rt-eta-1")
        c = Courier("rt-eta-1")
        await self.push(courier, c.fix(*stops[0]), "e1")
        frame = await viewer.wait_type("frame", trip="rt-eta-1")
        status, found, _ = self.find_route(stops)
        self.assertIsNotNone(frame["eta_s"], "one fix, no speed yet: the router's travel time")
        self.assertAlmostEqual(frame["eta_s"], found["duration_s"], delta=2)

    async def test_a_rider_who_leaves_the_route_is_rerouted_once_and_arrives(self):
        trip_id = "rt-reroute-1"
        stops = [road_vertex_near(*p) for p in (ORIGIN, STOP_B, DESTINATION)]
        status, trip, raw = self.create(stops, id=trip_id, config={"wait_at_waypoints": False})
        self.assertEqual(status, 201, raw)
        first = latlon(trip["route"])
        viewer, courier = await self.client(), await self.client()
        await self.subscribe(viewer, trip_id)
        c = Courier(trip_id, speed_mps=15)
        await self.push(courier, c.fix(*first[0]), "r0")
        # Two fixes on roads well off the route (more than reroute_distance_m, 100 m), near
        # where the rider is: the first makes the trip off_route, the second asks for a route.
        off = sorted((v for v in VERTICES if distance_to_route_m(first, v) > 160),
                     key=lambda v: distance_m(v[0], v[1], *first[0]))
        a = off[0]
        b = next(v for v in off[1:] if 30 < distance_m(v[0], v[1], *a) < 150)
        mark = viewer.mark()
        await self.push(courier, c.fix(*a), "r1")
        await viewer.wait_type("event", trip=trip_id, name="off_route")
        await self.push(courier, c.fix(*b), "r2")
        rerouted = await viewer.wait_type("event", trip=trip_id, name="rerouted")
        self.assertEqual(rerouted["reason"], "off_route")
        snap = await viewer.wait_type("snapshot", trip=trip_id)
        new = snap["route"]
        self.assertNotEqual(new, trip["route"])
        self.assert_on_roads(new)
        self.assertLess(distance_m(new[0][1], new[0][0], *b), AT_STOP_M, "the new route starts at the rider")
        self.assert_passes_in_order(new, [b, stops[1], stops[2]])
        self.assertEqual([(w["index"], w["visited"]) for w in snap["waypoints"]], [(0, False)],
                         "the unvisited waypoint is kept, index and all")
        self.assertIn(snap["status"], ("moving", "off_route"))
        # The rider follows the new route to the destination.
        for i, p in enumerate(self._along(latlon(new), step_m=60)[1:]):
            await self.push(courier, c.fix(*p), f"n{i}")
        arrived = await viewer.wait_type("event", trip=trip_id, name="arrived", timeout=30)
        self.assertIsNotNone(arrived)
        names = [e["name"] for e in viewer.since(mark, "event") if e["trip"] == trip_id]
        self.assertEqual(names.count("rerouted"), 1, names)
        self.assertNotIn("back_on_route", names)
        self.assertEqual(names[-1], "arrived", names)
        text = HUB.http("GET", "/metrics")[2].decode()
        self.assertRegex(text, r'trackhub_router_searches_total\{result="ok"\} [1-9]')
        self.assertIn("trackhub_router_search_seconds_count", text)

    @staticmethod
    def _along(route, step_m):
        """Points along `route` every `step_m` metres, its vertices' ends included."""
        out = [route[0]]
        for a, b in zip(route, route[1:]):
            d = distance_m(a[0], a[1], b[0], b[1])
            n = max(1, int(math.ceil(d / step_m)))
            for k in range(1, n + 1):
                out.append((a[0] + (b[0] - a[0]) * k / n, a[1] + (b[1] - a[1]) * k / n))
        return out


if __name__ == "__main__":
    unittest.main()
