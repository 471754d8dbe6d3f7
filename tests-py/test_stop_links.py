"""Links for one stop (PROTOCOL 17) against the release hub: the request and its claims, the
link's `GET /v1/trips/{id}` view, and the live side: every WebSocket message links receive
over a whole trip with three stops on one street (the route passes right through the other
stops), in frames and in segments mode; a new route that keeps the link's stop and one that
drops it; revocation; and three hubs of a cluster giving the same `stop` messages and events,
and ending a link revoked on one of them. Also: a link the courier is hidden from leaves it
at the idle cadence until the courier is shown (PROTOCOL 18), on its own hub or on another
hub of a cluster, which does not publish the trip as watched meanwhile; a `since_event` replay carries
only the link's own events; a link's GET equals its snapshot; a share token the shop signs
itself with the hub's secret gets the link's view; an expired link token is refused.

Privacy is tested like durability: every byte each link receives over the whole trip is kept,
and no coordinate in it may lie within 200 m of another stop; no frame or segment comes while
the courier is hidden from the link; `stops_before` only counts down; the link ends at its stop.

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
from browser.hubs import SUBPROTOCOL, HubUnderTest  # noqa: E402
from test_share_links import WS, call  # noqa: E402
from trip_driving import redis_server_path, start_cluster  # noqa: E402

SECRET = "stop-links-e2e-secret-at-least-32-bytes"
LAT0, LON0 = 38.7000, -9.1400
# A 3 km street due north; stops a, b, c at 800, 1 600 and 2 400 m; the destination at its end.
LENGTH_M = 3000
STOPS = {"a": 800, "b": 1600, "c": 2400}
RADIUS_M = 200
# The events a stop link may get besides its own stop's (PROTOCOL 17).
SIGNAL_EVENTS = {"signal_lost", "signal_back", "ended"}
# How far apart two hubs' `eta_s` of the same `stop` message may be: each computes it when it
# sends it (a tolerance for the send moment, not a speed being measured).
ETA_TOLERANCE_S = 5


def point(along_m):
    return hubproc.offset(LAT0, LON0, north_m=along_m)


def street():
    """The route: the street as [lon, lat] points every 100 m."""
    return [[p[1], p[0]] for p in (point(d) for d in range(0, LENGTH_M + 1, 100))]


def stop_waypoints(stops=STOPS):
    return [{"lat": point(m)[0], "lon": point(m)[1], "id": sid, "name": f"Order {sid}"} for sid, m in stops.items()]


def values_of(value, key):
    """Every value of `key` anywhere in a JSON value."""
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key:
                found.append(v)
            found += values_of(v, key)
    elif isinstance(value, list):
        for v in value:
            found += values_of(v, key)
    return found


def compressed(values):
    """`values` without consecutive repeats: [1, 1, 0, 0] -> [1, 0]."""
    out = []
    for v in values:
        if not out or out[-1] != v:
            out.append(v)
    return out


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


class StreetDriving:
    """What the test classes here share (mixed in before unittest.TestCase): a condition
    polled with a deadline, and a courier driving trip M1 up the street (`self.hub`,
    `self.admin`, its clients closed after the test in `self.clients`)."""

    def wait_for(self, what, check, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            got = check()
            if got:
                return got
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.05)  # polling interval of a condition with a deadline, not a synchronisation

    def drive_street(self, courier_token, battery=None, fixed=None, holding=None, stepped=None, upto=LENGTH_M, courier=None):
        """Fixes every 100 m up the street to `upto`, 10 s apart in the courier's time, each
        ack awaited; after each ack `fixed(along)`; at a stop the courier stands until the hub
        holds there, then `holding(along)` and `proceed`; after each step `stepped(along)`.
        `courier`: its WebSocket (a `WS` with a courier token) when the test reads it too."""
        if courier is None:
            courier = WS(self.hub, courier_token)
            self.clients.append(courier)
        ts = int(time.time() * 1000) - 600_000
        for i, along in enumerate(range(0, upto + 1, 100)):
            lat, lon = point(along)
            fix = {"op": "fix", "trip": "M1", "lat": lat, "lon": lon, "ts": ts + i * 10_000, "seq": i + 1, "duration_ms": 200}
            if battery is not None:
                fix["battery"] = battery
            ack = courier.request(fix)
            self.assertEqual(ack["type"], "ack", ack)
            if fixed:
                fixed(along)
            if along in STOPS.values():
                self.wait_for(f"holding at {along} m", lambda: call(self.hub, "GET", "/v1/trips/M1", self.admin)[1]["status"] == "holding")
                if holding:
                    holding(along)
                self.assertEqual(courier.request({"op": "proceed", "trip": "M1"})["type"], "ack")
            if stepped:
                stepped(along)


@unittest.skipIf(hubproc.trackhub_binary() is None, hubproc.SKIP_MESSAGE)
class StopLinkTest(StreetDriving, unittest.TestCase):
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
        # At each stop the courier hands over the order and goes on.
        self.drive_street(self.hub.courier_token, holding=lambda along: look(f"holding at {along} m"),
                          stepped=lambda along: look(f"{along} m"))
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
        self.drive_street(self.hub.courier_token)
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
                # Its event, then the end: only the courier (the last frame there) between them;
                # LiveStopLinkTest checks where that last frame is.
                between = log[log.index(reached) + 1:-1]
                self.assertTrue(all(m["type"] in ("frame", "segment", "stop") for m in between), f"{where}: {log[-4:]}")

    def test_revocation(self):
        doc = self.share(stop="b")
        customer = WS(self.hub, doc["token"])
        self.clients.append(customer)
        snap = customer.request({"op": "subscribe", "trip": "M1"})
        self.assertEqual(snap["type"], "snapshot", snap)
        self.assertEqual(call(self.hub, "GET", "/v1/trips", doc["token"])[1]["trips"], [])
        status, _ = call(self.hub, "DELETE", f"/v1/shares/{doc['jti']}", self.admin)
        self.assertEqual(status, 200)
        end = customer.until(lambda m: m.get("type") == "unsubscribed")[-1]
        self.assertEqual((end["trip"], end["reason"]), ("M1", "revoked"))
        self.assertEqual(call(self.hub, "GET", "/v1/trips/M1", doc["token"])[0], 401)

    # ---- cadence (PROTOCOL 18) ----------------------------------------------------------------
    def test_a_link_the_courier_is_hidden_from_does_not_make_the_trip_watched(self):
        """PROTOCOL 18: a stop link watches the trip only while the courier is shown to it. The
        link for b (shown from 0 stops before it) is the trip's only subscriber: while a is
        ahead, and within 200 m of a (to 1 000 m), the courier is hidden from it and asked for
        the idle interval; once shown (past 1 000 m), for the watched one."""
        link = WS(self.hub, self.share(stop="b")["token"])
        self.clients.append(link)
        self.assertEqual(link.request({"op": "subscribe", "trip": "M1"})["type"], "snapshot")
        courier = WS(self.hub, self.hub.courier_token)
        self.clients.append(courier)

        def of_type(ws, kind):
            return [m for m in ws.log if m.get("type") == kind]

        def hidden_and_idle(along):
            if along > 900:  # the marker may be 200 m past a from the next fix on
                return
            link.request({"op": "ping"})  # its pong comes after everything sent to it before
            self.assertFalse(of_type(link, "stop")[-1]["visible"], f"at {along} m: {of_type(link, 'stop')[-1]}")
            # The hub decides a link's sight and its courier's cadence in the same turn: the
            # link still sees nothing, so no cadence saying otherwise was sent before the pong.
            courier.request({"op": "ping"})
            cadences = of_type(courier, "cadence")
            self.assertTrue(cadences, f"at {along} m: no cadence after the first ack")
            self.assertEqual({(c["trip"], c["interval_ms"], c["watched"]) for c in cadences}, {("M1", 30_000, False)},
                             f"at {along} m: {cadences}")

        self.drive_street(self.hub.courier_token, stepped=hidden_and_idle, upto=1300, courier=courier)

        def seen_or_wait(ws, predicate, what):
            if not any(predicate(m) for m in ws.log):
                ws.until(predicate, timeout=15)
            return next(m for m in ws.log if predicate(m))

        seen_or_wait(link, lambda m: m.get("type") == "stop" and m["visible"], "the courier shown to the link")
        watched = seen_or_wait(courier, lambda m: m.get("type") == "cadence" and m["watched"], "the watched cadence")
        self.assertEqual((watched["trip"], watched["interval_ms"]), ("M1", 2000), watched)

    # ---- replays, GET and tokens ----------------------------------------------------------------
    def test_a_replay_carries_only_the_links_own_events(self):
        """`since_event` 0 once the courier has passed a and b: the admin's replay has a's and
        b's events; b's link replays only b's `waypoint_reached` (section 17) and c's none of
        them, neither with a position (section 13) nor any coordinate within 200 m of another stop."""
        self.drive_street(self.hub.courier_token, upto=1700)
        admin = WS(self.hub, self.admin)
        self.clients.append(admin)
        self.assertEqual(admin.request({"op": "subscribe", "trip": "M1", "since_event": 0})["type"], "snapshot")
        admin.request({"op": "ping"})
        whole = [m for m in admin.log if m.get("type") == "event"]
        self.assertEqual({m.get("stop") for m in whole if m["name"] == "waypoint_reached"}, {"a", "b"}, whole)
        for stop, others, own in (("b", ["a", "c"], [("waypoint_reached", "b")]), ("c", ["a", "b"], [])):
            with self.subTest(stop=stop):
                ws = WS(self.hub, self.share(stop=stop, visible_within_stops=1)["token"])
                self.clients.append(ws)
                snap = ws.request({"op": "subscribe", "trip": "M1", "since_event": 0})
                self.assertEqual((snap["type"], snap["recovered"]), ("snapshot", True), snap)
                ws.request({"op": "ping"})
                replay = [m for m in ws.log if m.get("type") == "event"]
                self.assertEqual([(m["name"], m.get("stop")) for m in replay if m["name"] not in SIGNAL_EVENTS], own, replay)
                self.assertTrue(all((m["lat"], m["lon"]) == (None, None) for m in replay), replay)
                self.assertNotIn("Order a", json.dumps(ws.log))
                for m in ws.log:
                    self.assert_clear(m, others, f"{stop}'s replay")

    def test_a_links_get_answers_what_its_snapshot_says(self):
        """PROTOCOL 17: a link's `GET /v1/trips/{id}` answers what its snapshot would. The
        courier stands at 1 200 m (its last fix animated to its end), so nothing moves between
        the two reads: b's link (shown) and c's (hidden) each read both."""
        self.drive_street(self.hub.courier_token, upto=1200)
        self.wait_for("the marker at rest at 1 200 m", lambda: self.marker_rests_at(1200))
        for stop, within, shown in (("b", 1, True), ("c", 0, False)):
            with self.subTest(stop=stop):
                token = self.share(stop=stop, visible_within_stops=within)["token"]
                ws = WS(self.hub, token)
                self.clients.append(ws)
                snap = ws.request({"op": "subscribe", "trip": "M1"})
                status, body = call(self.hub, "GET", "/v1/trips/M1", token)
                self.assertEqual(status, 200, body)
                self.assertEqual(snap["type"], "snapshot", snap)
                self.assertEqual(body["position"] is not None, shown, body)
                wire_only = {"type", "re"}
                self.assertEqual({k: v for k, v in snap.items() if k not in wire_only}, body)

    def marker_rests_at(self, along):
        """The admin sees the marker at `along` m (within 1 m), and again a moment later."""
        first = call(self.hub, "GET", "/v1/trips/M1", self.admin)[1]["position"]
        second = call(self.hub, "GET", "/v1/trips/M1", self.admin)[1]["position"]
        return (first is not None and first == second
                and hubproc.distance_m(first["lat"], first["lon"], *point(along)) < 1)

    def test_a_token_the_shop_signs_itself_gets_the_links_view(self):
        """A `share` token signed elsewhere with the hub's secret (section 17: the shop's own
        backend mints it) works for GET and subscribe, and sees only its stop, as a link the
        hub made would."""
        self.drive_street(self.hub.courier_token, upto=100)
        claims = {"sub": "shop-order-1042", "exp": int(time.time()) + 3600, "scope": ["share"], "trips": ["M1"],
                  "jti": "shop-1042", "stop": "b", "visible_within_stops": 1}
        token = hubproc.mint_token(claims, SECRET)
        whole = call(self.hub, "GET", "/v1/trips/M1", self.admin)[1]
        self.assertEqual([w["id"] for w in whole["waypoints"]], ["a", "b", "c"])
        status, body = call(self.hub, "GET", "/v1/trips/M1", token)
        self.assertEqual(status, 200, body)
        self.assertEqual([w["id"] for w in body["waypoints"]], ["b"], body)
        self.assertEqual((body["stop"]["id"], body["stop"]["stops_before"]), ("b", 1), body)
        self.assertLess(hubproc.distance_m(body["destination"]["lat"], body["destination"]["lon"], *point(STOPS["b"])), 1)
        self.assertEqual((body["rider"], body["trail"], body["battery"]), ({"name": "Alex"}, [], None))
        self.assertIsNotNone(body["position"], "shown: one stop before b, 700 m from a")
        self.assert_clear(body, ["a", "c"], "the shop's token")
        self.assertEqual(call(self.hub, "GET", "/v1/trips/M1/trail", token)[0], 403)
        ws = WS(self.hub, token)
        self.clients.append(ws)
        snap = ws.request({"op": "subscribe", "trip": "M1"})
        self.assertEqual(snap["type"], "snapshot", snap)
        self.assertEqual([w["id"] for w in snap["waypoints"]], ["b"], snap)
        stop = ws.until(lambda m: m.get("type") == "stop")[-1]
        self.assertEqual((stop["stop"], stop["stops_before"], stop["visible"]), ("b", 1, True), stop)
        # Without `visible_within_stops` it counts as 0: one stop before b, the courier is hidden.
        del claims["visible_within_stops"]
        status, body = call(self.hub, "GET", "/v1/trips/M1", hubproc.mint_token(claims, SECRET))
        self.assertEqual(status, 200, body)
        self.assertEqual((body["position"], body["route"], body["stop"]["id"]), (None, None, "b"), body)

    def test_an_expired_links_token_is_refused(self):
        """A link's token past its `exp` (and the 30 s leeway, section 2): GET is 401, the
        WebSocket upgrade with it is refused with 401, and on a connection opened without a
        token its `hello` and then `subscribe` get `unauthorized`. The same claims unexpired work."""
        from websockets.exceptions import InvalidStatus
        from websockets.sync.client import connect

        claims = {"exp": int(time.time()) - 120, "scope": ["share"], "trips": ["M1"], "jti": "late-1", "stop": "b"}
        expired = hubproc.mint_token(claims, SECRET)
        fresh = hubproc.mint_token(dict(claims, exp=int(time.time()) + 3600), SECRET)
        self.assertEqual(call(self.hub, "GET", "/v1/trips/M1", fresh)[0], 200)
        status, body = call(self.hub, "GET", "/v1/trips/M1", expired)
        self.assertEqual(status, 401, body)
        self.assertEqual(body["error"]["code"], "unauthorized", body)
        with self.assertRaises(InvalidStatus) as refused:
            connect(f"{self.hub.ws_url}?token={expired}", subprotocols=[SUBPROTOCOL], open_timeout=10).close()
        self.assertEqual(refused.exception.response.status_code, 401)
        ws = WS.__new__(WS)
        ws.ws, ws.next_id, ws.log = connect(self.hub.ws_url, subprotocols=[SUBPROTOCOL], open_timeout=10), 1, []
        self.clients.append(ws)
        hello = ws.request({"op": "hello", "token": expired})
        self.assertEqual((hello["type"], hello.get("code")), ("error", "unauthorized"), hello)
        refusal = ws.request({"op": "subscribe", "trip": "M1"})
        self.assertEqual((refusal["type"], refusal.get("code")), ("error", "unauthorized"), refusal)
        self.assertEqual(ws.request({"op": "hello", "token": fresh})["type"], "welcome")
        self.assertEqual(ws.request({"op": "subscribe", "trip": "M1"})["type"], "snapshot")


class Link:
    """A customer's page on a link for one stop: a WebSocket with the link's token that keeps
    every message it receives (`ws.log`), read as it comes (`drain`) so nothing waits unread."""

    def __init__(self, hub, token, stop, mode="frames", visible_within=0, trip="M1"):
        self.ws = WS(hub, token)
        self.stop, self.mode, self.visible_within, self.trip = stop, mode, visible_within, trip

    def subscribe(self):
        return self.ws.request({"op": "subscribe", "trip": self.trip, "mode": self.mode})

    def drain(self):
        """Reads everything the hub sent before now: its pong comes after all of it."""
        self.ws.request({"op": "ping"})

    def wait_end(self, timeout=20):
        """Waits for its `unsubscribed` (unless it came already), then reads what is left."""
        if not any(m.get("type") == "unsubscribed" for m in self.ws.log):
            self.ws.until(lambda m: m.get("type") == "unsubscribed", timeout)
        self.drain()

    def mark(self):
        return len(self.ws.log)

    def messages(self, since=0, until=None):
        """What the hub sent it (from log position `since` to `until`), in order, without the
        pongs of `drain`."""
        return [m for m in self.ws.log[since:until] if m.get("type") != "pong"]

    def close(self):
        self.ws.close()

    def __repr__(self):
        return f"link for {self.stop} ({self.mode})"


class LiveLinkCase(StreetDriving, unittest.TestCase):
    """Driving a trip along the street and reading what its stop links received."""

    hub = None
    admin = None

    def tearDown(self):
        for c in getattr(self, "clients", []):
            c.close()

    def link(self, token, stop, mode="frames", visible_within=0, hub=None):
        link = Link(hub or self.hub, token, stop, mode, visible_within)
        self.clients.append(link)
        return link

    def trip_state(self):
        return call(self.hub, "GET", "/v1/trips/M1", self.admin)[1]

    def marker_at(self, along):
        """The trip's marker is at `along` metres (within 1 m), as the admin sees it."""
        body = self.trip_state()
        position = body.get("position")
        return position is not None and hubproc.distance_m(position["lat"], position["lon"], *point(along)) < 1

    def drive_whole_trip(self, links, courier_token):
        """Fixes every 100 m up the street (each one animated to its end before the next), the
        courier standing at each stop until the hub holds there, then `proceed`; to arrival.
        The links are read after every step."""
        def drain(_along):
            for link in links:
                link.drain()
        self.drive_street(courier_token, battery=55, holding=drain, stepped=drain,
                          fixed=lambda along: self.wait_for(f"the marker at {along} m", lambda: self.marker_at(along)))
        self.wait_for("arrival", lambda: self.trip_state()["status"] == "arrived")
        for link in links:
            link.wait_end()

    # ---- what a link received ----------------------------------------------------------------
    def assert_clear_of(self, messages, others, what):
        """No coordinate anywhere in `messages` within 200 m (great circle) of the stops `others`."""
        for m in messages:
            for lat, lon in coordinates(m):
                for name, along in others.items():
                    d = hubproc.distance_m(lat, lon, *point(along))
                    self.assertGreater(d, RADIUS_M, f"{what}: ({lat}, {lon}) is {d:.0f} m from stop {name}: {json.dumps(m)}")

    def walk(self, link, messages, allowed_up=False):
        """Checks the order rules on `messages` and returns what it saw: the `stop` messages'
        (stops_before, visible) in order, and the index of each frame and segment.

        * a `stop` message right after each snapshot, for the link's stop, with the snapshot's
          `stop.stops_before`; the snapshot's position only while the courier is shown;
        * `stops_before` never goes up (unless `allowed_up`: a new route may add stops);
        * no frame or segment unless the last `stop` message said `visible: true`, and
          `visible` only while `stops_before` <= `visible_within_stops`;
        * an event's `lat`/`lon` null while the courier is hidden;
        * nothing after `unsubscribed`."""
        seen = []
        visible = False
        stops_before = None
        ended = None
        for i, m in enumerate(messages):
            kind = m.get("type")
            self.assertIsNone(ended, f"{link}: {m} after {ended}")
            if kind == "snapshot":
                self.assertLess(i + 1, len(messages), f"{link}: no stop message after the last snapshot")
                after = messages[i + 1]
                self.assertEqual(after.get("type"), "stop", f"{link}: {after} right after a snapshot")
                self.assertEqual(after["stops_before"], m["stop"]["stops_before"], f"{link}: {after} after {m['stop']}")
                self.assertEqual(m["position"] is not None, after["visible"], f"{link}: snapshot position {m['position']} with {after}")
            elif kind == "stop":
                self.assertEqual((m["trip"], m["stop"]), ("M1", link.stop), m)
                if stops_before is not None and not allowed_up:
                    self.assertLessEqual(m["stops_before"], stops_before, f"{link}: stops_before went up: {m}")
                stops_before, visible = m["stops_before"], m["visible"]
                if visible:
                    self.assertLessEqual(stops_before, link.visible_within, f"{link}: shown too early: {m}")
                seen.append((stops_before, visible, m["eta_s"]))
            elif kind in ("frame", "segment"):
                self.assertTrue(visible, f"{link}: a {kind} while hidden: {m}")
            elif kind == "event":
                if not visible:
                    self.assertEqual((m["lat"], m["lon"]), (None, None), f"{link}: an event's position while hidden: {m}")
            elif kind == "unsubscribed":
                ended = m
        return seen

    def assert_whole_trip(self, link, others, countdown, visibility):
        """Everything `link` received over the whole trip (`others`: the other stops)."""
        messages = link.messages()
        own_point = point(STOPS.get(link.stop, LENGTH_M))
        self.assert_clear_of(messages, others, str(link))
        self.assertEqual([v for v in values_of(messages, "battery") if v is not None], [], f"{link}: a battery value")
        self.assertNotIn("rider-42", json.dumps(messages))
        stop_messages = self.walk(link, messages)
        self.assertEqual(compressed([sb for sb, _, _ in stop_messages]), countdown, f"{link}: {stop_messages}")
        self.assertEqual(compressed([vis for _, vis, _ in stop_messages]), visibility, f"{link}: {stop_messages}")
        self.assertTrue(any(not vis and eta is not None for _, vis, eta in stop_messages),
                        f"{link}: an ETA while the courier is hidden: {stop_messages}")
        shown = [m for m in messages if m.get("type") in ("frame", "segment")]
        self.assertTrue(shown, f"{link}: no {link.mode} at all")
        self.assertTrue(all(m["type"] == ("frame" if link.mode == "frames" else "segment") for m in shown), link)
        # Its own events only; its own stop's once.
        own_name = "arrived" if link.stop == "destination" else "waypoint_reached"
        events = [m for m in messages if m.get("type") == "event"]
        for e in events:
            self.assertTrue(e["name"] in SIGNAL_EVENTS or (e["name"] == own_name and e.get("stop", link.stop) in (link.stop, None)),
                            f"{link}: another's event {e}")
        own = [i for i, m in enumerate(messages) if m.get("type") == "event" and m["name"] == own_name]
        self.assertEqual(len(own), 1, f"{link}: {events}")
        if own_name == "waypoint_reached":
            self.assertEqual(messages[own[0]]["stop"], link.stop)
        # The end at its stop: the event, the last frame (segment) there, `unsubscribed` arrived, nothing after.
        self.assertEqual((messages[-1]["type"], messages[-1].get("reason")), ("unsubscribed", "arrived"), f"{link}: {messages[-3:]}")
        between = messages[own[0] + 1:-1]
        self.assertTrue(all(m["type"] in ("frame", "segment", "stop") for m in between), f"{link}: {between}")
        last = shown[-1]
        lat, lon = (last["lat"], last["lon"]) if last["type"] == "frame" else (last["path"][-1][1], last["path"][-1][0])
        # "There" is where the marker came to rest for the stop: a stop is reached within the
        # arrival buffer (50 m, PROTOCOL 6.6), and the link ends after the last frame of that
        # animation (which, when fixes come faster than the marker, may rest short of the point).
        self.assertLess(hubproc.distance_m(lat, lon, *own_point), 50, f"{link}: the last {last['type']} is not at its stop: {last}")
        return messages


