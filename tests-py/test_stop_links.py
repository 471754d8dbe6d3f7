"""Links for one stop (PROTOCOL 17) against the release hub, as far as they are built: the
request and its claims, the link's `GET /v1/trips/{id}` view over a whole trip with three
stops on one street (the route passes right through the other stops), every message live
links receive over a whole trip, and revocation.

Privacy is tested like durability: every byte each link receives over the whole trip is kept
and no coordinate in it may lie within 200 m of another stop.

Run:  cd tests-py && TRACKHUB_BIN=/path/to/.build/release python3 -m unittest test_stop_links -v

Everything waits for an answer with a deadline; nothing sleeps to synchronise.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import hubproc  # noqa: E402
from browser.hubs import HubUnderTest  # noqa: E402
from test_share_links import WS, call  # noqa: E402

SECRET = "stop-links-e2e-secret-at-least-32-bytes"
LAT0, LON0 = 38.7000, -9.1400
# A 3 km street due north; stops a, b, c at 800, 1 600 and 2 400 m; the destination at its end.
LENGTH_M = 3000
STOPS = {"a": 800, "b": 1600, "c": 2400}
RADIUS_M = 200


def point(along_m):
    return hubproc.offset(LAT0, LON0, north_m=along_m)


def coordinates(value):
    """Every coordinate in a JSON value: {lat, lon} objects and [lon, lat] pairs."""
    found = []
    if isinstance(value, dict):
        if isinstance(value.get("lat"), (int, float)) and isinstance(value.get("lon"), (int, float)):
            found.append((value["lat"], value["lon"]))
        for v in value.values():
            found += coordinates(v)
    elif isinstance(value, list):
        if len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
            found.append((value[1], value[0]))
        else:
            for v in value:
                found += coordinates(v)
    return found


@unittest.skipIf(hubproc.trackhub_binary() is None, hubproc.SKIP_MESSAGE)
class StopLinkTest(unittest.TestCase):
    def setUp(self):
        self.hub = HubUnderTest(SECRET)
        self.clients = []
        route = [[p[1], p[0]] for p in (point(d) for d in range(0, LENGTH_M + 1, 100))]
        waypoints = [{"lat": point(m)[0], "lon": point(m)[1], "id": sid, "name": f"Order {sid}"} for sid, m in STOPS.items()]
        self.hub.create_trip("M1", route, rider={"id": "rider-42", "name": "Alex"}, waypoints=waypoints)
        self.admin = self.hub.admin_token

    def tearDown(self):
        for c in self.clients:
            c.close()
        self.hub.close()

    def share(self, **body):
        status, doc = call(self.hub, "POST", "/v1/trips/M1/share", self.admin, body)
        self.assertEqual(status, 201, doc)
        return doc

    def wait_for(self, what, check, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            got = check()
            if got:
                return got
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.05)  # polling interval of a condition with a deadline, not a synchronisation

    def assert_clear(self, body, others, where):
        for lat, lon in coordinates(body):
            for other in others:
                d = hubproc.distance_m(lat, lon, *point(STOPS[other]))
                self.assertGreater(d, RADIUS_M, f"{where}: ({lat}, {lon}) is {d:.0f} m from stop {other}: {json.dumps(body)}")

    def test_request_and_claims(self):
        token = self.share(stop="b", visible_within_stops=1)["token"]
        part = token.split(".")[1]
        payload = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
        self.assertEqual((payload["stop"], payload["visible_within_stops"]), ("b", 1))
        for body, field in (({"stop": "zz"}, "stop"), ({"stop": 3}, "stop"), ({"stop": "b", "visible_within_stops": 101}, "visible_within_stops")):
            status, doc = call(self.hub, "POST", "/v1/trips/M1/share", self.admin, body)
            self.assertEqual(status, 400, doc)
            self.assertIn(field, doc["error"]["message"])

    def test_a_whole_trip_through_two_stop_links(self):
        links = {"b": self.share(stop="b", visible_within_stops=1)["token"],
                 "destination": self.share(stop="destination")["token"]}
        others = {"b": ["a", "c"], "destination": ["a", "b", "c"]}
        received = {name: [] for name in links}

        def look(where):
            for name, token in links.items():
                status, body = call(self.hub, "GET", "/v1/trips/M1", token)
                self.assertEqual(status, 200, body)
                received[name].append((where, body))
                self.assert_clear(body, others[name], f"{name} at {where}")

        look("before the first fix")
        courier = WS(self.hub, self.hub.courier_token)
        self.clients.append(courier)
        ts = int(time.time() * 1000) - 600_000
        for i, along in enumerate(range(0, LENGTH_M + 1, 100)):
            lat, lon = point(along)
            ack = courier.request({"op": "fix", "trip": "M1", "lat": lat, "lon": lon, "ts": ts + i * 10_000, "seq": i + 1,
                                   "duration_ms": 200})
            self.assertEqual(ack["type"], "ack", ack)
            if along in STOPS.values():
                # The courier hands over the order and goes on.
                self.wait_for(f"holding at {along} m", lambda: call(self.hub, "GET", "/v1/trips/M1", self.admin)[1]["status"] == "holding")
                look(f"holding at {along} m")
                self.assertEqual(courier.request({"op": "proceed", "trip": "M1"})["type"], "ack")
            look(f"{along} m")
        self.wait_for("arrival", lambda: call(self.hub, "GET", "/v1/trips/M1", self.admin)[1]["status"] == "arrived")
        look("arrived")

        b = [body for _, body in received["b"]]
        # Only its own stop, its stop as the destination, nothing of the rider but the name.
        for body in b:
            self.assertEqual([w["id"] for w in body["waypoints"]], ["b"])
            self.assertLess(hubproc.distance_m(body["destination"]["lat"], body["destination"]["lon"], *point(STOPS["b"])), 1)
            self.assertEqual((body["rider"], body["trail"], body["battery"]), ({"name": "Alex"}, [], None))
            self.assertNotIn("rider-42", json.dumps(body))
            self.assertNotEqual(body["status"], "holding")
        # stops_before counts down 1, 0; hidden until then (visible within 1 stop) and near a.
        counts = [body["stop"]["stops_before"] for body in b]
        self.assertEqual(counts, sorted(counts, reverse=True))
        self.assertEqual(sorted(set(counts), reverse=True), [1, 0])
        self.assertTrue(any(body["position"] is None and body["stop"]["eta_s"] is not None for body in b), "an ETA while hidden")
        self.assertTrue(any(body["position"] is not None for body in b), "shown when near")
        # Past its stop: no position ever again.
        reached = [i for i, body in enumerate(b) if body["stop"]["reached"]]
        self.assertTrue(reached)
        self.assertTrue(all(b[i]["position"] is None and b[i]["route"] is None for i in range(reached[0], len(b))))
        # The destination's link sees no waypoint at all.
        self.assertTrue(all(body["waypoints"] == [] for _, body in received["destination"]))

    def test_a_new_route_that_keeps_and_one_that_drops_the_stop(self):
        token = self.share(stop="b", visible_within_stops=5)["token"]
        route = [[p[1], p[0]] for p in (point(d) for d in range(0, LENGTH_M + 1, 100))]
        moved = point(1700)
        keep = {"route": route, "waypoints": [{"lat": moved[0], "lon": moved[1], "id": "b"}, {"lat": point(2400)[0], "lon": point(2400)[1], "id": "c"}]}
        status, doc = call(self.hub, "PUT", "/v1/trips/M1/route", self.admin, keep)
        self.assertEqual(status, 200, doc)
        status, body = call(self.hub, "GET", "/v1/trips/M1", token)
        self.assertEqual([w["id"] for w in body["waypoints"]], ["b"])
        self.assertLess(hubproc.distance_m(body["destination"]["lat"], body["destination"]["lon"], *moved), 1)
        self.assertEqual(body["stop"]["stops_before"], 0)
        drop = {"route": route, "waypoints": [{"lat": point(2400)[0], "lon": point(2400)[1], "id": "c"}]}
        status, doc = call(self.hub, "PUT", "/v1/trips/M1/route", self.admin, drop)
        self.assertEqual(status, 200, doc)
        status, body = call(self.hub, "GET", "/v1/trips/M1", token)
        self.assertEqual(status, 200, body)
        # A dropped stop: nothing of the trip's places at all.
        self.assertEqual((body["waypoints"], body["destination"], body["position"], body["route"]), ([], None, None, None))
        self.assertEqual(coordinates(body), [])

    def test_live_links_over_a_whole_trip(self):
        """Every message three live links receive over the whole trip: b in frames and in
        segments mode (shown within 1 stop), the destination in frames mode."""
        subscriptions = {("b", "frames"): "b", ("b", "segments"): "b", ("destination", "frames"): "destination"}
        others = {"b": ["a", "c"], "destination": ["a", "b", "c"]}
        links = {}
        for (stop, mode) in subscriptions:
            ws = WS(self.hub, self.share(stop=stop, visible_within_stops=1)["token"])
            self.clients.append(ws)
            snapshot = ws.request({"op": "subscribe", "trip": "M1", "mode": mode})
            self.assertEqual(snapshot["type"], "snapshot", snapshot)
            links[(stop, mode)] = ws
        courier = WS(self.hub, self.hub.courier_token)
        self.clients.append(courier)
        ts = int(time.time() * 1000) - 600_000
        for i, along in enumerate(range(0, LENGTH_M + 1, 100)):
            lat, lon = point(along)
            ack = courier.request({"op": "fix", "trip": "M1", "lat": lat, "lon": lon, "ts": ts + i * 10_000, "seq": i + 1,
                                   "duration_ms": 200})
            self.assertEqual(ack["type"], "ack", ack)
            if along in STOPS.values():
                self.wait_for(f"holding at {along} m", lambda: call(self.hub, "GET", "/v1/trips/M1", self.admin)[1]["status"] == "holding")
                self.assertEqual(courier.request({"op": "proceed", "trip": "M1"})["type"], "ack")
        for key, ws in links.items():
            ended = ws.until(lambda m: m.get("type") == "unsubscribed", timeout=30)
            self.assertEqual(ended[-1]["reason"], "arrived", key)
        for (stop, mode), ws in links.items():
            log = ws.log
            where = f"{stop} ({mode})"
            for msg in log:
                self.assert_clear(msg, others[stop], where)
                self.assertNotIn("rider-42", json.dumps(msg))
                if msg.get("battery") is not None:
                    self.fail(f"{where}: a battery value: {msg}")
            kinds = [m["type"] for m in log]
            self.assertEqual(kinds[0], "snapshot", where)
            self.assertEqual(kinds[1], "stop", where)
            self.assertEqual(kinds[-1], "unsubscribed", where)
            counts = [m["stops_before"] for m in log if m["type"] == "stop"]
            self.assertEqual(counts, sorted(counts, reverse=True), where)
            self.assertEqual(counts[-1], 0, where)
            # Nothing of the courier before a `stop` message said it is visible, nor after one said it is not.
            visible = False
            positions = 0
            for msg in log:
                if msg["type"] == "stop":
                    visible = msg["visible"]
                elif msg["type"] in ("frame", "segment"):
                    self.assertTrue(visible, f"{where}: {msg['type']} while hidden: {msg}")
                    self.assertEqual(msg["type"], "segment" if mode == "segments" else "frame", where)
                    positions += 1
            self.assertGreater(positions, 0, f"{where}: the courier was never shown")
            names = [m["name"] for m in log if m["type"] == "event"]
            own = "arrived" if stop == "destination" else "waypoint_reached"
            self.assertEqual([n for n in names if n not in ("signal_lost", "signal_back", "ended")], [own], where)
            if stop == "b":
                reached = next(m for m in log if m["type"] == "event")
                self.assertEqual(reached["stop"], "b", where)
                # Its event, then the end: nothing between them.
                self.assertEqual(log.index(reached) + 1, len(log) - 1, f"{where}: {log[-4:]}")

    def test_revocation(self):
        doc = self.share(stop="b")
        customer = WS(self.hub, doc["token"])
        self.clients.append(customer)
        reply = customer.request({"op": "subscribe", "trip": "M1"})
        self.assertEqual(reply["type"], "snapshot", reply)
        self.assertEqual(call(self.hub, "GET", "/v1/trips", doc["token"])[1]["trips"], [])
        status, _ = call(self.hub, "DELETE", f"/v1/shares/{doc['jti']}", self.admin)
        self.assertEqual(status, 200)
        self.assertEqual(call(self.hub, "GET", "/v1/trips/M1", doc["token"])[0], 401)


if __name__ == "__main__":
    unittest.main()
