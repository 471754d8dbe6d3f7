"""Cluster mode end to end: three `trackhub serve --cluster` nodes sharing one Redis log.

    swift build -c release
    TRACKHUB_BIN=$(swift build -c release --show-bin-path) python3 -m unittest tests-py/test_cluster.py -v

Every test starts its own cluster on loopback: a `redis-server` on a free port (AOF on, no
RDB, its own directory) and three hubs A, B and C, each with its own data directory,
`--cluster redis://127.0.0.1:P --tick-hz 10`, open mode. It waits for every hub's
/healthz to answer 200 (caught up) before it starts, and stops everything after
(hubs with SIGTERM, then Redis's process group).

What the tests check (PROTOCOL.md sections 3-7 and the cluster design):

* test_0_log_layout: the log lives where the design says (`trackhub:partitions` is 16; a
  trip's commands are in stream `trackhub:{p<fnv1a64(id) % 16>}:log`, field `e`, and in no
  other partition).
* test_1_same_frames_and_events_on_every_node: a routed trip created on A, viewers on A, B
  and C (frames, since_event 0), a courier on A driving it past a waypoint
  (wait_at_waypoints false). Frames with the same `t` on two nodes have the same `seq`,
  `status` and a position within 1 m, and at least 80 % of B's (and A's) frames have a
  partner on C. The three viewers get the same events (whole objects, n 1..3:
  trip_created, waypoint_reached, waypoint_resumed). Afterwards every node's
  GET /v1/trips/{id} agrees.
* test_2_trip_created_on_b_shows_in_c_fleet: a trip created and fixed on B appears in C's
  GET /v1/fleet/clusters and in a `viewport` on A, at its fix.
* test_3_sigkill_node_viewer_fails_over: B is killed with SIGKILL while its viewer is
  subscribed; while B is down the courier (on A) moves on, the route is replaced on C
  (`rerouted`) and the trip arrives (`arrived`). The viewer resubscribes on C with
  since_event = the last n it saw: the union has no gap and equals C's own viewer's list.
  Every acked fix is in the trail on A and C once. B restarted (fresh data dir) catches up:
  its trip equals C's (status, last_event, position within 1 m, trail) and its replay of
  events equals C's.
* test_4_redis_outage_no_false_ack: Redis is stopped (SIGTERM; AOF keeps the log); fixes
  sent meanwhile each get `error` `unavailable` (never an ack) and every hub's /healthz
  turns 503 "unavailable". Redis restarted on the same port and directory: every /healthz
  is 200 again, the same fixes resent with the same seq are acked (applied or duplicate),
  and every node's trail holds every acked fix exactly once.

* test_5_new_node_starts_from_the_snapshot: a node started after the whole log was trimmed
  away, just after a snapshot, knows every trip from the snapshot and follows the log after it.
* test_6_devices_are_shared_by_every_node (PROTOCOL 11): a device registered on A sends an
  OsmAnd fix through B; it is in every node's trail with its altitude and battery and moves C's
  viewer's marker; every node shows the same last_seen and last_position (also of a device
  bound to no trip, fixed over OwnTracks); deleted on C, its fixes are refused 404 on A and B;
  a restarted B and a node E started from the snapshot alone (log trimmed) know the devices.

Nothing sleeps to synchronise: every wait is a message, a line, a process exit or a
condition polled with a deadline. No assertion depends on how fast anything is.
"""

import asyncio
import collections
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import sys

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also run as tests-py/test_cluster.py
import hubproc  # noqa: E402
from hubproc import Client, Courier, HubProcess, distance_m, now_ms, offset  # noqa: E402
from trip_driving import redis_server_path  # noqa: E402,F401  (test_stops and others use it from here too)

TICK_HZ = 10
PARTITIONS = 16  # the design's default for --cluster-partitions

# Deadlines (how long a wait may take at most on a loaded machine; never a threshold that
# an assertion compares against).
REDIS_START_DEADLINE_S = 20.0
HEALTH_DEADLINE_S = 30.0
CONVERGE_DEADLINE_S = 20.0
REPLY_DEADLINE_S = 15.0
POLL_S = 0.05  # interval between two polls of a condition

# A straight route about 868 m east along latitude 38.70 (Lisbon), as in test_protocol_e2e.
LAT0, LON0 = 38.70, -9.15
LON1 = -9.14
ROUTE = [[LON0, LAT0], [LON1, LAT0]]


def east(metres, north=0.0):
    """(lat, lon) `metres` east of the route's start, `north` metres off it."""
    return offset(LAT0, LON0, north_m=north, east_m=metres)


def setUpModule():
    hubproc.require_binary()
    if redis_server_path() is None:
        raise unittest.SkipTest("redis-server is not installed (not on PATH nor /usr/bin): "
                                "the cluster tests need Redis 7 to share the log")


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------------------
# Redis: a tiny RESP2 client and the server process
# --------------------------------------------------------------------------------------


class RespError(Exception):
    """An error reply (`-ERR ...`, `-LOADING ...`)."""


