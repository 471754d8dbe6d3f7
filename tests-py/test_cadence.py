"""Cadence end to end (PROTOCOL 18, "the hub asks for what it needs"), against the release binary.

    swift build -c release
    TRACKHUB_BIN=$(swift build -c release --show-bin-path) python3 -m unittest tests-py/test_cadence.py -v

A courier is asked for a fix every --cadence-watched (default 2 s) while somebody follows its
trip and every --cadence-idle (default 30 s) otherwise:

* test_a_courier_hears_the_idle_cadence_after_its_first_ack_and_nothing_new_after: the
  `cadence` {trip, interval_ms: 30000, watched: false} comes after the ack of the first fix,
  without `re`; later fixes bring no `cadence` while nothing changes.
* test_the_first_subscriber_and_the_last_leaving_change_the_cadence_within_a_second: a
  viewer's subscribe, its unsubscribe, another viewer's close: each change reaches the
  courier within 1 s (the contract's deadline, with a margin for a loaded machine).
* test_a_courier_following_its_own_trip_does_not_make_it_watched.
* test_cadence_idle_zero_turns_cadence_off: no `cadence`, OwnTracks answered `[]`, the
  counter stays 0 (also set through TRACKHUB_CADENCE_IDLE).
* test_owntracks_is_told_its_interval_once_then_empty_until_it_changes: OwnTracks's own
  `setConfiguration` (move mode, locatorInterval and moveModeLocatorInterval in seconds).
* test_the_counter_counts_every_cadence_and_configuration: trackhub_cadence_messages_total.
* test_flags: bad values exit 2 naming the flag; --help lists both flags.
* ClusterCadenceTest.test_a_subscriber_on_any_of_three_hubs_reaches_the_courier_within_5_s:
  three hubs sharing one Redis; the courier on A hears of a viewer on B and of the last viewer
  (on C) leaving within 5 s (the contract's deadline, with a margin).

A link for one stop watching only while the courier is shown to it (PROTOCOL 17, 18) is
tested with the links, in test_stop_links.py (a secured hub).

Nothing sleeps to synchronise: every wait is for a message with a deadline; "nothing was
sent" is read at a ping's pong, which the hub sends after anything it sent before.
"""

import asyncio
import json
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also run as tests-py/test_cadence.py
import hubproc  # noqa: E402
from hubproc import Courier, HubProcess, now_ms, offset  # noqa: E402
from trip_driving import TrackedClients, redis_server_path, start_cluster, wait_healthy  # noqa: E402

# The contract's deadlines (PROTOCOL 18) and the margin a loaded machine gets on top.
ONE_HUB_DEADLINE_S = 1.0
CLUSTER_DEADLINE_S = 5.0
MARGIN_S = 1.0

LAT0, LON0 = 38.70, -9.15
ROUTE = [[LON0, LAT0], [-9.13, LAT0]]
PHONE = "cadence-phone-0123456789"


def setUpModule():
    hubproc.require_binary()


def metric(hub, name):
    status, _, raw = hub.http("GET", "/metrics")
    assert status == 200, raw[:200]
    for line in raw.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} is not in /metrics")


def is_cadence(trip, interval_ms, watched):
    return lambda m: (m.get("type") == "cadence" and m.get("trip") == trip
                      and m.get("interval_ms") == interval_ms and m.get("watched") == watched)


