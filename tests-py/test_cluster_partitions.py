"""Several hubs that share the work (PROTOCOL 15): partition owners, tailing on demand.

    TRACKHUB_BIN=$(swift build -c release --show-bin-path) python3 -m unittest tests-py/test_cluster_partitions.py -v

One real `redis-server` and three hubs on loopback (test_cluster's helpers), `--cluster-lease 2s`
so take-overs are quick. What is checked:

* test_work_is_shared: the 16 partitions are spread over A, B and C (each owns 4-8); 12
  trips, each driven through its own hub and watched by a viewer on another: every viewer of
  a trip sees the same frames (same t: same seq, position) as one on the trip's courier hub
  and the same events; each hub's `trackhub_cluster_entries_applied_total` is at most the
  entries of the partitions it started applying (`trackhub_cluster_partition_loads_total`:
  those it owns and those its own clients use, once per start) and below the whole log; every hub's
  fleet view counts all 12 riders.
* test_takeover_and_join: C is killed with SIGKILL; within a few leases A and B own every
  partition, every acked fix is in A's trail once and a trip of C's is still driven through
  A; a hub D that joins takes partitions.

Waits are conditions polled with deadlines; no assertion depends on speed.
"""

import collections
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cluster  # noqa: E402
from test_cluster import (  # noqa: E402
    PARTITIONS, POLL_S, ROUTE, ClusterTestCase, Resp, RespError, east, fnv1a64, pair_frames, redis_server_path, trail_ts)
from hubproc import Courier  # noqa: E402

LEASE = "2s"


def setUpModule():
    test_cluster.setUpModule()


def partition_loads(hub):
    """`trackhub_cluster_partition_loads_total` of `hub`: {partition: times it started applying it}."""
    text = hub.http("GET", "/metrics", timeout=5)[2].decode()
    prefix = 'trackhub_cluster_partition_loads_total{partition="'
    return {int(line[len(prefix):].split('"')[0]): int(float(line.split()[1]))
            for line in text.splitlines() if line.startswith(prefix)}


def metric(hub, name):
    text = hub.http("GET", "/metrics", timeout=5)[2].decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


