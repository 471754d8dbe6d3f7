"""Crash recovery of the SQLite store against the real release binary (PROTOCOL section 7).

    swift build -c release
    TRACKHUB_BIN=$(swift build -c release --show-bin-path) python3 -m unittest tests-py/test_crash_recovery.py -v

* test_sigkill_rounds: several courier connections push fixes (with seq) as fast as acks
  allow while the hub is killed with SIGKILL at random moments, 20 rounds on the same data
  directory. Couriers resend un-acked fixes after reconnecting (`duplicate` acks are fine).
  After every restart each acked (trip, seq) must be in GET /v1/trips/{id}/trail exactly once.
  Prints `acked N, lost 0`.
* test_restart_keeps_status_and_snapshot: trips holding at a waypoint, off route and arrived
  come back after SIGKILL in the same status with an equal snapshot, and `since_event: 0`
  replays their stored events.
"""

import asyncio
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import websockets

BIN = os.environ.get("TRACKHUB_BIN")

ROUNDS = 20
COURIERS = 6
WINDOW = 32  # fixes in flight per courier


class Hub:
    """A `trackhub serve` process on a free port with the given data directory."""

    def __init__(self, data_dir, extra=()):
        self.proc = subprocess.Popen(
            [os.path.join(BIN, "trackhub"), "serve", "--listen", "127.0.0.1:0", "--data", data_dir,
             "--max-fix-rate", "1000000", "--log-level", "warn", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 15
        while True:
            line = self.proc.stdout.readline()
            if line.startswith("listening on http://"):
                self.host, port = line.strip()[len("listening on http://"):].rsplit(":", 1)
                self.port = int(port)
                break
            if not line or time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError(f"hub did not start: {self.proc.stderr.read()}")

    @property
    def ws_url(self):
        return f"ws://{self.host}:{self.port}/v1/ws"

    def request(self, method, path, body=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            payload = None if body is None else json.dumps(body)
            conn.request(method, path, body=payload, headers={"content-type": "application/json"})
            response = conn.getresponse()
            data = response.read()
            return response.status, (json.loads(data) if data else None)
        finally:
            conn.close()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


def trail_seqs(hub, trip):
    status, body = hub.request("GET", f"/v1/trips/{trip}/trail")
    if status == 404:
        return []
    assert status == 200, (status, body)
    return body["properties"]["seq"]


class Courier:
    """One courier: a trip, the fixes it sent and which of them were acked."""

    def __init__(self, trip, base_ts):
        self.trip = trip
        self.base_ts = base_ts
        self.next_seq = 0
        self.acked = set()
        self.unacked = []  # seqs sent (or to resend) without an ack yet, in order

    def fix_message(self, seq):
        # A slow walk north-east: every fix applies (well under max_speed_mps).
        return json.dumps({
            "op": "fix", "trip": self.trip, "seq": seq, "ts": self.base_ts + seq * 1000,
            "lat": 48.0 + seq * 0.00005, "lon": 11.0 + seq * 0.00005, "duration_ms": 0,
        })

    async def run(self, url, stop):
        """Resends un-acked fixes, then pushes new ones keeping WINDOW in flight, until the
        connection drops (the hub was killed) or `stop` is set."""
        try:
            async with websockets.connect(url, subprotocols=["trackhub.v1"], max_queue=None) as ws:
                in_flight = set()
                resend = list(self.unacked)

                async def sender():
                    while not stop.is_set():
                        while len(in_flight) >= WINDOW:
                            await asyncio.sleep(0)
                            if stop.is_set():
                                return
                            await wake.wait()
                            wake.clear()
                        if resend:
                            seq = resend.pop(0)
                        else:
                            seq = self.next_seq
                            self.next_seq += 1
                            self.unacked.append(seq)
                        in_flight.add(seq)
                        await ws.send(self.fix_message(seq))

                wake = asyncio.Event()
                send_task = asyncio.ensure_future(sender())
                try:
                    async for raw in ws:
                        message = json.loads(raw)
                        if message.get("type") == "ack" and message.get("trip") == self.trip:
                            seq = message["seq"]
                            self.acked.add(seq)
                            in_flight.discard(seq)
                            try:
                                self.unacked.remove(seq)
                            except ValueError:
                                pass
                            wake.set()
                        elif message.get("type") == "error":
                            raise AssertionError(f"hub error: {message}")
                finally:
                    send_task.cancel()
                    try:
                        await send_task
                    except (asyncio.CancelledError, websockets.ConnectionClosed, OSError):
                        pass
        except (websockets.ConnectionClosed, OSError, asyncio.CancelledError):
            pass


@unittest.skipUnless(BIN, "set TRACKHUB_BIN to the release build's bin directory (swift build -c release --show-bin-path)")
class CrashRecoveryTest(unittest.TestCase):
    def setUp(self):
        self.data_dir = tempfile.mkdtemp(prefix="trackhub-crash-")
        self.hubs = []

    def tearDown(self):
        for hub in self.hubs:
            hub.kill()
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def start_hub(self):
        hub = Hub(self.data_dir)
        self.hubs.append(hub)
        return hub

    def check_trails(self, hub, couriers):
        """Every acked fix is in the trail exactly once; returns the number acked."""
        total = 0
        for courier in couriers:
            seqs = trail_seqs(hub, courier.trip)
            counts = {}
            for seq in seqs:
                counts[seq] = counts.get(seq, 0) + 1
            twice = sorted(seq for seq, n in counts.items() if n > 1)
            lost = sorted(seq for seq in courier.acked if seq not in counts)
            self.assertEqual(twice, [], f"{courier.trip}: fixes stored twice")
            self.assertEqual(lost, [], f"{courier.trip}: acked fixes lost")
            total += len(courier.acked)
        return total

    def test_sigkill_rounds(self):
        rng = random.Random(int(os.environ.get("CRASH_SEED", "7")))
        base_ts = int(time.time() * 1000) - 86_400_000
        couriers = [Courier(f"crash-{i}", base_ts) for i in range(COURIERS)]
        created = set()
        started = time.monotonic()
        for round_number in range(ROUNDS):
            hub = self.start_hub()
            self.check_trails(hub, couriers)
            for courier in couriers:
                if courier.trip not in created:
                    status, body = hub.request("POST", "/v1/trips", {"id": courier.trip})
                    self.assertIn(status, (201, 409), body)
                    created.add(courier.trip)

            async def round_():
                stop = asyncio.Event()
                tasks = [asyncio.ensure_future(c.run(hub.ws_url, stop)) for c in couriers]
                await asyncio.sleep(rng.uniform(0.2, 1.2))
                # SIGKILL at a random moment, mid-stream: acks may be on their way.
                hub.proc.send_signal(signal.SIGKILL)
                await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)
                stop.set()

            asyncio.run(round_())
            hub.kill()
        hub = self.start_hub()
        acked = self.check_trails(hub, couriers)
        elapsed = time.monotonic() - started
        self.assertGreater(acked, ROUNDS * COURIERS, "too few fixes acked to mean anything")
        print(f"\nacked {acked}, lost 0 ({ROUNDS} SIGKILL rounds, {COURIERS} couriers, {elapsed:.1f} s)")

    def test_restart_keeps_status_and_snapshot(self):
        hub = self.start_hub()
        now = int(time.time() * 1000)
        base = now - 3_600_000
        # A route due north, about 2.2 km, with a waypoint half way.
        route = [[11.0, 48.0], [11.0, 48.01], [11.0, 48.02]]

        def create(trip, waypoints, wait):
            status, body = hub.request("POST", "/v1/trips", {
                "id": trip, "route": route, "waypoints": waypoints,
                "rider": {"id": "r-" + trip, "name": "Rider " + trip},
                "config": {"wait_at_waypoints": wait}})
            self.assertEqual(status, 201, body)

        def push(trip, points):
            fixes = [{"lat": lat, "lon": lon, "ts": base + (i + 1) * 60_000, "seq": i, "duration_ms": 0}
                     for i, (lat, lon) in enumerate(points)]
            status, body = hub.request("POST", f"/v1/trips/{trip}/fixes", {"fixes": fixes})
            self.assertEqual(status, 200, body)

        def wait_status(trip, wanted):
            deadline = time.monotonic() + 10
            while True:
                status, body = hub.request("GET", f"/v1/trips/{trip}")
                if body["status"] == wanted:
                    return
                if time.monotonic() > deadline:
                    self.fail(f"{trip} is {body['status']}, not {wanted}")
                time.sleep(0.05)

        create("holding", [{"lat": 48.01, "lon": 11.0}], True)
        push("holding", [(48.0, 11.0), (48.005, 11.0), (48.01, 11.0)])
        create("offroute", [], True)
        push("offroute", [(48.0, 11.0), (48.005, 11.0), (48.006, 11.01)])
        create("arrived", [], False)
        push("arrived", [(48.0, 11.0), (48.01, 11.0), (48.02, 11.0)])
        wait_status("holding", "holding")
        wait_status("offroute", "off_route")
        wait_status("arrived", "arrived")
        trips = ["holding", "offroute", "arrived"]

        async def snapshots(url):
            result = {}
            async with websockets.connect(url, subprotocols=["trackhub.v1"]) as ws:
                for trip in trips:
                    await ws.send(json.dumps({"op": "subscribe", "trip": trip, "mode": "segments", "id": trip}))
                    while True:
                        message = json.loads(await ws.recv())
                        if message.get("type") == "snapshot" and message.get("re") == trip:
                            result[trip] = message
                            break
                # since_event 0: the snapshot, then every stored event in order.
                await ws.send(json.dumps({"op": "subscribe", "trip": "holding", "since_event": 0, "id": "replay"}))
                replay = []
                while True:
                    message = json.loads(await ws.recv())
                    if message.get("type") == "snapshot" and message.get("re") == "replay":
                        result["replay-snapshot"] = message
                    elif message.get("type") == "event" and "replay-snapshot" in result:
                        replay.append(message)
                        if message["n"] == result["replay-snapshot"]["last_event"]:
                            break
                result["replay"] = replay
            return result

        before = asyncio.run(snapshots(hub.ws_url))
        hub.proc.send_signal(signal.SIGKILL)
        hub.kill()
        hub = self.start_hub()
        after = asyncio.run(snapshots(hub.ws_url))
        for trip in trips:
            self.assertEqual(after[trip]["status"], before[trip]["status"], trip)
            self.assertEqual(after[trip], before[trip], trip)
        self.assertEqual([e["n"] for e in after["replay"]], list(range(1, before["holding"]["last_event"] + 1)))
        self.assertEqual(after["replay"], before["replay"])
        self.assertEqual(after["replay-snapshot"].get("recovered"), True)
        # Live from there: proceed at the waypoint continues the event numbering.
        status, body = hub.request("POST", "/v1/trips/holding/proceed")
        self.assertEqual(status, 200, body)
        self.assertEqual(body["status"], "moving")


if __name__ == "__main__":
    unittest.main()
