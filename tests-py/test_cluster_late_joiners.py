"""Late joiners see the present (PROTOCOL 15): a subscribe or a GET on a hub that does not yet
apply the trip's partition, or has only just started to, is answered as every other hub would.

    TRACKHUB_BIN=$(swift build -c release --show-bin-path) python3 -m unittest tests-py/test_cluster_late_joiners.py -v

One real `redis-server` and three hubs on loopback (test_cluster's helpers), `--cluster-lease 3s`
as issue 39 measured it. A trip of a partition A owns, with a waypoint at 400 m
(`wait_at_waypoints` false), is driven through A: a fix at 20 m, then one at 600 m whose 600 ms
animation passes the waypoint, so events 2 (`waypoint_reached`) and 3 (`waypoint_resumed`)
come from the grid's ticks after the trip's last log entry. Once A's own viewer has had event 3
and the frame at 600 m:

* test_subscribe_where_the_partition_is_not_applied: C and B have never used the partition
  (no snapshot of it exists yet: `--cluster-snapshot-interval 30s`). A viewer subscribing on C
  gets `snapshot` with `last_event` 3 and the position at 600 m, and a GET on B says the same.
* test_subscribe_on_the_hub_taking_the_partition_over: snapshots every 2 s, and the trip's
  is written (at event 1) before it is driven; A is killed with SIGKILL right after event 3.
  As soon as Redis names the partition's new owner, a viewer subscribes there: its snapshot
  (loaded from the stale snapshot plus the log after it) has `last_event` 3 and the position
  at 600 m, and so do GETs on both survivors.
* test_unavailable_after_two_seconds: C cannot load the partition (its snapshot key is
  corrupt), so a subscribe there is answered `unavailable` after 2 s, not left hanging; once
  the key is gone, a GET there answers the trip.

Every wait is a message or a condition polled with a deadline; a reply must be a `snapshot`
(not `unavailable`).
"""

import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cluster  # noqa: E402
from test_cluster import PARTITIONS, REPLY_DEADLINE_S, ROUTE, ClusterTestCase, east, fnv1a64  # noqa: E402
from hubproc import Courier, distance_m  # noqa: E402

LEASE = "3s"
POLL_S = 0.01  # how often the lease key is read while waiting for the new owner


def setUpModule():
    test_cluster.setUpModule()


class LateJoinerCase(ClusterTestCase):
    SNAPSHOT_INTERVAL = "30s"

    def start_hub(self, name, *extra):
        return super().start_hub(name, "--cluster-lease", LEASE, "--cluster-snapshot-interval", self.SNAPSHOT_INTERVAL, *extra)

    def holder_pid(self, partition):
        value = self.redis.get("trackhub:{p%d}:lease" % partition)
        return int(value.decode().rsplit("-", 2)[1]) if value else None

    async def trip_owned_by(self, hub, prefix):
        """A trip id whose partition `hub` owns (waiting until the leases have spread)."""
        def probe():
            for i in range(2000):
                trip = f"{prefix}-{i}"
                if self.holder_pid(fnv1a64(trip) % PARTITIONS) == hub.proc.pid:
                    return True, trip
            return False, "no partition owned yet"
        return await self.eventually(probe, f"a partition owned by {hub.http_url}", deadline_s=30)

    def create(self, hub, trip):
        wp_lat, wp_lon = east(400)
        hub.create_trip(id=trip, route=ROUTE, waypoints=[{"lat": wp_lat, "lon": wp_lon}],
                        config={"wait_at_waypoints": False})

    async def drive_past_the_waypoint(self, hub, viewer, trip):
        """A fix at 20 m, then one at 600 m animated over 600 ms: events 2 and 3 come from ticks
        after the last entry. Returns once `viewer` has had event 3 and the frame at 600 m."""
        courier, c = await self.client(hub), Courier(trip)
        for i, d in enumerate((20, 600)):
            ack = await self.reply(courier, c.fix(*east(d), duration_ms=600), f"fix-{i}")
            self.assertEqual((ack["type"], ack.get("applied")), ("ack", True), ack)
        await self.wait_event(viewer, trip, "waypoint_resumed")
        await self.wait_frame_at(viewer, trip, *east(600), "the frame at 600 m")
        self.assertEqual([e["n"] for e in viewer.events(trip)], [1, 2, 3], viewer.events(trip))

    async def late_subscribe(self, hub, trip, tag):
        """Subscribes on `hub`; the direct reply must be the snapshot. Returns it and the seconds it took."""
        conn = await self.client(hub)
        started = time.monotonic()
        await conn.send(op="subscribe", trip=trip, mode="frames", id=tag)
        reply = await conn.wait_for(lambda m: m.get("re") == tag, REPLY_DEADLINE_S, what=f"the reply to {tag}")
        took = time.monotonic() - started
        self.assertEqual(reply.get("type"), "snapshot", f"{tag}: {reply}\n{self.logs()}")
        return reply, took

    def assert_present(self, doc, where):
        """`doc` (a snapshot or a GET body) shows the trip as A's viewer saw it last."""
        self.assertEqual(doc["last_event"], 3, f"{where}: last_event: {json.dumps(doc)[:600]}")
        lat, lon = east(600)
        p = doc["position"]
        self.assertIsNotNone(p, f"{where}: no position")
        self.assertLessEqual(distance_m(p["lat"], p["lon"], lat, lon), 1.0, f"{where}: position {p}")

    def get_trip(self, hub, trip, where):
        status, body, raw = hub.http("GET", f"/v1/trips/{trip}")
        self.assertEqual(status, 200, f"{where}: GET answered {status} {raw[:300]!r}")
        return body


