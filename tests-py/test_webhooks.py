"""PROTOCOL 12, webhooks, against the release hub and real HTTP receivers (Python's
http.server on loopback, an ephemeral port, started by each test).

- Signatures verify with the receiver's own HMAC (Standard Webhooks), the body is
  {type, timestamp, data} with data the event message without type.
- A receiver answering 500 then 200 gets every event accepted once, in n order per trip.
- A receiver that hangs delays nobody: fixes are acked, frames reach a subscriber, and a
  second URL gets every event while the first still holds its request.
- SIGKILL with deliveries pending loses none: after a restart every event is accepted, with
  the same webhook-id as before.
- Cluster mode (three hubs on one Redis): each event is delivered by one node, and none is
  lost when the delivering node is killed.
- A stop's `trip.waypoint_reached` and `trip.waypoint_resumed` carry its `stop` and
  `stop_name` (PROTOCOL 17), null for a stop without a name.

No sleeps to synchronise: every wait has a deadline and ends on a request or a message.
Retries are made quick with --webhook-retry-base (the doubling and the 5 min cap stay).
"""

import asyncio
import datetime
import json
import os
import re
import shutil
import signal
import tempfile
import unittest
import urllib.request

import hubproc
from hubproc import Client, Courier, HubProcess
from webhook_receiver import Receiver, expected_signature, key_of

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
ROUTE = [[-9.1420, 38.7158], [-9.1360, 38.7180], [-9.1300, 38.7200]]
ROUTE2 = [[-9.1420, 38.7158], [-9.1380, 38.7190], [-9.1300, 38.7200]]


def setUpModule():
    hubproc.require_binary()


def metrics(hub):
    status, _, raw = hub.http("GET", "/metrics")
    assert status == 200
    return raw.decode()


def metric(text, name, **labels):
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    prefix = f"{name}{{{want}}} " if labels else f"{name} "
    for line in text.splitlines():
        if line.startswith(prefix):
            return float(line.rsplit(" ", 1)[1])
    return None


def make_events(hub, trip, reroutes):
    """trip_created (n 1), `reroutes` rerouted (n 2 ...), ended: reroutes + 2 events."""
    hub.create_trip(id=trip, route=ROUTE)
    for i in range(reroutes):
        status, _, raw = hub.http("PUT", f"/v1/trips/{trip}/route", {"route": ROUTE2 if i % 2 == 0 else ROUTE})
        assert status == 200, raw
    status, _, raw = hub.http("DELETE", f"/v1/trips/{trip}")
    assert status == 200, raw
    return reroutes + 2


class WebhookHubCase(unittest.TestCase):
    def setUp(self):
        self.receivers = []
        self.hubs = []

    def tearDown(self):
        for hub in self.hubs:
            hub.kill()
        for r in self.receivers:
            r.close()

    def receiver(self, answer=None):
        r = Receiver(answer)
        self.receivers.append(r)
        return r

    def hub(self, *urls, extra=(), data=None):
        args = ["--webhook-secret", SECRET, "--webhook-retry-base", "20ms", *extra]
        for url in urls:
            args += ["--webhook", url]
        if data is not None:
            args += ["--data", data]
        hub = HubProcess(*args).start()
        self.hubs.append(hub)
        return hub