class Resp:
    """One connection to Redis speaking RESP2: call("XLEN", "k") -> the parsed reply."""

    def __init__(self, port, timeout=5.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.reader = self.sock.makefile("rb")

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))
        return self._read()

    def _read(self):
        line = self.reader.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("Redis closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RespError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.reader.read(n + 2)
            if len(data) != n + 2:
                raise ConnectionError("Redis closed the connection mid-reply")
            return data[:-2]
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise ConnectionError(f"unexpected RESP reply {line!r}")

    def close(self):
        try:
            self.reader.close()
        finally:
            self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class RedisServer:
    """`redis-server` in the foreground in its own process group, on 127.0.0.1."""

    def __init__(self, directory):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.port = None
        self.proc = None
        self.log_path = os.path.join(directory, "redis.log")

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def start(self):
        """Starts it (on a free port the first time, on the same port and directory after)
        and waits until it answers PING."""
        attempts = 3 if self.port is None else 1
        for attempt in range(attempts):
            port = self.port or free_port()
            try:
                self._start_on(port)
                self.port = port
                return self
            except AssertionError:
                if attempt == attempts - 1:
                    raise
        return self

    def _start_on(self, port):
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [redis_server_path(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "yes", "--dir", self.dir, "--daemonize", "no"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=self.dir,
                start_new_session=True)
        end = time.monotonic() + REDIS_START_DEADLINE_S
        last = None
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"redis-server exited with {self.proc.returncode} before answering "
                                     f"PING on port {port}:\n{self.log_tail()}")
            try:
                with Resp(port, timeout=2.0) as r:
                    last = r.call("PING")
                    if last == "PONG":
                        return
            except (OSError, ConnectionError, RespError) as e:
                last = repr(e)  # not listening yet, or -LOADING while it reads the AOF
            if time.monotonic() > end:
                self.kill()
                raise AssertionError(f"redis-server on port {port} did not answer PING within "
                                     f"{REDIS_START_DEADLINE_S}s (last: {last}):\n{self.log_tail()}")
            time.sleep(POLL_S)

    def client(self):
        return Resp(self.port)

    def get(self, key):
        with self.client() as r:
            return r.call("GET", key)

    def terminate(self, timeout=20):
        """SIGTERM (Redis writes the AOF and exits), waits for the exit; SIGKILL if it hangs."""
        if self.proc is None or self.proc.poll() is not None:
            return None
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return self.proc.returncode

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)

    def log_tail(self, lines=15):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return "(no redis log)"


# --------------------------------------------------------------------------------------
# Test base: one cluster per test
# --------------------------------------------------------------------------------------


class Viewer(Client):
    """A Client whose connection queues every message however long the test does not read
    (max_queue=None), so frames are never held back by the test's pace."""

    @classmethod
    async def open(cls, hub, **kwargs):
        kwargs.setdefault("max_queue", None)
        return await super().open(hub, **kwargs)

    async def read_until_closed(self, timeout=REPLY_DEADLINE_S):
        """Moves everything still queued into `log`, until the connection is closed."""
        deadline = asyncio.get_running_loop().time() + timeout
        try:
            while True:
                await self._next(deadline)
        except websockets.ConnectionClosed:
            return
        except asyncio.TimeoutError:
            raise AssertionError(f"the connection was not closed within {timeout}s") from None

    def events(self, trip):
        return [m for _, m in self.log if m.get("type") == "event" and m.get("trip") == trip]

    def frames(self, trip):
        return [m for _, m in self.log if m.get("type") == "frame" and m.get("trip") == trip]


def health(hub):
    """(status, body) of GET /healthz, or (None, the error) when the hub does not answer."""
    try:
        status, body, raw = hub.http("GET", "/healthz", timeout=5)
        return status, body if body is not None else raw[:200]
    except OSError as e:
        return None, repr(e)


def trail_ts(hub, trip):
    status, body, raw = hub.http("GET", f"/v1/trips/{trip}/trail")
    if status != 200:
        raise AssertionError(f"GET /v1/trips/{trip}/trail on {hub.http_url} answered {status}: {raw[:300]!r}")
    return body["properties"]["ts"]