class TestClusterPartitions(ClusterTestCase):
    def start_hub(self, name, *extra):
        return super().start_hub(name, "--cluster-lease", LEASE, *extra)

    async def spread(self, hubs, what):
        """Waits until the live `hubs` own every partition between them, none more than twice
        its share or less than half of it."""
        def probe():
            owned = {n: int(metric(h, "trackhub_cluster_partitions_owned")) for n, h in hubs.items()}
            share = PARTITIONS / len(hubs)
            ok = sum(owned.values()) == PARTITIONS and all(share / 2 <= v <= share * 2 for v in owned.values())
            return ok, owned
        return await self.eventually(probe, what, deadline_s=30)

    async def test_work_is_shared(self):
        names = "ABC"
        owned = await self.spread(self.hubs, "the partitions spread over A, B and C")
        trips = [f"p-{i}" for i in range(12)]
        couriers, viewers, home = {}, {}, {}
        for i, trip in enumerate(trips):
            # Each trip's courier on the owner of its partition (as a partition-aware load
            # balancer would send it); three trips also watched on another hub.
            p = fnv1a64(trip) % PARTITIONS
            here = next((n for n in names if self.owner_is(self.hubs[n], p)), names[i % 3])
            there = names[(names.index(here) + 1) % 3]
            home[trip] = (here, there)
            self.hubs[here].create_trip(id=trip, route=ROUTE)
            watch = [here, there] if i % 4 == 0 else []
            viewers[trip] = {n: (await self.subscribe(self.hubs[n], trip, tag=f"v-{trip}-{n}"))[0] for n in watch}
            couriers[trip] = (await self.client(self.hubs[here]), Courier(trip))
        sent = 0
        for step, d in enumerate((30, 150, 300)):
            for trip in trips:
                conn, c = couriers[trip]
                ack = await self.reply(conn, c.fix(*east(d), duration_ms=500), f"{trip}-{step}")
                self.assertEqual((ack["type"], ack.get("applied")), ("ack", True), ack)
                sent += 1
        for trip in trips:
            for name, viewer in viewers[trip].items():
                await self.wait_frame_at(viewer, trip, *east(300), f"{trip}'s last frame on {name}")
        for trip in trips:
            if not viewers[trip]:
                continue
            here, there = home[trip]
            mine, theirs = viewers[trip][here].frames(trip), viewers[trip][there].frames(trip)
            pairs, bad = pair_frames(theirs, {f["t"]: f for f in mine})
            self.assertGreaterEqual(len(pairs), 0.8 * len(theirs), f"{trip}: frames on {there} with a partner on {here}")
            self.assertEqual(bad, [], f"{trip}: frames with the same t differ between {there} and {here}")
            self.assertEqual(viewers[trip][there].events(trip), viewers[trip][here].events(trip), trip)

        applied = {n: metric(h, "trackhub_cluster_entries_applied_total") for n, h in self.hubs.items()}
        loads = {n: partition_loads(h) for n, h in self.hubs.items()}
        commands = sent + len(trips)  # the fixes and the creates
        per_trip = commands // len(trips)
        trips_in = collections.Counter(fnv1a64(t) % PARTITIONS for t in trips)
        for name, count in applied.items():
            # A hub applies the partitions it owns (it drives their couriers) and those its own
            # viewers use, each from its latest snapshot on every time it starts applying it:
            # at most the entries of their trips once per start. Which partitions those are
            # depends on how the leases fell (on a loaded machine a lease can lapse and move,
            # and its new owner replays the partition), so the hub's own count of starts is
            # the bound's measure; the hub's courier and viewer partitions must be among them.
            needed = {fnv1a64(t) % PARTITIONS for t in trips if home[t][0] == name or name in viewers[t]}
            self.assertLessEqual(needed, set(loads[name]), f"{name} drives or watches trips in partitions it never applied: {loads}")
            bound = sum(per_trip * trips_in[p] * n for p, n in loads[name].items())
            self.assertLessEqual(count, bound,
                                 f"{name} applied {count} entries, more than its partitions' trips' {per_trip} each per start: "
                                 f"{applied}, starts {loads}, owned {owned}")
            if len({p for p in loads[name] if trips_in[p]}) < len(trips_in):
                self.assertLess(count, commands, f"{name} applied the whole log: {applied}, owned {owned}")
        # ...and all together well under three times the log (every hub applying everything).
        self.assertLess(sum(applied.values()), 2 * commands, applied)

        def fleet_everywhere():
            seen = {}
            for name, hub in self.hubs.items():
                status, body, raw = hub.http("GET", "/v1/fleet/clusters?zoom=3&bbox=-20,30,10,50")
                seen[name] = body["total"] if status == 200 else status
            return all(v == len(trips) for v in seen.values()), seen
        await self.eventually(fleet_everywhere, "every hub's fleet view counts the whole fleet")
        print(f"\n  {commands} entries; applied per hub {applied}; partitions owned {owned}")

    async def test_takeover_and_join(self):
        A, C = self.hubs["A"], self.hubs["C"]
        await self.spread(self.hubs, "the partitions spread over A, B and C")
        trip = next(f"t-{i}" for i in range(1000) if self.owner_is(C, fnv1a64(f"t-{i}") % PARTITIONS))
        C.create_trip(id=trip, route=ROUTE)
        courier = await self.client(C)
        c = Courier(trip)
        acked = []
        for d in (20, 60):
            ack = await self.reply(courier, c.fix(*east(d), duration_ms=300), f"c{d}")
            self.assertEqual((ack["type"], ack.get("applied")), ("ack", True), ack)
            acked.append(c.ts)
        viewer, _ = await self.subscribe(A, trip, tag="view-a")
        C.kill()
        started = time.monotonic()
        del self.hubs["C"]
        await self.spread(self.hubs, "A and B own every partition after C's SIGKILL")
        took = time.monotonic() - started
        courier = await self.client(A)
        for d in (120, 200):
            ack = await self.reply(courier, c.fix(*east(d), duration_ms=300), f"a{d}")
            self.assertEqual((ack["type"], ack.get("applied")), ("ack", True), ack)
            acked.append(c.ts)
        await self.wait_frame_at(viewer, trip, *east(200), "A's frame at the fix after the take-over")
        counts = collections.Counter(trail_ts(A, trip))
        self.assertEqual({ts: counts[ts] for ts in acked}, {ts: 1 for ts in acked}, "acked fixes in A's trail")

        self.hubs["D"] = self.start_hub("D")
        await self.wait_health({"D": self.hubs["D"]}, 200)
        await self.spread(self.hubs, "a joining D takes partitions")
        print(f"\n  C's partitions taken over {took:.1f} s after SIGKILL (lease {LEASE}); D joined and took "
              f"{int(metric(self.hubs['D'], 'trackhub_cluster_partitions_owned'))}")

    def owner_is(self, hub, partition):
        """Whether `hub` holds the partition's lease (a node id is `<host>-<pid>-<random>`)."""
        holder = self.redis.get("trackhub:{p%d}:lease" % partition)
        return holder is not None and f"-{hub.proc.pid}-" in holder.decode()


def port_with_bus():
    """A port p such that p and p + 10000 (a cluster node's bus) were both free a moment ago.
    Both lie below Linux's ephemeral range (32768 and up), where an outgoing connection of a
    test running beside this one could take the bus port before redis-server binds it."""
    for _ in range(200):
        port = random.randrange(12000, 22768)
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 10000))
            return port
        except OSError:
            continue
    raise AssertionError("no free port pair p, p + 10000")