@unittest.skipIf(hubproc.trackhub_binary() is None, hubproc.SKIP_MESSAGE)
class LiveStopLinkTest(LiveLinkCase):
    def setUp(self):
        self.hub = HubUnderTest(SECRET)
        self.addCleanup(self.hub.close)
        self.clients = []
        self.hub.create_trip("M1", street(), rider={"id": "rider-42", "name": "Alex"}, waypoints=stop_waypoints())
        self.admin = self.hub.admin_token

    def share(self, **body):
        status, doc = call(self.hub, "POST", "/v1/trips/M1/share", self.admin, body)
        self.assertEqual(status, 201, doc)
        return doc["token"]

    def test_a_whole_trip_on_links_for_b_and_the_destination_in_frames_and_segments(self):
        b_token = self.share(stop="b", visible_within_stops=1)
        dest_token = self.share(stop="destination")
        links = [self.link(b_token, "b", mode, 1) for mode in ("frames", "segments")]
        links += [self.link(dest_token, "destination", mode, 0) for mode in ("frames", "segments")]
        for link in links:
            snap = link.subscribe()
            self.assertEqual(snap["type"], "snapshot", snap)
        self.drive_whole_trip(links, self.hub.courier_token)
        for link in links:
            with self.subTest(link=str(link)):
                if link.stop == "b":
                    # Shown from the first fix (1 stop before b), hidden within 200 m of a
                    # (600-1 000 m, its hold there included), shown again up to b.
                    self.assert_whole_trip(link, {"a": 800, "c": 2400}, countdown=[1, 0], visibility=[False, True, False, True])
                else:
                    # Hidden until no stop is left before it and the courier is 200 m past c.
                    self.assert_whole_trip(link, STOPS, countdown=[3, 2, 1, 0], visibility=[False, True])
        # After its stop: a snapshot without the courier, one `stop` message, nothing else but
        # (section 13) the `unsubscribed` of an arrived link.
        again = links[0]
        mark = again.mark()
        snap = again.subscribe()
        again.drain()
        after = again.messages(mark)
        self.assertEqual((snap["position"], snap["bearing"], snap["route"]), (None, None, None), snap)
        rest = after[after.index(snap) + 1:]
        self.assertEqual([m["type"] for m in rest if m["type"] == "stop"], ["stop"], rest)
        self.assertEqual(rest[0]["type"], "stop", rest)
        self.assertTrue(all(m["type"] == "stop" or (m["type"], m.get("reason")) == ("unsubscribed", "arrived") for m in rest), rest)
        self.assert_clear_of(after, {"a": 800, "c": 2400}, "after the end")

    def test_a_new_route_that_keeps_the_stop_then_one_that_drops_it(self):
        link = self.link(self.share(stop="b", visible_within_stops=5), "b", "segments", 5)
        frames = self.link(self.share(stop="b", visible_within_stops=5), "b", "frames", 5)
        links = [link, frames]
        for each in links:
            each.subscribe()
        courier = WS(self.hub, self.hub.courier_token)
        self.clients.append(courier)
        ts = int(time.time() * 1000) - 600_000
        for i, along in enumerate((0, 100, 200, 300)):
            ack = courier.request({"op": "fix", "trip": "M1", "lat": point(along)[0], "lon": point(along)[1],
                                   "ts": ts + i * 10_000, "seq": i + 1, "duration_ms": 200})
            self.assertEqual(ack["type"], "ack", ack)
            self.wait_for(f"the marker at {along} m", lambda: self.marker_at(along))
        for each in links:
            each.drain()
        marks = [each.mark() for each in links]
        # Keep b (same id, moved to 1 700 m) and c; a is dropped: b's links follow the moved b.
        moved = point(1700)
        keep = {"route": street(), "waypoints": [{"lat": moved[0], "lon": moved[1], "id": "b"},
                                                 {"lat": point(2400)[0], "lon": point(2400)[1], "id": "c"}]}
        status, doc = call(self.hub, "PUT", "/v1/trips/M1/route", self.admin, keep)
        self.assertEqual(status, 200, doc)
        for each in links:
            each.ws.until(lambda m: m.get("type") == "stop")  # the new snapshot's
            each.drain()
        kept_marks = [each.mark() for each in links]
        # Drop b: its links end.
        drop = {"route": street(), "waypoints": [{"lat": point(2400)[0], "lon": point(2400)[1], "id": "c"}]}
        status, doc = call(self.hub, "PUT", "/v1/trips/M1/route", self.admin, drop)
        self.assertEqual(status, 200, doc)
        for each in links:
            end = each.ws.until(lambda m: m.get("type") == "unsubscribed")[-1]
            self.assertEqual((end["trip"], end["reason"]), ("M1", "stop_removed"))
            each.drain()
        for each, before, kept in zip(links, marks, kept_marks):
            with self.subTest(link=str(each)):
                everything = each.messages()
                self.walk(each, everything, allowed_up=True)
                self.assert_clear_of(each.messages(0, before), {"a": 800, "c": 2400}, f"{each} before the new route")
                new_route = each.messages(before, kept)
                self.assert_clear_of(new_route, {"c": 2400}, f"{each} on the new route")
                snaps = [m for m in new_route if m.get("type") == "snapshot"]
                self.assertEqual(len(snaps), 1, new_route)
                self.assertEqual([w["id"] for w in snaps[0]["waypoints"]], ["b"])
                self.assertLess(hubproc.distance_m(snaps[0]["destination"]["lat"], snaps[0]["destination"]["lon"], *moved), 1)
                self.assertEqual(snaps[0]["stop"]["stops_before"], 0)
                self.assertNotIn("rerouted", [m.get("name") for m in everything if m.get("type") == "event"])
                tail = each.messages(kept)
                self.assertEqual((tail[-1]["type"], tail[-1]["reason"]), ("unsubscribed", "stop_removed"), tail)
                self.assert_clear_of(tail, {"c": 2400}, f"{each} at the end")