class ClusterTestCase(hubproc.AsyncTestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="trackhub-cluster-")
        self.addCleanup(tmp.cleanup)
        self.redis = RedisServer(os.path.join(tmp.name, "redis"))
        self.addCleanup(self.redis.kill)
        self.redis.start()
        # Cleanups run last-in first-out: the hubs are stopped before Redis.
        self.hubs = {}
        for name in "ABC":
            self.hubs[name] = self.start_hub(name)

    def start_hub(self, name, *extra):
        # Snapshots every second: each partition's owner writes its own (PROTOCOL 15), and
        # the snapshot tests trim the log once the trip's owner has written one.
        if "--cluster-snapshot-interval" not in extra:
            extra = ("--cluster-snapshot-interval", "1s") + extra
        hub = HubProcess("--cluster", self.redis.url, "--tick-hz", str(TICK_HZ), *extra)
        self.addCleanup(hub.stop, 10)
        hub.start()
        return hub

    async def asyncSetUp(self):
        await super().asyncSetUp()
        self.clients = []
        await self.wait_health(self.hubs, 200)

    async def asyncTearDown(self):
        for c in self.clients:
            try:
                await asyncio.wait_for(c.close(), 5)
            except Exception:
                pass

    # -- diagnostics --

    def logs(self, lines=12):
        out = []
        for name, hub in self.hubs.items():
            rc = hub.proc.poll() if hub.proc is not None else None
            tail = "".join(hub.stderr_text().splitlines(keepends=True)[-lines:])
            out.append(f"--- hub {name} ({hub.http_url}, exit {rc}) stderr tail:\n{tail}")
        out.append(f"--- redis (exit {self.redis.proc.poll()}):\n{self.redis.log_tail(6)}")
        return "\n".join(out)

    def metrics(self, hub):
        """The trackhub_cluster_* lines of a hub's /metrics, for failure messages."""
        try:
            text = hub.http("GET", "/metrics", timeout=5)[2].decode(errors="replace")
        except OSError as e:
            return f"(no metrics: {e!r})"
        return "\n".join(line for line in text.splitlines() if line.startswith("trackhub_cluster"))

    # -- waiting --

    async def eventually(self, probe, what, deadline_s=CONVERGE_DEADLINE_S):
        """Polls `probe()` (run in a thread: it may do blocking HTTP) until it returns
        (True, detail); fails with the last detail after the deadline. Returns the detail.
        A probe that raises OSError or AssertionError counts as "not yet"."""
        end = time.monotonic() + deadline_s
        while True:
            try:
                ok, detail = await asyncio.to_thread(probe)
            except (OSError, AssertionError) as e:  # a hub not answering (yet), a 404 (yet)
                ok, detail = False, repr(e)
            if ok:
                return detail
            if time.monotonic() > end:
                self.fail(f"{what}: not so within {deadline_s}s; last seen: {detail}\n{self.logs()}")
            await asyncio.sleep(POLL_S)

    async def wait_health(self, hubs, want, deadline_s=HEALTH_DEADLINE_S):
        """Waits until each hub's /healthz has answered `want` (each at least once).
        Returns {name: (status, body)} of those answers."""
        seen = {}
        last = {}

        def probe():
            for name, hub in hubs.items():
                if name in seen:
                    continue
                answer = health(hub)
                last[name] = answer
                if answer[0] == want:
                    seen[name] = answer
            return len(seen) == len(hubs), last

        await self.eventually(probe, f"/healthz answering {want} on hubs {sorted(hubs)}", deadline_s)
        return seen

    # -- clients --

    async def client(self, hub):
        c = await Viewer.open(hub)
        self.clients.append(c)
        return c

    async def subscribe(self, hub, trip, since_event=0, tag="sub"):
        c = await self.client(hub)
        await c.send(op="subscribe", trip=trip, mode="frames", since_event=since_event, id=tag)
        snap = await c.wait_type("snapshot", REPLY_DEADLINE_S, re=tag)
        return c, snap

    async def reply(self, conn, msg, tag):
        """Sends `msg` with id `tag`; returns the direct reply (ack or error)."""
        await conn.send(**msg, id=tag)
        return await conn.wait_for(lambda m: m.get("re") == tag, REPLY_DEADLINE_S, what=f"the reply to {tag}")

    async def wait_frame_at(self, viewer, trip, lat, lon, what):
        return await viewer.wait_for(
            lambda m: m.get("type") == "frame" and m.get("trip") == trip
            and distance_m(m["lat"], m["lon"], lat, lon) <= 1.0,
            REPLY_DEADLINE_S, what=what)

    async def wait_event(self, viewer, trip, name):
        """The first event `name` of `trip` this viewer received (from its whole log)."""
        found = await viewer.scan(0, lambda e: e.get("trip") == trip and e.get("name") == name, "event",
                                  REPLY_DEADLINE_S, what=f"event {name} of {trip}")
        return found[-1]

    def known_everywhere(self, trip, hubs=None):
        """A probe: GET /v1/trips/{trip} is 200 on every hub."""
        hubs = hubs or self.hubs

        def probe():
            answers = {name: hub.http("GET", f"/v1/trips/{trip}")[0] for name, hub in hubs.items()}
            return all(s == 200 for s in answers.values()), answers
        return probe

    def trips_agree(self, trip, hubs):
        """A probe: GET /v1/trips/{trip} on every hub has the same status and last_event, and
        positions within 1 m of the first hub's."""
        def probe():
            docs = {}
            for name, hub in hubs.items():
                try:
                    status, body, raw = hub.http("GET", f"/v1/trips/{trip}")
                except OSError as e:
                    return False, f"{name}: {e!r}"
                if status != 200:
                    return False, f"{name}: {status} {raw[:200]!r}"
                docs[name] = body
            first = next(iter(docs.values()))
            view = {n: (d["status"], d["last_event"], d["position"]) for n, d in docs.items()}
            for d in docs.values():
                if (d["status"], d["last_event"]) != (first["status"], first["last_event"]):
                    return False, view
                p, q = d["position"], first["position"]
                if (p is None) != (q is None):
                    return False, view
                if p is not None and distance_m(p["lat"], p["lon"], q["lat"], q["lon"]) > 1.0:
                    return False, view
            return True, docs
        return probe


def pair_frames(frames, by_t):
    """[(frame, partner)] for the frames whose `t` is in `by_t`, and the mismatching pairs
    (seq or status different, or positions more than 1 m apart)."""
    pairs = [(f, by_t[f["t"]]) for f in frames if f["t"] in by_t]
    bad = []
    for f, g in pairs:
        d = distance_m(f["lat"], f["lon"], g["lat"], g["lon"])
        if f["seq"] != g["seq"] or f["status"] != g["status"] or d > 1.0:
            bad.append({"t": f["t"], "seq": (f["seq"], g["seq"]), "status": (f["status"], g["status"]),
                        "distance_m": round(d, 3)})
    return pairs, bad