class TestLateJoinerWithoutTheLog(LateJoinerCase):
    async def test_subscribe_where_the_partition_is_not_applied(self):
        A, B, C = self.hubs["A"], self.hubs["B"], self.hubs["C"]
        trip = await self.trip_owned_by(A, "late")
        self.create(A, trip)
        viewer, _ = await self.subscribe(A, trip, tag="view-a")
        await self.drive_past_the_waypoint(A, viewer, trip)
        snap, took = await self.late_subscribe(C, trip, "late-c")
        self.assert_present(snap, "C's snapshot")
        self.assert_present(self.get_trip(B, trip, "B"), "B's GET")
        self.assert_present(self.get_trip(A, trip, "A"), "A's GET")
        print(f"\n  C's late snapshot in {took * 1000:.0f} ms: last_event {snap['last_event']}")


class TestLateJoinerAtTakeover(LateJoinerCase):
    SNAPSHOT_INTERVAL = "2s"

    async def test_subscribe_on_the_hub_taking_the_partition_over(self):
        A = self.hubs["A"]
        trip = await self.trip_owned_by(A, "takeover")
        p = fnv1a64(trip) % PARTITIONS
        self.create(A, trip)
        viewer, _ = await self.subscribe(A, trip, tag="view-a")

        def snapshot_has_trip():
            raw = self.redis.get("trackhub:{p%d}:snapshot" % p)
            return raw is not None and trip.encode() in raw, None
        await self.eventually(snapshot_has_trip, f"partition {p}'s snapshot with {trip}")
        await self.drive_past_the_waypoint(A, viewer, trip)
        A.kill()
        del self.hubs["A"]
        stale = json.loads(self.redis.get("trackhub:{p%d}:snapshot" % p))
        events_in_snapshot = [len(t["events"]) for t in stale["trips"] if t["trip"]["id"] == trip]

        by_pid = {h.proc.pid: (n, h) for n, h in self.hubs.items()}
        deadline = time.monotonic() + 20
        while (pid := self.holder_pid(p)) not in by_pid:
            if time.monotonic() > deadline:
                self.fail(f"partition {p} not taken over within 20 s\n{self.logs()}")
            time.sleep(POLL_S)  # poll pace of a condition with a deadline, not synchronisation
        name, owner = by_pid[pid]
        snap, took = await self.late_subscribe(owner, trip, "late-owner")
        self.assert_present(snap, f"the new owner {name}'s snapshot")
        for n, h in self.hubs.items():
            self.assert_present(self.get_trip(h, trip, n), f"{n}'s GET")
        print(f"\n  new owner {name}'s snapshot in {took * 1000:.0f} ms: last_event {snap['last_event']} "
              f"(the stale snapshot it loaded had {events_in_snapshot} events)")


class TestLateJoinerThatCannotCatchUp(LateJoinerCase):
    async def test_unavailable_after_two_seconds(self):
        """C cannot read the partition's snapshot (a corrupt key: it retries every second), so
        a subscribe there is answered `unavailable` once it has waited 2 s, never left hanging;
        once the key is gone, a GET there answers the trip."""
        A, C = self.hubs["A"], self.hubs["C"]
        trip = await self.trip_owned_by(A, "stuck")
        p = fnv1a64(trip) % PARTITIONS
        self.create(A, trip)
        # Snapshots every 30 s: no owner overwrites the key during the test.
        self.assertEqual(self.redis.get("trackhub:{p%d}:snapshot" % p), None, "no snapshot of the partition yet")
        with self.redis.client() as r:
            r.call("SET", "trackhub:{p%d}:snapshot" % p, "not a snapshot")
        conn = await self.client(C)
        started = time.monotonic()
        await conn.send(op="subscribe", trip=trip, mode="frames", id="stuck")
        reply = await conn.wait_for(lambda m: m.get("re") == "stuck", REPLY_DEADLINE_S, what="the reply to stuck")
        took = time.monotonic() - started
        self.assertEqual((reply.get("type"), reply.get("code")), ("error", "unavailable"), reply)
        self.assertGreaterEqual(took, 2.0, "answered once it had waited the 2 s")
        with self.redis.client() as r:
            r.call("DEL", "trackhub:{p%d}:snapshot" % p)
        # (A GET, not a second subscribe: a subscribe's snapshot still unsent when the replayed
        # creation broadcasts the trip's snapshot is replaced by it without its `re`, a race
        # of the send queue that this test is not about.)
        self.assertEqual(self.get_trip(C, trip, "C after the key was fixed")["last_event"], 1)
        print(f"\n  C answered unavailable after {took:.2f} s; after the key was fixed, GET 200")


if __name__ == "__main__":
    unittest.main()
