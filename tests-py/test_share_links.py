"""Share links (PROTOCOL 13) against the release hub: the security matrix of the `share`
scope (not other trips, not the trail, not the fleet, nothing after arrival), revocation
that holds across a restart, expiry, the open hub's refusal, and eta_s after the end (6.9).

Run:  cd tests-py && TRACKHUB_BIN=/path/to/.build/release python3 -m unittest test_share_links -v

Everything waits for a message or an answer with a deadline; nothing sleeps to synchronise.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import hubproc  # noqa: E402
from browser.hubs import SUBPROTOCOL, HubUnderTest  # noqa: E402

SECRET = "share-links-e2e-secret-at-least-32-bytes"
# A 200 m street in Lisbon, due north: a fix at 180 m arrives (default buffer 50 m).
LAT0, LON0 = 38.7000, -9.1400
M_PER_DEG = 6371008.8 * math.pi / 180
ROUTE = [[LON0, LAT0], [LON0, LAT0 + 200 / M_PER_DEG]]
DEST_LAT = LAT0 + 200 / M_PER_DEG


class WS:
    """A synchronous WebSocket client that keeps what it received."""

    def __init__(self, hub, token):
        from websockets.sync.client import connect
        self.ws = connect(f"{hub.ws_url}?token={token}", subprotocols=[SUBPROTOCOL], open_timeout=10)
        self.next_id = 1
        self.log = []

    def recv(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out; received so far: {self.log[-10:]}")
        msg = json.loads(self.ws.recv(timeout=left))
        self.log.append(msg)
        return msg

    def request(self, msg, timeout=10):
        rid = self.next_id
        self.next_id += 1
        self.ws.send(json.dumps(dict(msg, id=rid)))
        deadline = time.monotonic() + timeout
        while True:
            reply = self.recv(deadline)
            if reply.get("re") == rid:
                return reply

    def until(self, predicate, timeout=15):
        """Messages from now up to and including the first for which `predicate` holds."""
        deadline = time.monotonic() + timeout
        got = []
        while True:
            msg = self.recv(deadline)
            got.append(msg)
            if predicate(msg):
                return got

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass


def call(hub, method, path, token=None, body=None):
    """(status, JSON body) of one request."""
    headers = {"Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(hub.base_url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, json.loads(raw) if raw else None


@unittest.skipIf(hubproc.trackhub_binary() is None, hubproc.SKIP_MESSAGE)
class ShareLinkTest(unittest.TestCase):
    def setUp(self):
        self.hub = HubUnderTest(SECRET)
        self.clients = []
        for trip in ("S1", "S2"):
            self.hub.create_trip(trip, ROUTE, rider={"id": "rider-42", "name": "Alex", "phone": "+351 900"})
        self.admin = self.hub.admin_token

    def tearDown(self):
        for c in self.clients:
            c.close()
        self.hub.close()

    def ws(self, token):
        c = WS(self.hub, token)
        self.clients.append(c)
        return c

    def share(self, trip="S1", **body):
        status, doc = call(self.hub, "POST", f"/v1/trips/{trip}/share", self.admin, body)
        self.assertEqual(status, 201, doc)
        self.assertEqual(doc["url"], "/t/" + doc["token"])
        return doc

    def drive_to_arrival(self, trip):
        courier = self.ws(self.hub.courier_token)
        ts = int(time.time() * 1000) - 60_000
        self.assertEqual(courier.request({"op": "fix", "trip": trip, "lat": LAT0, "lon": LON0, "ts": ts, "seq": 1})["type"], "ack")
        ack = courier.request({"op": "fix", "trip": trip, "lat": LAT0 + 180 / M_PER_DEG, "lon": LON0, "ts": ts + 10_000,
                               "seq": 2, "duration_ms": 1500})
        self.assertEqual(ack["type"], "ack")

    # ---- the matrix -----------------------------------------------------------------------
    def test_share_scope_matrix(self):
        link = self.share()
        token = link["token"]
        # Its trip, as a customer sees it: the rider's name only, no trail, no config.
        status, trip = call(self.hub, "GET", "/v1/trips/S1", token)
        self.assertEqual(status, 200)
        self.assertEqual(trip["rider"], {"name": "Alex"})
        self.assertEqual(trip["trail"], [])
        self.assertIsNone(trip["config"])
        self.assertNotIn("rider-42", json.dumps(trip))
        # Not another trip, not the trail, not the fleet, no command.
        refused = [
            ("GET", "/v1/trips/S2", None), ("GET", "/v1/trips/S1/trail", None), ("GET", "/v1/trips/S1/trail?format=gpx", None),
            ("GET", "/v1/fleet/clusters?zoom=3", None),
            ("POST", "/v1/trips/S1/fixes", {"fixes": [{"lat": LAT0, "lon": LON0, "ts": int(time.time() * 1000)}]}),
            ("POST", "/v1/trips/S1/proceed", None), ("DELETE", "/v1/trips/S1", None),
            ("PUT", "/v1/trips/S1/route", {"route": ROUTE[::-1]}), ("POST", "/v1/trips", {"route": ROUTE}),
            ("POST", "/v1/trips/S1/share", {}), ("DELETE", f"/v1/shares/{link['jti']}", None), ("GET", "/v1/devices", None),
        ]
        for method, path, body in refused:
            status, doc = call(self.hub, method, path, token, body)
            self.assertEqual(status, 403, f"{method} {path}: {doc}")
            self.assertEqual(doc["error"]["code"], "forbidden")
        status, listing = call(self.hub, "GET", "/v1/trips", token)
        self.assertEqual([t["trip"] for t in listing["trips"]], ["S1"])
        self.assertEqual(listing["trips"][0]["rider"], {"name": "Alex"})

        customer = self.ws(token)
        snap = customer.request({"op": "subscribe", "trip": "S1"})
        self.assertEqual((snap["type"], snap["rider"], snap["trail"], snap["config"]), ("snapshot", {"name": "Alex"}, [], None))
        for msg in ({"op": "subscribe", "trip": "S2"}, {"op": "viewport", "bbox": [-10, 38, -9, 39], "zoom": 10},
                    {"op": "fix", "trip": "S1", "lat": LAT0, "lon": LON0, "ts": int(time.time() * 1000)},
                    {"op": "proceed", "trip": "S1"}):
            reply = customer.request(msg)
            self.assertEqual((reply["type"], reply.get("code")), ("error", "forbidden"), f"{msg}: {reply}")
        self.assertEqual(customer.request({"op": "ping"})["type"], "pong")

    def test_nothing_after_arrival(self):
        token = self.share()["token"]
        customer = self.ws(token)
        customer.request({"op": "subscribe", "trip": "S1"})
        viewer = self.ws(self.hub.token(["viewer"], ["S1"]))
        viewer.request({"op": "subscribe", "trip": "S1"})
        self.drive_to_arrival("S1")
        got = customer.until(lambda m: m.get("type") == "unsubscribed")
        self.assertEqual((got[-1]["trip"], got[-1]["reason"]), ("S1", "arrived"))
        names = [m.get("name") for m in got if m.get("type") == "event"]
        self.assertIn("arrived", names)
        frames = [m for m in got if m.get("type") == "frame"]
        self.assertTrue(frames, got)
        self.assertLess(abs(frames[-1]["lat"] - DEST_LAT), 1e-6, frames[-1])
        self.assertEqual((frames[-1]["remaining_m"], frames[-1]["eta_s"], frames[-1]["status"]), (0, 0, "arrived"))
        # From then on: the status, no position, no bearing, no trail, over HTTP and WebSocket.
        status, trip = call(self.hub, "GET", "/v1/trips/S1", token)
        self.assertEqual((status, trip["status"], trip["position"], trip["bearing"], trip["trail"]), (200, "arrived", None, None, []))
        again = customer.request({"op": "subscribe", "trip": "S1"})
        self.assertEqual((again["type"], again["position"], again["bearing"]), ("snapshot", None, None))
        end = customer.until(lambda m: m.get("type") == "unsubscribed")[-1]
        self.assertEqual(end["reason"], "arrived")
        # The viewer is not cut off, and sees where the marker is; eta_s is 0 once arrived (6.9).
        status, whole = call(self.hub, "GET", "/v1/trips/S1", self.admin)
        self.assertEqual((whole["status"], whole["eta_s"]), ("arrived", 0))
        self.assertIsNotNone(whole["position"])
        self.assertEqual(viewer.request({"op": "ping"})["type"], "pong")
        self.assertFalse([m for m in viewer.log if m.get("type") == "unsubscribed"])

    def test_eta_is_null_once_a_trip_ended_without_arriving(self):
        courier = self.ws(self.hub.courier_token)
        ts = int(time.time() * 1000) - 60_000
        courier.request({"op": "fix", "trip": "S2", "lat": LAT0, "lon": LON0, "ts": ts, "seq": 1})
        courier.request({"op": "fix", "trip": "S2", "lat": LAT0 + 60 / M_PER_DEG, "lon": LON0, "ts": ts + 10_000, "seq": 2})
        status, moving = call(self.hub, "GET", "/v1/trips/S2", self.admin)
        self.assertIsNotNone(moving["eta_s"], moving)
        status, ended = call(self.hub, "DELETE", "/v1/trips/S2", self.admin)
        self.assertEqual((status, ended["status"], ended["eta_s"]), (200, "ended", None))
        status, again = call(self.hub, "GET", "/v1/trips/S2", self.admin)
        self.assertEqual((again["status"], again["eta_s"]), ("ended", None))

    # ---- revocation and expiry -------------------------------------------------------------
    def test_revoked_link_stops_at_once_and_is_refused_across_a_restart(self):
        link = self.share()
        keep = self.share()
        customer = self.ws(link["token"])
        customer.request({"op": "subscribe", "trip": "S1"})
        status, doc = call(self.hub, "DELETE", f"/v1/shares/{link['jti']}", self.admin)
        self.assertEqual((status, doc), (200, {"jti": link["jti"], "revoked": True}))
        end = customer.until(lambda m: m.get("type") == "unsubscribed")[-1]
        self.assertEqual((end["trip"], end["reason"]), ("S1", "revoked"))
        # The connection stays open; an op needing the token is unauthorized.
        self.assertEqual(customer.request({"op": "ping"})["type"], "pong")
        self.assertEqual(customer.request({"op": "subscribe", "trip": "S1"}).get("code"), "unauthorized")
        status, doc = call(self.hub, "GET", "/v1/trips/S1", link["token"])
        self.assertEqual(status, 401)
        self.assertIn("revoked", doc["error"]["message"])
        self.assertEqual(call(self.hub, "DELETE", "/v1/shares/not-a-link", self.admin)[0], 404)

        customer.close()
        self.hub.stop()
        self.hub.start()
        status, doc = call(self.hub, "GET", "/v1/trips/S1", link["token"])
        self.assertEqual(status, 401, "a revoked link works again after a restart")
        self.assertEqual(call(self.hub, "GET", "/v1/trips/S1", keep["token"])[0], 200)
        self.assertEqual(call(self.hub, "DELETE", f"/v1/shares/{link['jti']}", self.admin)[0], 200)

    def test_expired_share_token_is_refused(self):
        now = int(time.time())
        expired = hubproc.mint_token({"scope": ["share"], "trips": ["S1"], "jti": "old-link", "exp": now - 120}, SECRET)
        status, doc = call(self.hub, "GET", "/v1/trips/S1", expired)
        self.assertEqual(status, 401)
        self.assertIn("expired", doc["error"]["message"])
        status, _ = call(self.hub, "POST", "/v1/trips/S1/share", self.admin, {"ttl_s": 30 * 86400 + 1})
        self.assertEqual(status, 400)


@unittest.skipIf(hubproc.trackhub_binary() is None, hubproc.SKIP_MESSAGE)
class OpenHubShareTest(unittest.TestCase):
    def test_an_open_hub_refuses_to_issue_links_and_says_why(self):
        hub = HubUnderTest(None)
        try:
            hub.create_trip("O1", ROUTE)
            status, doc = call(hub, "POST", "/v1/trips/O1/share", None, {})
            self.assertEqual(status, 409)
            self.assertIn("--jwt-secret", doc["error"]["message"])
        finally:
            hub.close()


if __name__ == "__main__":
    unittest.main()