# --------------------------------------------------------------------------------------
# The scenarios
# --------------------------------------------------------------------------------------


class TestCluster(ClusterTestCase):
    async def test_0_log_layout(self):
        trip = "c0-layout"
        self.hubs["A"].create_trip(id=trip, route=ROUTE)
        with self.redis.client() as r:
            self.assertEqual(r.call("GET", "trackhub:partitions"), str(PARTITIONS).encode(),
                             "trackhub:partitions holds N (default 16)")
            home = fnv1a64(trip) % PARTITIONS
            found = {}
            for p in range(PARTITIONS):
                entries = r.call("XRANGE", "trackhub:{p%d}:log" % p, "-", "+")
                for entry_id, fields in entries or []:
                    kv = dict(zip(fields[::2], fields[1::2]))
                    self.assertIn(b"e", kv, f"entry {entry_id} of trackhub:{{p{p}}}:log has no field e: {fields}")
                    json.loads(kv[b"e"])  # the command as JSON
                    if trip.encode() in kv[b"e"]:
                        found.setdefault(p, []).append(kv[b"e"])
        self.assertEqual(sorted(found), [home],
                         f"the trip's commands are in partition fnv1a64(id) % 16 = {home} only: {found}")

    async def test_1_same_frames_and_events_on_every_node(self):
        trip = "c1-route"
        wp_lat, wp_lon = east(400)
        created = self.hubs["A"].create_trip(id=trip, route=ROUTE, waypoints=[{"lat": wp_lat, "lon": wp_lon}],
                                             config={"wait_at_waypoints": False})
        self.assertEqual(created["status"], "pending")
        await self.eventually(self.known_everywhere(trip), f"{trip} readable on every hub")
        viewers = {}
        for name in "ABC":
            viewers[name], snap = await self.subscribe(self.hubs[name], trip, tag=f"sub-{name}")
            self.assertEqual(snap["status"], "pending", f"snapshot on {name}")
            self.assertIs(snap["recovered"], True, f"snapshot on {name}")
        courier = await self.client(self.hubs["A"])

        c = Courier(trip)
        stops = [20, 120, 220, 320, 400, 500, 600, 700, 800]  # 800 m: not yet within 50 m of the end
        acks = []
        for i, d in enumerate(stops):
            lat, lon = east(d)
            ack = await self.reply(courier, c.fix(lat, lon, duration_ms=1000), f"f{i}")
            acks.append(ack)
            self.assertEqual((ack["type"], ack.get("seq"), ack.get("applied")), ("ack", c.seq, True), ack)
            # The animation is over (on every node) before the next fix: frames keep coming for
            # 1 s. (This also moves every viewer's frames up to that one into its log.)
            for name in "ABC":
                await self.wait_frame_at(viewers[name], trip, lat, lon, f"a frame at {d} m on {name}")

        for name in "ABC":
            await self.wait_event(viewers[name], trip, "waypoint_resumed")
        frames = {name: viewers[name].frames(trip) for name in "ABC"}
        by_t_c = {f["t"]: f for f in frames["C"]}
        for name in "AB":
            own = frames[name]
            self.assertGreaterEqual(len(own), len(stops), f"{name} got a frame per animation at least")
            pairs, bad = pair_frames(own, by_t_c)
            print(f"\n  frames: {name} {len(own)}, C {len(frames['C'])}, same t {len(pairs)}, mismatched {len(bad)}")
            self.assertGreaterEqual(
                len(pairs), 0.8 * len(own),
                f"{len(pairs)} of {name}'s {len(own)} frames have a frame with the same t on C; "
                f"{name} t[:5]={[f['t'] for f in own[:5]]} C t[:5]={[f['t'] for f in frames['C'][:5]]}")
            self.assertEqual(bad, [], f"frames with the same t differ between {name} and C")

        events = {name: viewers[name].events(trip) for name in "ABC"}
        self.assertEqual([(e["n"], e["name"]) for e in events["C"]],
                         [(1, "trip_created"), (2, "waypoint_reached"), (3, "waypoint_resumed")], events["C"])
        self.assertEqual(events["B"], events["C"], "B's and C's viewers got the same events")
        self.assertEqual(events["A"], events["C"], "A's and C's viewers got the same events")

        docs = await self.eventually(self.trips_agree(trip, self.hubs), "GET /v1/trips/{id} agrees on A, B, C")
        self.assertEqual(docs["C"]["status"], "moving")
        self.assertEqual(docs["C"]["last_event"], 3)
        self.assertEqual(docs["C"]["waypoints"][0]["visited"], True)
        p = docs["C"]["position"]
        self.assertLessEqual(distance_m(p["lat"], p["lon"], *east(800)), 1.0, p)

    async def test_1b_jumps_and_arrival_alike_on_every_node(self):
        """PROTOCOL 6.2 and 6.7 on the shared grid: every node jumps on the same frame and
        takes the arrived marker to the destination on the same frames."""
        leap, door = "c1b-leap", "c1b-door"
        for trip in (leap, door):
            self.hubs["A"].create_trip(id=trip, route=ROUTE)
            await self.eventually(self.known_everywhere(trip), f"{trip} readable on every hub")
        viewers = {}
        for name in "ABC":
            viewers[name] = {trip: (await self.subscribe(self.hubs[name], trip, tag=f"sub-{trip}-{name}"))[0] for trip in (leap, door)}
        courier = await self.client(self.hubs["B"])

        # speed_mps 0: the catch-up limit is 5 m/s, so 680 m asked for in 200 ms is a jump.
        c = Courier(leap)
        for i, (d, duration) in enumerate(((20, 1000), (700, 200))):
            ack = await self.reply(courier, c.fix(*east(d), duration_ms=duration, speed_mps=0), f"leap{i}")
            self.assertEqual((ack["type"], ack.get("applied")), ("ack", True), ack)
        jumps = {name: await viewers[name][leap].wait_for(
            lambda m: m.get("type") == "frame" and m.get("trip") == leap and m.get("jump") is True,
            REPLY_DEADLINE_S, what=f"the jump frame on {name}") for name in "ABC"}
        self.assertLessEqual(distance_m(jumps["C"]["lat"], jumps["C"]["lon"], *east(700)), 1.0, jumps["C"])
        self.assertEqual(jumps["A"], jumps["C"])
        self.assertEqual(jumps["B"], jumps["C"])

        # 30 m short of the end: arrived there, then on to the destination.
        c = Courier(door)
        end_m = distance_m(LAT0, LON0, LAT0, LON1)
        for i, d in enumerate((20, end_m - 30)):
            ack = await self.reply(courier, c.fix(*east(d), duration_ms=1000), f"door{i}")
            self.assertEqual((ack["type"], ack.get("applied")), ("ack", True), ack)
        last = {name: await viewers[name][door].wait_for(
            lambda m: m.get("type") == "frame" and m.get("trip") == door and m.get("progress") == 1,
            REPLY_DEADLINE_S, what=f"the frame at the destination on {name}") for name in "ABC"}
        self.assertLessEqual(distance_m(last["C"]["lat"], last["C"]["lon"], LAT0, LON1), 0.01, last["C"])
        self.assertEqual((last["C"]["status"], last["C"]["remaining_m"], last["C"]["eta_s"]), ("arrived", 0, 0), last["C"])
        self.assertEqual(last["A"], last["C"])
        self.assertEqual(last["B"], last["C"])
        arrived = {name: await self.wait_event(viewers[name][door], door, "arrived") for name in "ABC"}
        self.assertEqual(arrived["A"], arrived["C"])
        self.assertEqual(arrived["B"], arrived["C"])

    async def test_2_trip_created_on_b_shows_in_c_fleet(self):
        trip = "c2-fleet"
        lat, lon = 60.1710, 24.9440  # Helsinki: nothing else is in this cluster's fleet
        bbox = [24.93, 60.16, 24.96, 60.18]
        fleet = await self.client(self.hubs["A"])
        first = await self.reply(fleet, {"op": "viewport", "bbox": bbox, "zoom": 16}, "vp")
        self.assertEqual((first["type"], first["total"], first["items"]), ("clusters", 0, []), first)

        self.hubs["B"].create_trip(id=trip)
        status, body, raw = self.hubs["B"].http(
            "POST", f"/v1/trips/{trip}/fixes", {"fixes": [{"lat": lat, "lon": lon, "ts": now_ms() - 1000, "seq": 1}]})
        self.assertEqual(status, 200, raw)
        self.assertEqual(body["acks"], [{"trip": trip, "seq": 1, "applied": True}])

        query = "/v1/fleet/clusters?zoom=16&bbox=" + ",".join(str(x) for x in bbox)

        def on_c():
            status, body, raw = self.hubs["C"].http("GET", query)
            if status != 200:
                return False, f"{status} {raw[:200]!r}"
            items = [i for i in body["items"] if i["id"] == trip]
            return bool(items), body
        body = await self.eventually(on_c, f"{trip} in C's GET {query}")
        (item,) = [i for i in body["items"] if i["id"] == trip]
        self.assertEqual((item["count"], item["trip"]), (1, trip), item)
        self.assertLessEqual(distance_m(item["lat"], item["lon"], lat, lon), 1.0, item)
        self.assertEqual(body["total"], 1, body)

        update = await fleet.wait_for(
            lambda m: m.get("type") == "clusters" and any(i["id"] == trip for i in m["items"]),
            CONVERGE_DEADLINE_S, what=f"a clusters update on A with {trip}")
        (item,) = [i for i in update["items"] if i["id"] == trip]
        self.assertLessEqual(distance_m(item["lat"], item["lon"], lat, lon), 1.0, item)

    async def test_3_sigkill_node_viewer_fails_over(self):
        trip = "c3-failover"
        A, C = self.hubs["A"], self.hubs["C"]
        wp_lat, wp_lon = east(200)
        A.create_trip(id=trip, route=ROUTE, waypoints=[{"lat": wp_lat, "lon": wp_lon}],
                      config={"wait_at_waypoints": False})
        await self.eventually(self.known_everywhere(trip), f"{trip} readable on every hub")
        view_b, _ = await self.subscribe(self.hubs["B"], trip, tag="sub-b")
        view_c, _ = await self.subscribe(C, trip, tag="sub-c")
        courier = await self.client(A)
        c = Courier(trip)
        acked = []

        async def drive(lat, lon, tag, target=None):
            ack = await self.reply(courier, c.fix(lat, lon, duration_ms=1000), tag)
            self.assertEqual((ack["type"], ack.get("applied")), ("ack", True), ack)
            acked.append(c.ts)
            await self.wait_frame_at(view_c, trip, *(target or (lat, lon)), f"the frame at {tag}'s target on C")

        await drive(*east(20), "d1")
        await drive(*east(120), "d2")
        await drive(*east(250), "d3")  # past the waypoint: one that does not wait clamps nothing (6.6)
        await self.wait_event(view_b, trip, "waypoint_resumed")

        # B dies; its viewer's connection drops. What did it see?
        self.hubs["B"].kill()
        await view_b.read_until_closed()
        seen_on_b = view_b.events(trip)
        last_n = seen_on_b[-1]["n"]
        self.assertEqual([e["n"] for e in seen_on_b], list(range(1, last_n + 1)), seen_on_b)

        # While B is down: the trip moves on, gets a longer route (on C) and arrives.
        await drive(*east(400), "d4")
        lon2 = -9.135
        route2 = [[LON0, LAT0], [lon2, LAT0]]
        status, body, raw = C.http("PUT", f"/v1/trips/{trip}/route", {"route": route2})
        self.assertEqual(status, 200, raw)
        await self.wait_event(view_c, trip, "rerouted")
        await drive(LAT0, lon2, "d5")
        arrived = await self.wait_event(view_c, trip, "arrived")

        # The viewer comes back on C and asks for what it missed.
        again, snap = await self.subscribe(C, trip, since_event=last_n, tag="resub")
        self.assertIs(snap["recovered"], True, snap)
        await self.wait_event(again, trip, "arrived")
        union = seen_on_b + again.events(trip)
        ns = [e["n"] for e in union]
        self.assertEqual(ns, list(range(1, arrived["n"] + 1)), f"event numbers across the failover: {ns}")
        self.assertEqual(union, view_c.events(trip), "the viewer's events equal C's own viewer's")
        self.assertEqual([e["name"] for e in union[last_n:]], ["rerouted", "arrived"])

        # No acked fix lost, none stored twice.
        for name, hub in (("A", A), ("C", C)):
            counts = collections.Counter(trail_ts(hub, trip))
            self.assertEqual({ts: counts[ts] for ts in acked}, {ts: 1 for ts in acked},
                             f"acked fixes in {name}'s trail (ts: times stored)")

        # B restarted (fresh data dir): it rebuilds the trip from the snapshot and the log.
        self.hubs["B"] = self.start_hub("B")
        await self.wait_health({"B": self.hubs["B"]}, 200)
        docs = await self.eventually(self.trips_agree(trip, {"C": C, "B": self.hubs["B"]}),
                                     "the restarted B's trip agrees with C's")
        self.assertEqual((docs["B"]["status"], docs["B"]["last_event"]), ("arrived", arrived["n"]))
        self.assertEqual(trail_ts(self.hubs["B"], trip), trail_ts(C, trip), "B's trail equals C's")
        replay, snap = await self.subscribe(self.hubs["B"], trip, since_event=0, tag="replay-b")
        self.assertEqual(snap["last_event"], arrived["n"])
        await self.wait_event(replay, trip, "arrived")
        self.assertEqual(replay.events(trip), view_c.events(trip), "the restarted B replays C's events")
        print(f"\n  events: B's viewer saw 1..{last_n} before SIGKILL, C replayed {last_n + 1}..{arrived['n']}; "
              f"{len(acked)} acked fixes in every trail; restarted B agrees with C")

    async def test_4_redis_outage_no_false_ack(self):
        trip = "c4-outage"
        A = self.hubs["A"]
        A.create_trip(id=trip)
        courier = await self.client(A)
        base = now_ms() - 60_000
        acked = set()

        def fix(seq):
            # A slow walk north (about 11 m per second of ts): every fix applies.
            return {"op": "fix", "trip": trip, "seq": seq, "ts": base + seq * 1000,
                    "lat": 48.0 + seq * 0.0001, "lon": 11.0, "duration_ms": 500}

        for seq in (1, 2, 3):
            ack = await self.reply(courier, fix(seq), f"s{seq}")
            self.assertEqual((ack["type"], ack.get("seq"), ack.get("applied")), ("ack", seq, True), ack)
            acked.add(seq)

        self.redis.terminate()
        for seq in (4, 5, 6):
            answer = await self.reply(courier, fix(seq), f"down{seq}")
            self.assertEqual((answer["type"], answer.get("code")), ("error", "unavailable"),
                             f"fix {seq} sent while Redis is down: {answer}")
        down = await self.wait_health(self.hubs, 503)
        for name, (status, body) in down.items():
            self.assertEqual(body.get("status") if isinstance(body, dict) else body, "unavailable",
                             f"{name}'s /healthz body while Redis is down")

        self.redis.start()  # same port, same directory: the AOF brings the log back
        await self.wait_health(self.hubs, 200)
        for seq in (4, 5, 6):
            ack = await self.reply(courier, fix(seq), f"again{seq}")
            self.assertEqual(ack["type"], "ack",
                             f"fix {seq} resent after Redis came back and every /healthz answered 200 "
                             f"(\"while the hub can ack fixes\", PROTOCOL section 1): {ack}\n{self.metrics(A)}")
            self.assertTrue(ack["applied"] or ack.get("reason") == "duplicate", ack)
            acked.add(seq)
        for seq in (7, 8):
            ack = await self.reply(courier, fix(seq), f"s{seq}")
            self.assertEqual((ack["type"], ack.get("applied")), ("ack", True), ack)
            acked.add(seq)

        want = sorted(fix(seq)["ts"] for seq in acked)
        for name, hub in self.hubs.items():
            def probe(hub=hub):
                ts = trail_ts(hub, trip)
                return set(want) <= set(ts), ts
            got = await self.eventually(probe, f"every acked fix in {name}'s trail")
            self.assertEqual(sorted(got), want, f"{name}'s trail: every acked fix exactly once")
        print(f"\n  Redis down: {len(down)} hubs 503, 3 fixes unavailable; {len(acked)} acked, "
              f"each once in every trail")


    async def test_5_new_node_starts_from_the_snapshot(self):
        """A node that starts loads the snapshot and replays only the log after it: with the
        whole log trimmed away after a snapshot, a new node still knows every trip."""
        trip = "c5-snapshot"
        A, C = self.hubs["A"], self.hubs["C"]
        # D writes snapshots every second (A, B and C every 30 s, the default).
        self.hubs["D"] = self.start_hub("D", "--cluster-snapshot-interval", "1s")
        await self.wait_health({"D": self.hubs["D"]}, 200)
        A.create_trip(id=trip, route=ROUTE)
        courier = await self.client(A)
        c = Courier(trip)
        acked = []
        for metres in (30, 90, 150):
            ack = await self.reply(courier, c.fix(*east(metres), duration_ms=300), f"m{metres}")
            self.assertEqual((ack["type"], ack.get("applied")), ("ack", True), ack)
            acked.append(c.ts)
        await self.eventually(self.trips_agree(trip, {"A": A, "C": C, "D": self.hubs["D"]}), "the trip at rest everywhere")

        def snapshot_has_the_fixes():
            # The owner of the trip's partition writes that partition's snapshot (PROTOCOL 15).
            with self.redis.client() as r:
                raw = r.call("GET", "trackhub:{p%d}:snapshot" % (fnv1a64(trip) % PARTITIONS))
            trips = json.loads(raw)["trips"] if raw else []
            trails = [[f["fix"]["ts"] for f in t["trail"]] for t in trips if t["trip"]["id"] == trip]
            return trails == [acked], trails
        await self.eventually(snapshot_has_the_fixes, "a snapshot of the trip's partition after the last fix")

        # Remove every log entry: what a new node knows can only come from the snapshot.
        with self.redis.client() as r:
            for p in range(16):
                r.call("XTRIM", "trackhub:{p%d}:log" % p, "MAXLEN", "0")
            self.assertEqual(sum(r.call("XLEN", "trackhub:{p%d}:log" % p) for p in range(16)), 0)

        E = self.hubs["E"] = self.start_hub("E")
        await self.wait_health({"E": E}, 200)
        docs = await self.eventually(self.trips_agree(trip, {"C": C, "E": E}), "the new node E agrees with C")
        self.assertEqual(docs["E"]["status"], "moving")
        self.assertEqual([p[2] for p in docs["E"]["trail"]], acked, "E's snapshot trail: the acked fixes")
        replay, snap = await self.subscribe(E, trip, since_event=0, tag="replay-e")
        self.assertIs(snap["recovered"], True)
        created = await self.wait_event(replay, trip, "trip_created")
        self.assertEqual(created["n"], 1)

        # And E follows the log from where the snapshot ends: a new fix moves its marker too.
        ack = await self.reply(courier, c.fix(*east(210), duration_ms=300), "after")
        self.assertEqual((ack["type"], ack.get("applied")), ("ack", True), ack)
        await self.wait_frame_at(replay, trip, *east(210), "E's frame at the fix after the snapshot")
        await self.eventually(self.trips_agree(trip, {"C": C, "E": E}), "E and C agree after the new fix")
        print(f"\n  snapshot: log trimmed to 0 entries, new node E rebuilt {trip} (status, events, "
              f"trail of {len(acked)}) and followed the next fix")

    async def test_6_devices_are_shared_by_every_node(self):
        """PROTOCOL 11 in a cluster: a device registered on A sends OsmAnd fixes through B
        into its trip (trail on every node, frame on C's viewer); every node shows the same
        last_seen; a delete on C refuses the device's fixes on every node; a restarted node
        and a new one started after the log was trimmed away know the devices."""
        trip, phone, loose = "c6-devices", "phone-c6-0123456789", "loose-c6-0123456789"
        A, B, C = self.hubs["A"], self.hubs["B"], self.hubs["C"]
        self.hubs["D"] = self.start_hub("D", "--cluster-snapshot-interval", "1s")
        await self.wait_health({"D": self.hubs["D"]}, 200)
        A.create_trip(id=trip, route=ROUTE)
        await self.eventually(self.known_everywhere(trip), "the trip on every node")
        viewer, _ = await self.subscribe(C, trip, tag="view-c")

        status, doc, raw = A.http("PUT", f"/v1/devices/{phone}", {"trip": trip, "name": "Ana"})
        self.assertEqual((status, doc["trip"], doc["last_seen"]), (200, trip, None), raw)
        # Straight to B: B looks again once it has applied the log up to the fix's arrival.
        lat, lon = east(120)
        ts = (now_ms() - 2000) // 1000 * 1000
        status, _, payload = B.http("GET", f"/v1/osmand?id={phone}&lat={lat}&lon={lon}&timestamp={ts // 1000}"
                                           f"&altitude=42.5&batt=77&speed=10")
        self.assertEqual((status, payload), (200, b""))
        await self.wait_frame_at(viewer, trip, lat, lon, "C's frame at the fix sent to B")

        def trail_everywhere():
            got = {}
            for name in "ABC":
                status, body, raw = self.hubs[name].http("GET", f"/v1/trips/{trip}/trail")
                props = body["properties"] if status == 200 else {}
                got[name] = (props.get("ts"), props.get("altitude"), props.get("battery"))
            return all(v == ([ts], [42.5], [77]) for v in got.values()), got
        await self.eventually(trail_everywhere, "the fix with its altitude and battery in every node's trail")

        def same_device_everywhere(device, hubs):
            def probe():
                seen = {}
                for name in hubs:
                    status, body, raw = self.hubs[name].http("GET", f"/v1/devices/{device}")
                    seen[name] = (status, body.get("last_seen"), body.get("last_position")) if status == 200 else (status,)
                first = next(iter(seen.values()))
                return first[0] == 200 and first[1] is not None and all(v == first for v in seen.values()), seen
            return probe
        seen = await self.eventually(same_device_everywhere(phone, "ABCD"), "the same last_seen on every node")
        self.assertAlmostEqual(seen["A"][2]["lat"], lat, places=6)

        # Bound to no trip: an OwnTracks fix through B only moves last_seen, on every node.
        self.assertEqual(C.http("PUT", f"/v1/devices/{loose}", {"trip": None})[0], 200)
        status, doc, raw = B.http("POST", f"/v1/owntracks/{loose}",
                                  {"_type": "location", "lat": 38.71, "lon": -9.145, "tst": ts // 1000})
        self.assertEqual((status, doc), (200, []), raw)
        seen_loose = await self.eventually(same_device_everywhere(loose, "ABCD"), "the loose device's last_seen everywhere")
        self.assertEqual(seen_loose["A"][2], {"lat": 38.71, "lon": -9.145})

        # Forgotten on C: refused (404, as an unknown device) on every node, nothing stored.
        self.assertEqual(C.http("DELETE", f"/v1/devices/{phone}")[0], 200)
        for name in "AB":
            hub = self.hubs[name]
            await self.eventually(lambda: ((s := hub.http("GET", f"/v1/devices/{phone}")[0]) == 404, s),
                                  f"the delete applied on {name}")
            status, _, raw = hub.http("GET", f"/v1/osmand?id={phone}&lat={lat}&lon={lon}&timestamp={ts // 1000 + 5}")
            self.assertEqual(status, 404, raw)
        self.assertEqual(trail_ts(A, trip), [ts], "a forgotten device's fixes are not stored")

        # B restarted (a fresh data directory): it knows the devices from the snapshot and the log.
        B.stop(10)
        B = self.hubs["B"] = self.start_hub("B")
        await self.wait_health({"B": B}, 200)
        await self.eventually(same_device_everywhere(loose, "AB"), "the restarted node knows the loose device")
        self.assertEqual(B.http("GET", f"/v1/devices/{phone}")[0], 404)

        # A snapshot holds the devices: with the whole log trimmed away a new node E knows them.
        def snapshot_devices():
            with self.redis.client() as r:
                raw = r.call("GET", "trackhub:snapshot:meta")
            registrations = (json.loads(raw).get("devices") or {}).get("registrations", {}) if raw else {}
            return sorted(registrations) == [loose], sorted(registrations)
        await self.eventually(snapshot_devices, "a snapshot after the delete, with the loose device only")
        with self.redis.client() as r:
            for p in range(PARTITIONS):
                r.call("XTRIM", "trackhub:{p%d}:log" % p, "MAXLEN", "0")
        E = self.hubs["E"] = self.start_hub("E")
        await self.wait_health({"E": E}, 200)
        await self.eventually(same_device_everywhere(loose, "AE"), "the new node E knows the loose device")
        self.assertEqual(E.http("GET", f"/v1/devices/{phone}")[0], 404)
        # And E's devices follow the log: a fix through E moves last_seen on A.
        status, doc, raw = E.http("POST", f"/v1/owntracks/{loose}",
                                  {"_type": "location", "lat": 38.72, "lon": -9.145, "tst": ts // 1000 + 1})
        self.assertEqual((status, doc), (200, []), raw)
        moved = await self.eventually(same_device_everywhere(loose, "ABCDE"), "E's fix of the loose device everywhere")
        self.assertEqual(moved["A"][2], {"lat": 38.72, "lon": -9.145})
        print(f"\n  devices: registered on A, fixed through B (trail and frame on C), deleted on C and "
              f"refused everywhere, known to a restarted B and to E started from the snapshot alone")


if __name__ == "__main__":
    unittest.main()
