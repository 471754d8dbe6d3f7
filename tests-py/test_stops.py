"""PROTOCOL 17 "Stops" and "Following one stop" end to end against the release binary.

    swift build -c release
    TRACKHUB_BIN=$(swift build -c release --show-bin-path) python3 -m unittest tests-py/test_stops.py -v

A straight route about 868 m east; stops at 200 m ("a", "Ann", dwell 60 s), 400 m ("b") and
600 m ("c", dwell 30 s). A courier drives it with fixes; viewers follow the whole trip or one
stop. Checked: validation of the waypoint objects (naming `waypoints[i].id` and the others),
the waypoints' `id`/`name`/`dwell_s`/`eta_s`/`remaining_m` in GET and the snapshot, the
events' `stop`/`stop_name`, a `stop` subscription's snapshot `stop` object, frames and
segments taken to its stop, a new route that keeps one stop and drops another
(`unsubscribed` `stop_removed`), and (when redis-server is installed) three cluster hubs
giving the same numbers.

Nothing sleeps to synchronise: every wait is a message or a condition with a deadline.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hubproc  # noqa: E402
import test_cluster  # noqa: E402
from hubproc import Courier, HubProcess, offset  # noqa: E402
from trip_driving import TrackedClients, send_fix  # noqa: E402

REPLY_DEADLINE_S = 15.0
LAT0, LON0 = 38.70, -9.15
ROUTE = [[LON0, LAT0], [-9.14, LAT0]]


def east(metres):
    return offset(LAT0, LON0, east_m=metres)


def stop(metres, **details):
    lat, lon = east(metres)
    return {"lat": lat, "lon": lon, **details}


STOPS = [stop(200, id="a", name="Ann", dwell_s=60), stop(400, id="b"), stop(600, id="c", dwell_s=30)]


def setUpModule():
    hubproc.require_binary()


async def drive(conn, courier, metres, tag):
    lat, lon = east(metres)
    return await send_fix(conn, courier.fix(lat, lon), tag, REPLY_DEADLINE_S)


class StopsHubTest(TrackedClients, hubproc.AsyncTestCase):
    wait_deadline_s = REPLY_DEADLINE_S

    @classmethod
    def setUpClass(cls):
        cls.hub = HubProcess("--tick-hz", "10").start()

    @classmethod
    def tearDownClass(cls):
        cls.hub.stop()

    def get(self, trip):
        status, body, raw = self.hub.http("GET", f"/v1/trips/{trip}")
        self.assertEqual(status, 200, raw[:300])
        return body

    def create(self, trip, waypoints=STOPS, wait=True):
        return self.hub.create_trip(id=trip, route=ROUTE, waypoints=waypoints, config={"wait_at_waypoints": wait})

    def test_waypoints_are_validated_naming_the_field(self):
        cases = [
            ([stop(200, id="x"), stop(400, id="x")], "waypoints[1].id"),
            ([stop(200, id="bad id")], "waypoints[0].id"),
            ([stop(200, id="x" * 65)], "waypoints[0].id"),
            ([stop(200, id="")], "waypoints[0].id"),
            ([stop(200, name="n" * 201)], "waypoints[0].name"),
            ([stop(200, dwell_s=3601)], "waypoints[0].dwell_s"),
            ([stop(200, dwell_s=1.5)], "waypoints[0].dwell_s"),
            ([stop(200, dwell_s=-1)], "waypoints[0].dwell_s"),
        ]
        for waypoints, field in cases:
            status, body, raw = self.hub.http("POST", "/v1/trips", {"route": ROUTE, "waypoints": waypoints})
            self.assertEqual(status, 400, (waypoints, raw[:300]))
            self.assertEqual(body["error"]["code"], "bad_request")
            self.assertIn(field, body["error"]["message"])
        ok = self.create("V-ok", [stop(200, id="x", name="n" * 200, dwell_s=3600), stop(400)])
        self.assertEqual([(w["id"], w["dwell_s"]) for w in ok["waypoints"]], [("x", 3600), (None, 0)])
        self.assertIsNone(ok["waypoints"][1]["name"])

    async def test_numbers_events_and_following_one_stop(self):
        trip = "S1"
        created = self.create(trip)
        self.assertEqual([w["id"] for w in created["waypoints"]], ["a", "b", "c"])
        self.assertEqual([w["name"] for w in created["waypoints"]], ["Ann", None, None])
        self.assertEqual([w["dwell_s"] for w in created["waypoints"]], [60, 0, 30])
        self.assertEqual([(w["eta_s"], w["remaining_m"]) for w in created["waypoints"]], [(None, None)] * 3)

        courier_conn = await self.client()
        viewer = await self.client()
        follower_b = await self.client()
        segs_b = await self.client()
        await viewer.send(op="subscribe", trip=trip, id="v")
        await viewer.wait_type("snapshot", REPLY_DEADLINE_S, re="v")
        await follower_b.send(op="subscribe", trip=trip, stop="b", id="fb")
        snap_b = await follower_b.wait_type("snapshot", REPLY_DEADLINE_S, re="fb")
        self.assertEqual(snap_b["stop"], {"id": "b", "stops_before": 1, "eta_s": None, "remaining_m": None, "reached": False})
        await segs_b.send(op="subscribe", trip=trip, mode="segments", stop="b", id="sb")
        await segs_b.wait_type("snapshot", REPLY_DEADLINE_S, re="sb")

        # An unknown stop is not_found naming `stop`.
        await viewer.send(op="subscribe", trip=trip, stop="nope", id="bad")
        err = await viewer.wait_type("error", REPLY_DEADLINE_S, re="bad")
        self.assertEqual(err["code"], "not_found")
        self.assertIn("stop", err["message"])

        courier = Courier(trip, speed_mps=10.0)
        await drive(courier_conn, courier, 0, "f1")
        await drive(courier_conn, courier, 100, "f2")

        # The GET body: each waypoint's numbers to its projection, dwells before it added.
        def numbers_known():
            body = self.get(trip)
            return body["eta_s"] is not None and body["waypoints"][0]["eta_s"] is not None, body
        body = await self.eventually(numbers_known, "the waypoints' eta_s")
        done = body["done_m"]
        a, b, c = body["waypoints"]
        for w, along in ((a, 200), (b, 400), (c, 600)):
            self.assertAlmostEqual(w["remaining_m"], along - done, delta=1.0)
        self.assertGreaterEqual(b["eta_s"], a["eta_s"] + 60)  # a's dwell comes before b
        self.assertGreaterEqual(c["eta_s"], b["eta_s"])
        self.assertGreaterEqual(body["eta_s"], c["eta_s"] + 30)  # the trip's own adds every dwell

        # Frames to b: remaining_m and progress to b's projection; the trip viewer's are to
        # the destination, for the same seq.
        fb = await follower_b.wait_for(lambda m: m.get("type") == "frame" and m.get("eta_s") is not None, REPLY_DEADLINE_S)
        fv = await viewer.wait_for(lambda m: m.get("type") == "frame" and m.get("seq") == fb["seq"], REPLY_DEADLINE_S)
        self.assertAlmostEqual(fb["remaining_m"], 400 - fb["done_m"], delta=1.0)
        self.assertAlmostEqual(fb["progress"], fb["done_m"] / (400.0), delta=0.01)
        self.assertGreater(fv["remaining_m"], fb["remaining_m"] + 300)
        self.assertLess(fb["eta_s"], fv["eta_s"])
        self.assertEqual((fb["lat"], fb["lon"]), (fv["lat"], fv["lon"]))
        sb = await segs_b.wait_for(lambda m: m.get("type") == "segment" and m.get("done_m") is not None, REPLY_DEADLINE_S)
        self.assertAlmostEqual(sb["remaining_m"], 400 - sb["done_m"], delta=1.0)
        self.assertLessEqual(sb["progress_to"], 1)

        # Reaching a: the events carry the stop and its name; the trip holds there.
        await drive(courier_conn, courier, 200, "f3")
        reached = await viewer.wait_for(lambda m: m.get("type") == "event" and m.get("name") == "waypoint_reached",
                                        REPLY_DEADLINE_S)
        self.assertEqual((reached["stop"], reached["stop_name"]), ("a", "Ann"))
        held = self.get(trip)
        self.assertEqual(held["status"], "holding")
        self.assertEqual((held["waypoints"][0]["eta_s"], held["waypoints"][0]["remaining_m"]), (0, 0))
        status, _, raw = self.hub.http("POST", f"/v1/trips/{trip}/proceed")
        self.assertIn(status, (200, 202, 204), raw[:200])
        resumed = await viewer.wait_for(lambda m: m.get("type") == "event" and m.get("name") == "waypoint_resumed",
                                        REPLY_DEADLINE_S)
        self.assertEqual((resumed["stop"], resumed["stop_name"]), ("a", "Ann"))
        after = self.get(trip)
        self.assertEqual((after["waypoints"][0]["eta_s"], after["waypoints"][0]["remaining_m"]), (None, None))

        # A visited waypoint's id may not be taken by a new one.
        status, body, raw = self.hub.http("PUT", f"/v1/trips/{trip}/route", {"route": ROUTE, "waypoints": [stop(500, id="a")]})
        self.assertEqual(status, 400, raw[:300])
        self.assertIn("waypoints[0].id", body["error"]["message"])

        # A new route that keeps b (moved to 450 m) and drops c: c's follower is told.
        follower_c = await self.client()
        await follower_c.send(op="subscribe", trip=trip, stop="c", id="fc")
        await follower_c.wait_type("snapshot", REPLY_DEADLINE_S, re="fc")
        mark_b = follower_b.mark()
        status, _, raw = self.hub.http("PUT", f"/v1/trips/{trip}/route", {"route": ROUTE, "waypoints": [stop(450, id="b", dwell_s=10)]})
        self.assertIn(status, (200, 204), raw[:300])
        gone = await follower_c.wait_type("unsubscribed", REPLY_DEADLINE_S, trip=trip)
        self.assertEqual(gone["reason"], "stop_removed")
        snap = await follower_b.scan(mark_b, lambda m: m.get("type") == "snapshot", None, REPLY_DEADLINE_S)
        self.assertEqual(snap[-1]["stop"]["id"], "b")
        self.assertEqual(snap[-1]["stop"]["stops_before"], 0)
        self.assertFalse(any(m.get("type") == "unsubscribed" for m in follower_b.since(mark_b)))
        wp = self.get(trip)["waypoints"]
        self.assertEqual([(w["id"], w["visited"]) for w in wp], [("a", True), ("b", False)])

        # Reaching b: its follower's numbers go to 0 and progress to 1.
        await drive(courier_conn, courier, 450, "f4")
        await follower_b.wait_for(lambda m: m.get("type") == "event" and m.get("name") == "waypoint_reached"
                                  and m.get("stop") == "b", REPLY_DEADLINE_S)
        await follower_b.send(op="subscribe", trip=trip, stop="b", id="fb2")
        again = await follower_b.wait_type("snapshot", REPLY_DEADLINE_S, re="fb2")
        self.assertEqual((again["stop"]["reached"], again["stop"]["eta_s"], again["stop"]["remaining_m"]), (True, 0, 0))
        self.assertEqual((again["eta_s"], again["remaining_m"], again["progress"]), (0, 0, 1))
        dest = await self.client()
        await dest.send(op="subscribe", trip=trip, stop="destination", id="d")
        dsnap = await dest.wait_type("snapshot", REPLY_DEADLINE_S, re="d")
        self.assertEqual(dsnap["stop"]["id"], "destination")
        self.assertEqual(dsnap["stop"]["stops_before"], 1)  # b is held: not visited yet
        self.assertFalse(dsnap["stop"]["reached"])


class StopsClusterTest(test_cluster.ClusterTestCase):
    """Three cluster hubs give the same stop numbers (the commands carry the raw bodies)."""

    def setUp(self):
        if test_cluster.redis_server_path() is None:
            self.skipTest("redis-server is not installed: the cluster part needs Redis 7")
        super().setUp()

    async def test_three_hubs_agree(self):
        trip = "SC1"
        self.hubs["A"].create_trip(id=trip, route=ROUTE, waypoints=STOPS, config={"wait_at_waypoints": False})
        await self.eventually(self.known_everywhere(trip), "the trip known on every hub")
        followers = {}
        for name, hub in self.hubs.items():
            c = await self.client(hub)
            await c.send(op="subscribe", trip=trip, stop="c", id="s")
            snap = await c.wait_type("snapshot", REPLY_DEADLINE_S, re="s")
            self.assertEqual(snap["stop"]["id"], "c")
            followers[name] = c
        conn = await self.client(self.hubs["A"])
        courier = Courier(trip, speed_mps=10.0)
        for i, m in enumerate((0, 100, 250)):
            await drive(conn, courier, m, f"f{i}")
        # Every hub's follower of c gets frames to c; the same seq has the same numbers.
        frames = {}
        for name, c in followers.items():
            frames[name] = await c.wait_for(lambda m: m.get("type") == "frame" and m.get("status") == "moving"
                                            and m.get("done_m", 0) > 240, REPLY_DEADLINE_S)
        reached = await self.wait_event(followers["B"], trip, "waypoint_reached")
        self.assertEqual((reached["stop"], reached["stop_name"]), ("a", "Ann"))
        for f in frames.values():
            self.assertAlmostEqual(f["remaining_m"], 600 - f["done_m"], delta=1.0)

        # Once the marker rests, every hub's GET gives the same stop numbers.
        def agree():
            docs = {n: h.http("GET", f"/v1/trips/{trip}")[1] for n, h in self.hubs.items()}
            view = {n: [(w["id"], w["visited"], w["eta_s"], w["remaining_m"]) for w in d["waypoints"]] + [d["eta_s"]]
                    for n, d in docs.items()}
            values = list(view.values())
            settled = all(d["last_event"] == docs["A"]["last_event"] for d in docs.values())
            return settled and values[0][0][1] and all(v == values[0] for v in values), view
        view = await self.eventually(agree, "the same stop numbers on every hub")
        self.assertEqual([w[0] for w in view["A"][:3]], ["a", "b", "c"])
        self.assertIsNone(view["A"][0][2])  # a is visited
        self.assertIsNotNone(view["A"][2][2])


if __name__ == "__main__":
    unittest.main()