class RedisClusterServers:
    """A Redis Cluster on loopback: `masters` x (1 + `replicas`) `redis-server --cluster-enabled
    yes` (`cluster-node-timeout` 2 s) joined by `redis-cli --cluster create`; `url` names every
    node (the hubs' --cluster seeds). The partition tests use three masters without replicas
    or AOF; the failover tests (test_cluster_failover) replicas and `appendonly yes`."""

    def __init__(self, directory, masters=3, replicas=0, appendonly="no"):
        self.dir = directory
        self.count = masters * (1 + replicas)
        self.replicas = replicas
        self.appendonly = appendonly
        self.ports = []
        self.procs = {}
        self.proc = self  # test_cluster's logs() asks self.redis.proc.poll()

    @property
    def url(self):
        return ",".join(f"redis://127.0.0.1:{p}" for p in self.ports)

    def start(self):
        if shutil.which("redis-cli") is None:
            raise unittest.SkipTest("redis-cli is not installed: scripts/install-deps.sh --test installs it")
        while len(self.ports) < self.count:
            port = port_with_bus()
            if port not in self.ports:
                self.ports.append(port)
        for port in self.ports:
            d = os.path.join(self.dir, str(port))
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "redis.log"), "ab") as log:
                self.procs[port] = subprocess.Popen(
                    [redis_server_path(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                     "--appendonly", self.appendonly, "--dir", d, "--cluster-enabled", "yes",
                     "--cluster-config-file", os.path.join(d, "nodes.conf"), "--cluster-node-timeout", "2000"],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        for port in self.ports:
            self._wait(lambda: self._call(port, "PING") == "PONG", f"redis-server {port} answers PING")
        subprocess.run(["redis-cli", "--cluster", "create", *[f"127.0.0.1:{p}" for p in self.ports],
                        "--cluster-replicas", str(self.replicas), "--cluster-yes"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        self.wait_healthy()
        return self

    def wait_healthy(self, deadline_s=60):
        """Every live node says cluster_state:ok and every replica's link to its master is up."""
        def healthy():
            for p in self.live_ports():
                if b"cluster_state:ok" not in (self._call(p, "CLUSTER", "INFO") or b""):
                    return False
                info = self._call(p, "INFO", "replication") or b""
                if b"role:slave" in info and b"master_link_status:up" not in info:
                    return False
            return True
        self._wait(healthy, "every node says cluster_state:ok, every replica in sync", deadline_s)

    def live_ports(self):
        return [p for p, proc in self.procs.items() if proc.poll() is None]

    def master_of_key(self, key):
        """The port of the master serving `key`, as the first live node sees it."""
        port = self.live_ports()[0]
        slot = self._call(port, "CLUSTER", "KEYSLOT", key)
        for entry in self._call(port, "CLUSTER", "SLOTS") or []:
            if entry[0] <= slot <= entry[1]:
                return entry[2][1]
        return None

    def kill_node(self, port):
        """SIGKILL one node."""
        os.killpg(self.procs[port].pid, signal.SIGKILL)
        self.procs[port].wait(timeout=10)

    def _call(self, port, *args):
        try:
            with Resp(port, timeout=2.0) as r:
                return r.call(*args)
        except (OSError, ConnectionError, RespError):
            return None

    def _wait(self, condition, what, deadline_s=30):
        end = time.monotonic() + deadline_s
        while not condition():
            if time.monotonic() > end:
                raise AssertionError(f"{what}: not within {deadline_s} s")
            time.sleep(POLL_S)

    def get(self, key):
        """GET from whichever master serves the key (the others answer MOVED)."""
        for port in self.ports:
            try:
                with Resp(port, timeout=2.0) as r:
                    return r.call("GET", key)
            except RespError as e:
                if "MOVED" not in str(e):
                    raise
        raise AssertionError(f"no master serves {key}")

    def poll(self):
        return None if all(p.poll() is None for p in self.procs.values()) else 1

    def log_tail(self, lines=6):
        return "(three cluster nodes: logs in their directories)"

    def kill(self):
        for p in self.procs.values():
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=10)


class TestClusterPartitionsOnRedisCluster(TestClusterPartitions):
    """The same two tests with the log on a three-master Redis Cluster (PROTOCOL 15: "Redis
    Cluster works as well as one Redis"): the hubs are given all three masters as seeds."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="trackhub-rcluster-")
        self.addCleanup(tmp.cleanup)
        self.redis = RedisClusterServers(os.path.join(tmp.name, "redis"))
        self.addCleanup(self.redis.kill)
        self.redis.start()
        self.hubs = {}
        for name in "ABC":
            self.hubs[name] = self.start_hub(name)

    async def test_the_log_is_spread_over_the_masters(self):
        await self.spread(self.hubs, "the partitions spread over A, B and C")
        with_streams = [p for p in self.redis.ports
                        if any(k.startswith(b"trackhub:{p") for k in (self._keys(p) or []))]
        self.assertEqual(len(with_streams), 3, "every master holds some partitions' keys")

    def _keys(self, port):
        with Resp(port, timeout=2.0) as r:
            return r.call("KEYS", "trackhub:*")


if __name__ == "__main__":
    unittest.main()
