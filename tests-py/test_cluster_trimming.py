"""The log is trimmed only below its snapshots, never by length (PROTOCOL 15, "Trimming").

    TRACKHUB_BIN=$(swift build -c release --show-bin-path) python3 -m unittest tests-py/test_cluster_trimming.py -v

One real `redis-server` and three hubs on loopback (test_cluster's helpers), snapshots every
second. A trip is created on A and driven with 40 acked fixes. Then, polling with deadlines:

* the trip's partition stream is trimmed (its first entry is no longer the trip's creation),
  and at every look the entry at the latest snapshot's position is still there (nothing at or
  after it was removed);
* every hub's `trackhub_cluster_log_entries{partition="p"}` comes to equal the stream's XLEN,
  and `/healthz` says `ok` (far below the 2 000 000-entry warning);
* a hub D started after the trim knows the trip as A does (status, `last_event`, the trail of
  every acked fix) from the snapshot and the log left after it, and follows the next fix.
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cluster  # noqa: E402
from test_cluster import PARTITIONS, ROUTE, ClusterTestCase, east, fnv1a64, health, trail_ts  # noqa: E402
from hubproc import Courier  # noqa: E402

FIXES = 40


def setUpModule():
    test_cluster.setUpModule()


def log_entries_metric(hub, partition):
    text = hub.http("GET", "/metrics", timeout=5)[2].decode()
    prefix = 'trackhub_cluster_log_entries{partition="%d"} ' % partition
    for line in text.splitlines():
        if line.startswith(prefix):
            return int(float(line[len(prefix):]))
    return None


class TestClusterTrimming(ClusterTestCase):
    def stream(self, p):
        return "trackhub:{p%d}:log" % p

    async def test_trimmed_below_the_snapshots_only(self):
        A = self.hubs["A"]
        trip = "trim-1"
        p = fnv1a64(trip) % PARTITIONS
        A.create_trip(id=trip, route=ROUTE)
        with self.redis.client() as r:
            created_id = r.call("XRANGE", self.stream(p), "-", "+", "COUNT", "1")[0][0]
        courier, c = await self.client(A), Courier(trip)
        acked = []
        for i in range(FIXES):
            ack = await self.reply(courier, c.fix(*east(10 + 10 * i)), f"f{i}")
            self.assertEqual((ack["type"], ack.get("applied")), ("ack", True), ack)
            acked.append(c.ts)
        appended = FIXES + 1  # the create and the fixes: nothing else goes to this partition here

        def trimmed_safely():
            with self.redis.client() as r:
                raw = r.call("GET", "trackhub:{p%d}:snapshot" % p)
                first = r.call("XRANGE", self.stream(p), "-", "+", "COUNT", "1")
                length = r.call("XLEN", self.stream(p))
                position = json.loads(raw)["position"] if raw else None
                # The snapshot's own entry (and so all after it) is still in the log.
                at_position = r.call("XRANGE", self.stream(p), position, position) if position and position != "0-0" else None
            if at_position is not None:
                self.assertEqual(len(at_position), 1, f"the entry at the latest snapshot's position {position} was trimmed")
            first_id = first[0][0] if first else None
            return first_id is not None and first_id != created_id and length < appended, (position, first_id, length)
        position, first_id, length = await self.eventually(trimmed_safely, "the trip's partition trimmed below its snapshot")

        def metric_matches():
            with self.redis.client() as r:
                length = r.call("XLEN", self.stream(p))
            seen = {n: log_entries_metric(h, p) for n, h in self.hubs.items()}
            return all(v == length for v in seen.values()), (length, seen)
        length, seen = await self.eventually(metric_matches, "trackhub_cluster_log_entries equals XLEN on every hub")
        for name, hub in self.hubs.items():
            status, body = health(hub)
            self.assertEqual((status, body.get("status")), (200, "ok"), f"{name}'s /healthz")

        D = self.hubs["D"] = self.start_hub("D")
        await self.wait_health({"D": D}, 200)
        docs = await self.eventually(self.trips_agree(trip, {"A": A, "D": D}), "D, started after the trim, agrees with A")
        self.assertEqual(trail_ts(D, trip), acked, "D's trail: every acked fix, from the snapshot and the log after it")
        viewer, _ = await self.subscribe(D, trip, tag="view-d")
        ack = await self.reply(courier, c.fix(*east(500), duration_ms=300), "after")
        self.assertEqual((ack["type"], ack.get("applied")), ("ack", True), ack)
        await self.wait_frame_at(viewer, trip, *east(500), "D's frame at the fix after the trim")
        print(f"\n  partition {p}: {appended} entries appended, {length} left after trimming (first {first_id}, "
              f"snapshot at {position}); metric {seen}; D started after it agrees (last_event {docs['D']['last_event']})")


if __name__ == "__main__":
    unittest.main()