class CadenceCase(TrackedClients, hubproc.AsyncTestCase):
    """One hub per test (flags per test), a trip and helpers to drive its courier."""

    hub_args = ()

    def setUp(self):
        self.hub = HubProcess("--tick-hz", "10", *self.hub_args)
        self.addCleanup(self.hub.stop)
        self.hub.start()
        self.trip = self.hub.create_trip(route=ROUTE)["trip"]
        self.pings = 0

    async def courier(self, hub=None):
        client = await self.client(hub)
        client.fixes = Courier(self.trip)
        client.metres = 0.0
        return client

    async def fix(self, courier):
        """Sends the courier's next fix and waits for its ack; returns the messages up to a
        ping's pong after it (whatever the hub sent after the ack)."""
        courier.metres += 25
        lat, lon = offset(LAT0, LON0, east_m=courier.metres)
        msg = courier.fixes.fix(lat, lon)
        await courier.send(id=f"f{msg['seq']}", **msg)
        mark = courier.mark()
        await courier.wait_type("ack", re=f"f{msg['seq']}")
        await self.barrier(courier)
        return courier.since(mark)

    async def barrier(self, client):
        """Every message the hub sent to `client` before now is in its log once this returns."""
        self.pings += 1
        await client.barrier(f"b{self.pings}")

    async def viewer(self, hub=None):
        client = await self.client(hub)
        await client.send(op="subscribe", trip=self.trip, id="s")
        await client.wait_type("snapshot", re="s")
        return client

    async def expect_cadence(self, courier, interval_ms, watched, within_s, since):
        """Waits for the courier's next `cadence` and checks it; returns how long it took
        from `since` (time.monotonic())."""
        msg = await courier.wait_for(lambda m: m.get("type") == "cadence", timeout=within_s + MARGIN_S,
                                     what=f"cadence {interval_ms} watched={watched}")
        took = time.monotonic() - since
        self.assertTrue(is_cadence(self.trip, interval_ms, watched)(msg), msg)
        self.assertNotIn("re", msg)
        return took

    def owntracks(self, tst):
        """Posts the phone's location at `tst` (seconds; each call one second after the last,
        a few metres on) and returns the answer's messages."""
        self.phone_steps = getattr(self, "phone_steps", 0) + 1
        body = {"_type": "location", "lat": LAT0, "lon": LON0 + 0.00005 * self.phone_steps, "tst": tst, "tid": "ph"}
        status, doc, raw = self.hub.http("POST", f"/v1/owntracks/{PHONE}", body)
        self.assertEqual(status, 200, raw)
        return doc