class TestWebhookPayloadAndSignature(WebhookHubCase):
    def test_signatures_verify_with_the_receivers_own_hmac(self):
        r = self.receiver()
        hub = self.hub(r.url)
        make_events(hub, "sig-1", reroutes=1)
        r.wait_until(lambda r: len(r.accepted()) >= 3, what="3 events")
        key = key_of(SECRET)
        for req in r.accepted():
            self.assertEqual(req["sig"], expected_signature(key, req), req["id"])
            self.assertEqual(req["type"], "application/json")
            self.assertRegex(req["ts"], r"^\d+$")
            doc = req["doc"]
            self.assertEqual(set(doc), {"type", "timestamp", "data"})
            data = doc["data"]
            self.assertNotIn("type", data)
            self.assertEqual(req["id"], f"{data['trip']}:{data['n']}")
            self.assertEqual(doc["type"], "trip." + data["name"])
            self.assertRegex(doc["timestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
            when = datetime.datetime.strptime(doc["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
            self.assertEqual(int(when.timestamp() * 1000), data["t"])
            # A signature made with another key does not verify.
            self.assertNotEqual(req["sig"], expected_signature(b"another key", req))
        self.assertEqual([r_["doc"]["type"] for r_ in r.accepted()], ["trip.trip_created", "trip.rerouted", "trip.ended"])

    def test_a_plain_secret_signs_with_its_bytes_and_events_can_be_selected(self):
        r = self.receiver()
        args = ["--webhook", r.url, "--webhook-secret", "plain-secret-of-some-length", "--webhook-events", "ended"]
        hub = HubProcess(*args).start()
        self.hubs.append(hub)
        make_events(hub, "sel-1", reroutes=2)
        r.wait_until(lambda r: len(r.accepted()) >= 1, what="the ended event")
        req = r.accepted()[0]
        self.assertEqual(req["doc"]["type"], "trip.ended")
        self.assertEqual(req["id"], "sel-1:4")
        self.assertEqual(req["sig"], expected_signature(b"plain-secret-of-some-length", req))
        # Only `ended` is sent: the other three are passed over, never posted.
        self.assertEqual([x["id"] for x in r.requests], ["sel-1:4"])
        self.assertNotIn("plain-secret-of-some-length", hub.stderr_text())


class TestStopWebhooks(WebhookHubCase):
    def test_waypoint_reached_carries_the_stops_id_and_name(self):
        """PROTOCOL 17 and 12: a courier reaching a stop sends `trip.waypoint_reached` with
        the stop's own `stop` and `stop_name` (and `waypoint_resumed` once it goes on),
        signed, to a real receiver; a stop without a name carries `stop_name` null."""
        r = self.receiver()
        hub = self.hub(r.url, extra=("--webhook-events", "waypoint_reached,waypoint_resumed"))
        lat0, lon0 = 38.70, -9.15
        door = hubproc.offset(lat0, lon0, east_m=200)
        corner = hubproc.offset(lat0, lon0, east_m=400)
        waypoints = [{"lat": door[0], "lon": door[1], "id": "order-1042", "name": "Flat 3B, Rua Augusta 12"},
                     {"lat": corner[0], "lon": corner[1], "id": "order-1043"}]
        hub.create_trip(id="stops-1", route=[[lon0, lat0], [-9.14, lat0]], waypoints=waypoints)
        courier = Courier("stops-1")

        def drive(metres):
            fix = courier.fix(*hubproc.offset(lat0, lon0, east_m=metres), duration_ms=200)
            del fix["op"], fix["trip"]
            status, _, raw = hub.http("POST", "/v1/trips/stops-1/fixes", {"fixes": [fix]})
            self.assertEqual(status, 200, raw)

        for metres in (0, 100, 200):
            drive(metres)
        r.wait_until(lambda r: any(x["doc"]["type"] == "trip.waypoint_reached" for x in r.accepted()), what="the first stop reached")
        status, _, raw = hub.http("POST", "/v1/trips/stops-1/proceed", {})
        self.assertEqual(status, 200, raw)
        for metres in (300, 400):
            drive(metres)
        r.wait_until(lambda r: [x["doc"]["type"] for x in r.accepted()].count("trip.waypoint_reached") == 2, what="the second stop reached")
        key = key_of(SECRET)
        seen = []
        for req in r.accepted():
            self.assertEqual(req["sig"], expected_signature(key, req), req["id"])
            data = req["doc"]["data"]
            self.assertEqual(req["id"], f"stops-1:{data['n']}")
            seen.append((req["doc"]["type"], data.get("stop", "(missing)"), data.get("stop_name", "(missing)")))
        self.assertEqual(seen, [("trip.waypoint_reached", "order-1042", "Flat 3B, Rua Augusta 12"),
                                ("trip.waypoint_resumed", "order-1042", "Flat 3B, Rua Augusta 12"),
                                ("trip.waypoint_reached", "order-1043", None)])


class TestWebhookRetries(WebhookHubCase):
    def test_a_receiver_answering_500_then_200_gets_every_event_once_in_order(self):
        seen = set()

        def answer(req):
            if req["id"] in seen:
                return 200
            seen.add(req["id"])
            return 500

        r = self.receiver(answer)
        hub = self.hub(r.url)
        trips = {f"retry-{i}": make_events(hub, f"retry-{i}", reroutes=3) for i in range(3)}
        total = sum(trips.values())
        r.wait_until(lambda r: len(r.accepted()) >= total, what=f"{total} accepted events")
        accepted = r.accepted()
        ids = [x["id"] for x in accepted]
        self.assertEqual(len(ids), len(set(ids)), "an event was accepted twice")
        for trip, count in trips.items():
            ns = [x["doc"]["data"]["n"] for x in accepted if x["doc"]["data"]["trip"] == trip]
            self.assertEqual(ns, list(range(1, count + 1)), trip)
        # Each was refused once first, and the retry carried the same id.
        for trip, count in trips.items():
            for n in range(1, count + 1):
                tries = [x["status"] for x in r.requests if x["id"] == f"{trip}:{n}"]
                self.assertEqual(tries, [500, 200], f"{trip}:{n}")

        def settled():
            text = metrics(hub)
            return (metric(text, "trackhub_webhook_deliveries_total", url=r.label, result="ok") == total
                    and metric(text, "trackhub_webhook_pending", url=r.label) == 0)
        wait_for(settled, what="metrics to show every event delivered")
        text = metrics(hub)
        self.assertEqual(metric(text, "trackhub_webhook_deliveries_total", url=r.label, result="failed"), total)
        self.assertEqual(metric(text, "trackhub_webhook_deliveries_total", url=r.label, result="dropped"), 0)
        self.assertEqual(metric(text, "trackhub_webhook_oldest_pending_seconds", url=r.label), 0)


class TestSlowReceiver(WebhookHubCase, hubproc.AsyncTestCase):
    def setUp(self):
        WebhookHubCase.setUp(self)

    async def test_a_hanging_receiver_delays_nobody(self):
        # Two URLs on one receiver (one host and port): /stuck never answers, /hook does. The
        # hub must not let the stuck one take the host's connections from the other.
        receiver = self.receiver(lambda req: None if req["path"] == "/stuck" else 200)
        stuck_url = receiver.url.rsplit("/", 1)[0] + "/stuck"
        hub = self.hub(stuck_url, receiver.url)
        stuck = PathView(receiver, "/stuck")
        good = PathView(receiver, "/hook")
        hub.create_trip(id="hang-1", route=ROUTE)
        stuck.wait_until(lambda r: r.hanging >= 1, what="the stuck receiver to hold a request")

        viewer = await Client.open(hub)
        await viewer.send(op="subscribe", trip="hang-1", id="s")
        await viewer.wait_type("snapshot", re="s")
        courier_ws = await Client.open(hub)
        courier = Courier("hang-1")
        lat, lon = 38.7158, -9.1420
        for i in range(5):
            lat, lon = hubproc.offset(lat, lon, north_m=10.0, east_m=40.0)
            await courier_ws.send(**courier.fix(lat, lon))
            ack = await courier_ws.wait_type("ack")
            self.assertTrue(ack["applied"], ack)
        await viewer.wait_type("frame", trip="hang-1")
        # The second URL is served meanwhile: more trips (enough for the stuck URL to fill
        # all its 16 request slots), every event delivered.
        for i in range(17):
            make_events(hub, f"hang-other-{i}", reroutes=1)
        good.wait_until(lambda r: len(r.accepted()) >= 1 + 17 * 3, what="the second URL's events")
        stuck.wait_until(lambda r: r.hanging >= 16, what="the stuck URL to hold 16 requests")
        # The stuck URL got each trip's first event at most (each still unanswered, or
        # retried after its timeout): the rest of a trip waits behind its first, in order.
        self.assertTrue(all(x["doc"]["data"]["n"] == 1 for x in stuck.requests), [x["id"] for x in stuck.requests])
        self.assertEqual(stuck.accepted(), [])
        await viewer.close()
        await courier_ws.close()


class TestDurability(WebhookHubCase):
    def test_sigkill_with_deliveries_pending_loses_none_and_keeps_the_ids(self):
        state = {"accept": True}

        def answer(req):
            if state["accept"] and req["id"] == "kill-0:1":
                return 200
            return 503 if not state.get("open") else 200

        r = self.receiver(answer)
        tmp = tempfile.mkdtemp(prefix="trackhub-webhook-kill-")
        self.addCleanup(shutil.rmtree, tmp, True)
        data = os.path.join(tmp, "data")
        hub = self.hub(r.url, data=data)
        trips = {f"kill-{i}": make_events(hub, f"kill-{i}", reroutes=2) for i in range(3)}
        total = sum(trips.values())
        expected = {f"{t}:{n}" for t, c in trips.items() for n in range(1, c + 1)}
        r.wait_until(lambda r: {"kill-0:1", "kill-1:1", "kill-2:1"} <= {x["id"] for x in r.requests}, what="first attempts")
        wait_for(lambda: (metric(metrics(hub), "trackhub_webhook_pending", url=r.label) or 0) == total - 1,
                 what="every event but one pending")
        before = {x["id"]: x["body"] for x in r.requests}
        hub.proc.send_signal(signal.SIGKILL)
        hub.proc.wait(timeout=10)
        state["open"] = True
        again = self.hub(r.url, data=data)
        r.wait_until(lambda r: expected <= {x["id"] for x in r.accepted()}, what="every event accepted after the restart")
        for req in r.accepted():
            data_ = req["doc"]["data"]
            self.assertEqual(req["id"], f"{data_['trip']}:{data_['n']}")
            if req["id"] in before:
                self.assertEqual(req["body"], before[req["id"]], "a retry carries the same body")
        # In order per trip after the restart too.
        for trip, count in trips.items():
            ns = [x["doc"]["data"]["n"] for x in r.accepted() if x["doc"]["data"]["trip"] == trip]
            self.assertEqual(sorted(set(ns)), list(range(1, count + 1)))
            self.assertEqual(ns, sorted(ns), trip)
        wait_for(lambda: metric(metrics(again), "trackhub_webhook_pending", url=r.label) == 0, what="nothing pending")


class TestClusterWebhooks(WebhookHubCase):
    """Three hubs sharing a Redis: one delivers (the lease holder), positions in Redis."""

    def setUp(self):
        super().setUp()
        from test_cluster import RedisServer, redis_server_path
        if redis_server_path() is None:
            self.skipTest("redis-server is not installed")
        tmp = tempfile.mkdtemp(prefix="trackhub-webhook-cluster-")
        self.addCleanup(shutil.rmtree, tmp, True)
        self.redis = RedisServer(os.path.join(tmp, "redis"))
        self.addCleanup(self.redis.kill)
        self.redis.start()

    def cluster(self, url):
        return [self.hub(url, extra=["--cluster", self.redis.url]) for _ in range(3)]

    def owned(self, hub):
        return metric(metrics(hub), "trackhub_cluster_partitions_owned") or 0

    def settled(self, hubs):
        """Every partition owned, spread over the live hubs (PROTOCOL 15), and delivering."""
        live = [h for h in hubs if h.proc.poll() is None]
        owned = [self.owned(h) for h in live]
        delivered = [metric(metrics(h), "trackhub_webhook_partitions_delivered") or 0 for h in live]
        return sum(owned) == 16 and max(owned) - min(owned) <= 1 and delivered == owned

    def test_each_event_is_delivered_by_one_node(self):
        r = self.receiver()
        hubs = self.cluster(r.url)
        wait_for(lambda: self.settled(hubs), what="the partitions spread over the three hubs")
        trips = {}
        for i, hub in enumerate(hubs):
            trips[f"cl-{i}"] = make_events(hub, f"cl-{i}", reroutes=2)
        expected = {f"{t}:{n}" for t, c in trips.items() for n in range(1, c + 1)}
        r.wait_until(lambda r: expected <= {x["id"] for x in r.accepted()}, what="every event")
        ids = [x["id"] for x in r.requests]
        self.assertEqual(sorted(ids), sorted(expected), "an event was posted more than once")
        for trip, count in trips.items():
            self.assertEqual([x["doc"]["data"]["n"] for x in r.requests if x["doc"]["data"]["trip"] == trip],
                             list(range(1, count + 1)))
        self.assertTrue(self.settled(hubs))

    def test_none_is_lost_when_the_delivering_node_is_killed(self):
        state = {"open": False}
        r = self.receiver(lambda req: 200 if state["open"] else 503)
        hubs = self.cluster(r.url)
        wait_for(lambda: self.settled(hubs), what="the partitions spread over the three hubs")
        trips = {f"fo-{i}": make_events(hubs[i % 3], f"fo-{i}", reroutes=2) for i in range(6)}
        total = sum(trips.values())
        expected = {f"{t}:{n}" for t, c in trips.items() for n in range(1, c + 1)}
        pending = lambda h: metric(metrics(h), "trackhub_webhook_pending", url=r.label) or 0
        wait_for(lambda: sum(pending(h) for h in hubs) == total, what="every event pending at its partition's owner")
        # The owner with the most pending events dies: its partitions' owners-to-be deliver them.
        victim = max(hubs, key=pending)
        self.assertGreater(pending(victim), 0)
        others = [h for h in hubs if h is not victim]
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait(timeout=10)
        state["open"] = True
        r.wait_until(lambda r: expected <= {x["id"] for x in r.accepted()}, what="every event after the failover")
        wait_for(lambda: self.settled(others), what="the others to own every partition")
        for trip, count in trips.items():
            ns = [x["doc"]["data"]["n"] for x in r.accepted() if x["doc"]["data"]["trip"] == trip]
            self.assertEqual(ns, list(range(1, count + 1)), trip)


class TestWebhookFlags(unittest.TestCase):
    def serve(self, *args, env=None):
        return hubproc.run_cli(["serve", "--listen", "127.0.0.1:0", "--data", tempfile.mkdtemp(), *args], env=env)

    def test_a_webhook_without_a_secret_exits_2(self):
        out = self.serve("--webhook", "http://127.0.0.1:9/h")
        self.assertEqual(out.returncode, 2)
        self.assertIn("--webhook-secret", out.stderr)

    def test_bad_values_exit_2_naming_the_flag(self):
        for args, flag in [
            (["--webhook", "ftp://x/", "--webhook-secret", "s"], "--webhook"),
            (["--webhook", "http://x/", "--webhook-secret", "whsec_!!"], "--webhook-secret"),
            (["--webhook", "http://x/", "--webhook-secret", "s", "--webhook-events", "arrived,teleported"], "--webhook-events"),
        ]:
            out = self.serve(*args)
            self.assertEqual(out.returncode, 2, args)
            self.assertIn(flag, out.stderr, args)
            self.assertEqual(len(out.stderr.strip().splitlines()), 1, out.stderr)

    def test_the_config_file_takes_a_list(self):
        a, b = Receiver(), Receiver()
        tmp = tempfile.mkdtemp(prefix="trackhub-webhook-config-")
        try:
            path = os.path.join(tmp, "trackhub.yaml")
            with open(path, "w") as f:
                f.write(f"webhook: [{a.url}, {b.url}]\nwebhook-secret: {SECRET}\nwebhook-events: [trip_created]\n")
            hub = HubProcess("--config", path).start()
            try:
                hub.create_trip(id="file-1", route=ROUTE)
                for r in (a, b):
                    r.wait_until(lambda r: [x["id"] for x in r.accepted()] == ["file-1:1"], what="the event at both URLs")
            finally:
                hub.stop()
        finally:
            a.close()
            b.close()
            shutil.rmtree(tmp, ignore_errors=True)

    def test_the_environment_takes_a_comma_separated_list(self):
        a, b = Receiver(), Receiver()
        try:
            hub = HubProcess(env={"TRACKHUB_WEBHOOK": f"{a.url},{b.url}", "TRACKHUB_WEBHOOK_SECRET": SECRET}).start()
            try:
                hub.create_trip(id="env-1", route=ROUTE)
                for r in (a, b):
                    r.wait_until(lambda r: [x["id"] for x in r.accepted()] == ["env-1:1"], what="the event at both URLs")
            finally:
                hub.stop()
        finally:
            a.close()
            b.close()


class PathView:
    """The requests of one receiver to one path, with the receiver's waiting."""

    def __init__(self, receiver, path):
        self.receiver, self.path = receiver, path

    @property
    def requests(self):
        return [r for r in self.receiver.requests if r["path"] == self.path]

    @property
    def hanging(self):
        return sum(1 for r in self.requests if r["status"] is None)

    def accepted(self):
        return [r for r in self.receiver.accepted() if r["path"] == self.path]

    def wait_until(self, predicate, timeout=30.0, what="the expected requests"):
        self.receiver.wait_until(lambda _: predicate(self), timeout, what)


def wait_for(predicate, timeout=30.0, what="a condition"):
    """Polls predicate (an HTTP read) until true, with a deadline."""
    import time
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


if __name__ == "__main__":
    unittest.main()