@unittest.skipIf(hubproc.trackhub_binary() is None, hubproc.SKIP_MESSAGE)
@unittest.skipIf(redis_server_path() is None, "redis-server is not installed: the cluster part needs Redis 7")
class ClusterStopLinkTest(LiveLinkCase):
    """Three hubs on one Redis (as tests-py/test_cluster.py starts them), secured with one
    secret: a link's token works on each, and each sends it the same `stop` messages and events."""

    def setUp(self):
        self.redis, self.hubs = start_cluster(self, prefix="trackhub-stop-links-cluster-", start_hub=self.secured_hub)
        self.hub = self.hubs["A"]
        self.admin = self.hub.admin_token
        self.clients = []
        for name, hub in self.hubs.items():
            self.wait_for(f"hub {name} healthy", lambda hub=hub: call(hub, "GET", "/healthz")[0] == 200, timeout=30)
        self.hub.create_trip("M1", street(), rider={"id": "rider-42", "name": "Alex"}, waypoints=stop_waypoints())

    def secured_hub(self, redis_url):
        hub = HubUnderTest(SECRET, serve_args=["--cluster", redis_url, "--tick-hz", "10", "--log-level", "warn"])
        self.addCleanup(hub.close)
        return hub

    def test_three_hubs_send_a_link_the_same_stop_messages_and_events(self):
        status, doc = call(self.hub, "POST", "/v1/trips/M1/share", self.admin, {"stop": "b", "visible_within_stops": 1})
        self.assertEqual(status, 201, doc)
        links = {name: self.link(doc["token"], "b", "frames", 1, hub=hub) for name, hub in self.hubs.items()}
        for name, link in links.items():
            snap = link.subscribe()
            self.assertEqual(snap["type"], "snapshot", f"{name}: {snap}")
        self.drive_whole_trip(list(links.values()), self.hub.courier_token)
        transitions = {}
        events = {}
        for name, link in links.items():
            stops = [(m["stops_before"], m["visible"], m["eta_s"]) for m in link.messages() if m.get("type") == "stop"]
            # Where (stops_before, visible) changes: the messages every hub must send alike.
            transitions[name] = [s for k, s in enumerate(stops) if k == 0 or s[:2] != stops[k - 1][:2]]
            events[name] = [m for m in link.messages() if m.get("type") == "event"]
        for name, link in links.items():
            with self.subTest(hub=name):
                self.assert_whole_trip(link, {"a": 800, "c": 2400}, countdown=[1, 0], visibility=[False, True, False, True])
        for name in "BC":
            self.assertEqual([t[:2] for t in transitions[name]], [t[:2] for t in transitions["A"]], name)
            for mine, theirs in zip(transitions[name], transitions["A"]):
                if mine[2] is None or theirs[2] is None:
                    self.assertEqual(mine[2], theirs[2], (name, mine, theirs))
                else:
                    self.assertLessEqual(abs(mine[2] - theirs[2]), ETA_TOLERANCE_S, (name, mine, theirs))
            self.assertEqual(events[name], events["A"], name)

    def watched_sets(self):
        """Every hub's watched trips as published in Redis (`trackhub:watched:<node>`: a version
        line, then a trip id a line; PROTOCOL 18's exchange)."""
        with self.redis.client() as r:
            keys = r.call("KEYS", "trackhub:watched:*") or []
            return [set(t.decode() for t in (r.call("GET", k) or b"").split(b"\n")[1:] if t) for k in keys]

    def test_a_link_hidden_on_another_hub_does_not_make_the_trip_watched(self):
        """PROTOCOL 18 in cluster mode: b's link (shown from 0 stops before b) on hub B is the
        trip's only subscriber and its courier is on A. While the courier is hidden from the
        link, B publishes M1 as watched nowhere (read after B published a later subscription,
        a viewer of M2) and the courier hears only the idle interval; once it is shown, A tells
        the courier the watched one."""
        self.hub.create_trip("M2", street())
        status, doc = call(self.hub, "POST", "/v1/trips/M1/share", self.admin, {"stop": "b"})
        self.assertEqual(status, 201, doc)
        link = self.link(doc["token"], "b", hub=self.hubs["B"])
        self.assertEqual(link.subscribe()["type"], "snapshot")
        courier = WS(self.hub, self.hub.courier_token)
        self.clients.append(courier)
        self.drive_street(self.hub.courier_token, upto=900, courier=courier)
        probe = self.link(self.hub.admin_token, "whole trip", hub=self.hubs["B"])
        self.assertEqual(probe.ws.request({"op": "subscribe", "trip": "M2"})["type"], "snapshot")
        # B publishes its whole set at once: once M2 is in it, M1's hidden link was counted too.
        def published_with_m2():
            got = self.watched_sets()
            return got if any("M2" in w for w in got) else None
        sets = self.wait_for("B's viewer of M2 published", published_with_m2)
        self.assertFalse(any("M1" in w for w in sets), f"M1 published as watched while its only link sees nothing: {sets}")
        link.drain()
        self.assertFalse([m for m in link.messages() if m.get("type") == "stop"][-1]["visible"], link.messages()[-3:])
        courier.request({"op": "ping"})
        cadences = [(m["interval_ms"], m["watched"]) for m in courier.log if m.get("type") == "cadence" and m["trip"] == "M1"]
        self.assertTrue(cadences, "no cadence after the first ack")
        self.assertEqual(set(cadences), {(30_000, False)}, cadences)

        for i, along in enumerate((1000, 1100, 1200, 1300)):
            lat, lon = point(along)
            fix = {"op": "fix", "trip": "M1", "lat": lat, "lon": lon, "ts": int(time.time() * 1000) - 60_000 + i * 10_000,
                   "seq": 100 + i, "duration_ms": 200}
            self.assertEqual(courier.request(fix)["type"], "ack")
        link.ws.until(lambda m: m.get("type") == "stop" and m["visible"], timeout=15)
        if not any(m.get("type") == "cadence" and m["watched"] for m in courier.log):
            courier.until(lambda m: m.get("type") == "cadence" and m["watched"], timeout=15)
        watched = next(m for m in courier.log if m.get("type") == "cadence" and m["watched"])
        self.assertEqual((watched["trip"], watched["interval_ms"]), ("M1", 2000), watched)

    def test_a_link_revoked_on_one_hub_ends_on_the_others(self):
        """`DELETE /v1/shares/{jti}` on A: the link's subscriptions on B and C end with
        `unsubscribed {reason: "revoked"}` and its token is refused (401) on every hub."""
        status, doc = call(self.hub, "POST", "/v1/trips/M1/share", self.admin, {"stop": "b", "visible_within_stops": 1})
        self.assertEqual(status, 201, doc)
        links = {name: self.link(doc["token"], "b", hub=self.hubs[name]) for name in "BC"}
        for name, link in links.items():
            self.assertEqual(link.subscribe()["type"], "snapshot", name)
        status, _ = call(self.hub, "DELETE", f"/v1/shares/{doc['jti']}", self.admin)
        self.assertEqual(status, 200)
        for name, link in links.items():
            end = link.ws.until(lambda m: m.get("type") == "unsubscribed")[-1]
            self.assertEqual((end["trip"], end["reason"]), ("M1", "revoked"), name)
        for name, hub in self.hubs.items():
            self.wait_for(f"the token refused on {name}", lambda hub=hub: call(hub, "GET", "/v1/trips/M1", doc["token"])[0] == 401)


if __name__ == "__main__":
    unittest.main()