class SingleHubCadenceTest(CadenceCase):
    async def test_a_courier_hears_the_idle_cadence_after_its_first_ack_and_nothing_new_after(self):
        courier = await self.courier()
        after = await self.fix(courier)
        kinds = [m["type"] for m in after]
        self.assertEqual(kinds[:2], ["ack", "cadence"], after)  # right after the ack
        self.assertTrue(is_cadence(self.trip, 30_000, False)(after[1]), after[1])
        self.assertNotIn("re", after[1])
        for _ in range(4):
            after = await self.fix(courier)
            self.assertEqual([m for m in after if m["type"] == "cadence"], [], "the interval did not change")

    async def test_the_first_subscriber_and_the_last_leaving_change_the_cadence_within_a_second(self):
        courier = await self.courier()
        await self.fix(courier)  # its idle cadence is read: the next one waited for is a change

        started = time.monotonic()
        first = await self.viewer()
        took = await self.expect_cadence(courier, 2000, True, ONE_HUB_DEADLINE_S, started)
        self.assertLess(took, ONE_HUB_DEADLINE_S + MARGIN_S)

        second = await self.viewer()  # still watched: nothing new
        after = await self.fix(courier)
        self.assertEqual([m for m in after if m["type"] == "cadence"], [], after)

        mark = courier.mark()
        await first.send(op="unsubscribe", trip=self.trip, id="u")
        await first.wait_type("unsubscribed", re="u")
        await self.barrier(courier)
        self.assertEqual(courier.since(mark, "cadence"), [], "the second viewer still watches")

        started = time.monotonic()
        await second.close()  # the last one leaves by closing its connection
        await self.expect_cadence(courier, 30_000, False, ONE_HUB_DEADLINE_S, started)

        started = time.monotonic()
        await self.viewer()  # and a new first subscriber
        await self.expect_cadence(courier, 2000, True, ONE_HUB_DEADLINE_S, started)
        self.assertEqual(first.since(0, "cadence"), [], "only the courier is told")

    async def test_a_courier_following_its_own_trip_does_not_make_it_watched(self):
        courier = await self.courier()
        await courier.send(op="subscribe", trip=self.trip, id="own")
        await courier.wait_type("snapshot", re="own")
        after = await self.fix(courier)
        cadences = [m for m in after if m["type"] == "cadence"]
        self.assertEqual(len(cadences), 1, after)
        self.assertTrue(is_cadence(self.trip, 30_000, False)(cadences[0]), cadences)
        for _ in range(3):
            after = await self.fix(courier)
            self.assertEqual([m for m in after if m["type"] == "cadence"], [])
        await self.viewer()  # somebody else does make it watched
        await self.expect_cadence(courier, 2000, True, ONE_HUB_DEADLINE_S, time.monotonic())

    async def test_owntracks_is_told_its_interval_once_then_empty_until_it_changes(self):
        status, _, raw = self.hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": self.trip})
        self.assertEqual(status, 200, raw)
        tst = now_ms() // 1000 - 60
        first = self.owntracks(tst)
        self.assertEqual(first, [{"_type": "cmd", "action": "setConfiguration",
                                  "configuration": {"_type": "configuration", "monitoring": 2,
                                                    "locatorInterval": 30, "moveModeLocatorInterval": 30}}])
        self.assertEqual(self.owntracks(tst + 1), [])
        self.assertEqual(self.owntracks(tst + 2), [])
        viewer = await self.viewer()
        watched = self.owntracks(tst + 3)
        self.assertEqual(len(watched), 1, watched)
        self.assertEqual(watched[0]["configuration"]["locatorInterval"], 2)
        self.assertEqual(watched[0]["configuration"]["moveModeLocatorInterval"], 2)
        self.assertEqual(self.owntracks(tst + 4), [])
        await viewer.close()
        # The phone hears of it only in the answer to its next location: poll a few.
        for n in range(5, 60):
            doc = self.owntracks(tst + n)
            if doc:
                self.assertEqual(doc[0]["configuration"]["locatorInterval"], 30)
                break
        else:
            self.fail("the idle interval was never told again")
        self.assertEqual(self.owntracks(tst + 61), [])

    async def test_the_counter_counts_every_cadence_and_configuration(self):
        self.assertEqual(metric(self.hub, "trackhub_cadence_messages_total"), 0)
        courier = await self.courier()
        await self.fix(courier)
        viewer = await self.viewer()
        await self.expect_cadence(courier, 2000, True, ONE_HUB_DEADLINE_S, time.monotonic())
        await viewer.close()
        await self.expect_cadence(courier, 30_000, False, ONE_HUB_DEADLINE_S, time.monotonic())
        status, _, raw = self.hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": self.trip})
        self.assertEqual(status, 200, raw)
        self.assertEqual(len(self.owntracks(now_ms() // 1000 - 30)), 1)
        seen = len(courier.since(0, "cadence")) + 1
        self.assertEqual(seen, 4)
        self.assertEqual(metric(self.hub, "trackhub_cadence_messages_total"), seen)


class OtherIntervalsTest(CadenceCase):
    hub_args = ("--cadence-watched", "1500ms", "--cadence-idle", "10s")

    async def test_the_flags_set_the_intervals(self):
        courier = await self.courier()
        after = await self.fix(courier)
        self.assertTrue(any(is_cadence(self.trip, 10_000, False)(m) for m in after), after)
        await self.viewer()
        await self.expect_cadence(courier, 1500, True, ONE_HUB_DEADLINE_S, time.monotonic())
        status, _, raw = self.hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": self.trip})
        self.assertEqual(status, 200, raw)
        # OwnTracks takes whole seconds: 1.5 s is asked as 2.
        self.assertEqual(self.owntracks(now_ms() // 1000 - 30)[0]["configuration"]["locatorInterval"], 2)


class CadenceOffTest(CadenceCase):
    hub_args = ("--cadence-idle", "0")

    async def test_cadence_idle_zero_turns_cadence_off(self):
        courier = await self.courier()
        for _ in range(2):
            after = await self.fix(courier)
            self.assertEqual([m for m in after if m["type"] == "cadence"], [])
        await self.viewer()
        after = await self.fix(courier)
        self.assertEqual(courier.since(0, "cadence"), [], after)
        status, _, raw = self.hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": self.trip})
        self.assertEqual(status, 200, raw)
        self.assertEqual(self.owntracks(now_ms() // 1000 - 30), [])
        self.assertEqual(metric(self.hub, "trackhub_cadence_messages_total"), 0)


class CadenceOffFromTheEnvironmentTest(CadenceCase):
    def setUp(self):
        self.hub = HubProcess("--tick-hz", "10", env={"TRACKHUB_CADENCE_IDLE": "0s"})
        self.addCleanup(self.hub.stop)
        self.hub.start()
        self.trip = self.hub.create_trip(route=ROUTE)["trip"]
        self.clients = []
        self.pings = 0

    async def test_the_environment_variable_turns_it_off(self):
        courier = await self.courier()
        await self.fix(courier)
        await self.viewer()
        await self.fix(courier)
        self.assertEqual(courier.since(0, "cadence"), [])


class FlagsTest(unittest.TestCase):
    def test_flags(self):
        for args, flag in [(["--cadence-watched", "50ms"], "--cadence-watched"),
                           (["--cadence-watched", "2"], "--cadence-watched"),
                           (["--cadence-idle", "10ms"], "--cadence-idle"),
                           (["--cadence-idle", "soon"], "--cadence-idle")]:
            with self.subTest(args=args):
                with tempfile.TemporaryDirectory() as tmp:
                    done = hubproc.run_cli(["serve", "--listen", "127.0.0.1:0", "--data", os.path.join(tmp, "d"), *args])
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertIn(flag, done.stderr)
                self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
        helped = hubproc.run_cli(["serve", "--help"])
        self.assertEqual(helped.returncode, 0)
        self.assertIn("--cadence-watched", helped.stdout)
        self.assertIn("--cadence-idle", helped.stdout)
        defaults = hubproc.run_cli(["config", "default"])
        self.assertIn("# cadence-watched: 2s", defaults.stdout)
        self.assertIn("# cadence-idle: 30s", defaults.stdout)


class ClusterCadenceTest(CadenceCase):
    """Three hubs sharing one Redis (as tests-py/test_cluster.py starts them)."""

    def setUp(self):
        if redis_server_path() is None:
            self.skipTest("redis-server is not installed")
        self.redis, self.hubs = start_cluster(self, prefix="trackhub-cadence-")
        self.hub = self.hubs["A"]
        self.pings = 0

    async def asyncSetUp(self):
        await super().asyncSetUp()
        await asyncio.to_thread(wait_healthy, self.hubs)
        self.trip = self.hub.create_trip(route=ROUTE)["trip"]

    async def wait_watched_in_redis(self, count, deadline_s=CLUSTER_DEADLINE_S + MARGIN_S):
        """Waits until `count` hubs' watched sets in Redis (trackhub:watched:<node>) hold the trip."""
        end = time.monotonic() + deadline_s
        while True:
            with self.redis.client() as r:
                keys = r.call("KEYS", "trackhub:watched:*") or []
                holding = sum(1 for k in keys if self.trip.encode() in (r.call("GET", k) or b"").split(b"\n")[1:])
            if holding == count:
                return
            self.assertLess(time.monotonic(), end, f"{holding} hubs' watched sets hold {self.trip}, not {count}")
            await asyncio.sleep(0.05)  # polling a condition, with a deadline

    async def test_a_subscriber_on_any_of_three_hubs_reaches_the_courier_within_5_s(self):
        courier = await self.courier(self.hubs["A"])
        after = await self.fix(courier)
        self.assertTrue(any(is_cadence(self.trip, 30_000, False)(m) for m in after), after)

        started = time.monotonic()
        on_b = await self.viewer(self.hubs["B"])
        took = await self.expect_cadence(courier, 2000, True, CLUSTER_DEADLINE_S, started)
        self.assertLess(took, CLUSTER_DEADLINE_S + MARGIN_S)
        print(f"\n  watched on B -> courier on A told after {took:.2f} s", file=sys.stderr)

        on_c = await self.viewer(self.hubs["C"])
        # C's subscriber is in Redis before B's leaves (else A could see neither for a moment).
        await self.wait_watched_in_redis(count=2)
        await on_b.close()  # C's viewer still watches: the courier is told nothing
        after = await self.fix(courier)
        self.assertEqual([m for m in after if m["type"] == "cadence"], [], after)

        started = time.monotonic()
        await on_c.close()  # the last one, on another hub than the courier's
        took = await self.expect_cadence(courier, 30_000, False, CLUSTER_DEADLINE_S, started)
        self.assertLess(took, CLUSTER_DEADLINE_S + MARGIN_S)
        print(f"  unwatched on C -> courier on A told after {took:.2f} s", file=sys.stderr)
        await self.wait_watched_in_redis(count=0)
        for name in "BC":  # only the hub holding the courier's connection told it
            self.assertEqual(metric(self.hubs[name], "trackhub_cadence_messages_total"), 0)
        self.assertEqual(metric(self.hubs["A"], "trackhub_cadence_messages_total"), 3)


if __name__ == "__main__":
    unittest.main()
