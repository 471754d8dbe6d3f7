"""Phone apps as couriers (PROTOCOL 11) against the release binary: devices, the OsmAnd
protocol (Traccar Client, OsmAnd) and OwnTracks' HTTP mode.

    swift build -c release
    cd tests-py && TRACKHUB_BIN=$PWD/../.build/release python3 -m unittest test_devices -v

Requests are in the shapes those apps send: query strings on GET and POST, form bodies,
Traccar Client 9's JSON body, every timestamp form, `location=`, `deviceid`. Each fix is
then looked for in its trip's trail with its attributes and in a subscriber's frames. No
sleeps as synchronisation: every wait has a condition and a deadline. FullDiskDevices (root only)
puts the data directory on a small tmpfs and fills it: 503 while the store cannot commit.
"""

import asyncio
import datetime
import http.client
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.parse

from hubproc import AsyncTestCase, Client, HubProcess, now_ms, offset, require_binary, run_cli

SECRET = "devices-test-secret-of-32-bytes!!"
PHONE = "phone-0123456789abcdef"
KNOT = 0.514444


def raw_http(hub_host, port, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection(hub_host.strip("[]"), port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.getheaders(), resp.read()
    finally:
        conn.close()


def iso(ms, offset_hours=0):
    tz = datetime.timezone(datetime.timedelta(hours=offset_hours))
    return datetime.datetime.fromtimestamp(ms / 1000, tz).isoformat(timespec="seconds")


def sql_time(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def wait_until(condition, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)  # polling interval of a condition with a deadline, not a synchronisation


class DeviceHub:
    """A hub on a data directory that outlives it (for SIGKILL and restart)."""

    def __init__(self, data_dir, *extra):
        self.osmand_port = None
        self.proc = subprocess.Popen(
            [require_binary(), "serve", "--listen", "127.0.0.1:0", "--data", data_dir, "--log-level", "warn", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while True:
            line = self.proc.stdout.readline()
            if line.startswith("osmand listening on http://"):
                self.osmand_port = int(line.strip().rsplit(":", 1)[1])
            if line.startswith("listening on http://"):
                self.host, port = line.strip()[len("listening on http://"):].rsplit(":", 1)
                self.port = int(port)
                return
            if not line or time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError(f"hub did not start: {self.proc.stderr.read()}")

    def http(self, method, path, body=None, raw=None, headers=None):
        data = json.dumps(body).encode() if body is not None else raw
        status, _, payload = raw_http(self.host, self.port, method, path, data, headers)
        return status, (json.loads(payload) if payload.startswith((b"{", b"[")) else None), payload

    def kill(self):
        self.proc.kill()
        self.proc.wait(10)
        self.proc.stdout.close()
        self.proc.stderr.close()


class OpenHubDevices(AsyncTestCase):
    """One open hub; a trip with a device bound to it."""

    @classmethod
    def setUpClass(cls):
        cls.hub = HubProcess("--log-level", "warn").start()

    @classmethod
    def tearDownClass(cls):
        cls.hub.stop()

    def setUp(self):
        self.trip = f"dev-{self.id().split('.')[-1][:40]}"
        self.hub.create_trip(id=self.trip)
        self.device = f"{PHONE}-{abs(hash(self.trip)) % 100000}"
        status, doc, raw = self.hub.http("PUT", f"/v1/devices/{self.device}", {"trip": self.trip, "name": "Ana"})
        self.assertEqual(status, 200, raw)
        self.assertEqual(doc, {"device": self.device, "trip": self.trip, "name": "Ana", "last_seen": None, "last_position": None})
        self.t0 = (now_ms() - 600_000) // 1000 * 1000  # whole seconds: most forms carry no ms

    def osmand(self, method, query="", body=None, content_type=None):
        headers = {"Content-Type": content_type} if content_type else {}
        path = "/v1/osmand" + (f"?{query}" if query else "")
        return raw_http(self.hub.host, self.hub.port, method, path, body.encode() if isinstance(body, str) else body, headers)

    def trail(self):
        status, doc, raw = self.hub.http("GET", f"/v1/trips/{self.trip}/trail")
        self.assertEqual(status, 200, raw)
        return doc["properties"]

    def test_every_osmand_shape_is_a_fix_of_the_trip_with_its_attributes(self):
        lat0, lon0 = 38.7158, -9.1420
        sent = []  # (ts ms, altitude, battery, speed m/s or None)

        def point(i):
            return offset(lat0, lon0, north_m=40 * i)

        def ts(i):
            return self.t0 + 10_000 * i

        shapes = []
        lat, lon = point(0)
        shapes.append(("GET", f"id={self.device}&timestamp={ts(0) // 1000}&lat={lat}&lon={lon}&speed=10&bearing=7.5&altitude=224.0&hdop=6.0&batt=87", None, None, (ts(0), 224.0, 87, 10 * KNOT)))
        lat, lon = point(1)
        shapes.append(("GET", f"id={self.device}&timestamp={ts(1)}&lat={lat}&lon={lon}&speed=0.0&altitude=10", None, None, (ts(1), 10, None, 0)))
        lat, lon = point(2)
        shapes.append(("GET", f"id={self.device}&timestamp={urllib.parse.quote(iso(ts(2)).replace('+00:00', 'Z'))}&lat={lat}&lon={lon}", None, None, (ts(2), None, None, None)))
        lat, lon = point(3)
        shapes.append(("GET", f"deviceid={self.device}&timestamp={urllib.parse.quote(iso(ts(3), 2))}&location={lat},{lon}&speed=-1&batt=-1", None, None, (ts(3), None, None, None)))
        lat, lon = point(4)
        shapes.append(("POST", f"lat={lat}&lon={lon}&timestamp={sql_time(ts(4)).replace(' ', '+')}&altitude=384.7&speed=0.0&id={self.device}", None, None, (ts(4), 384.7, None, 0)))
        lat, lon = point(5)
        form = f"id={self.device}&lat={lat}&lon={lon}&timestamp={ts(5) // 1000}&accuracy=12&batt=55&wifi=00-14-22-01-23-45,-80"
        shapes.append(("POST", "", form, "application/x-www-form-urlencoded", (ts(5), None, 55, None)))
        lat, lon = point(6)
        body = json.dumps({"location": {"timestamp": iso(ts(6)).replace("+00:00", ".000Z"), "coords": {
            "latitude": lat, "longitude": lon, "accuracy": 5, "speed": 3.5, "heading": 90, "altitude": 12.5,
            "speed_accuracy": -1, "altitude_accuracy": -1, "ellipsoidal_altitude": 0},
            "is_moving": True, "odometer": 0, "event": "motionchange", "battery": {"level": 0.79, "is_charging": False},
            "activity": {"type": "still"}, "extras": {}}, "device_id": self.device})
        shapes.append(("POST", "", body, "application/json", (ts(6), 12.5, 79, 3.5)))

        for method, query, body, content_type, expected in shapes:
            with self.subTest(method=method, query=query, body=body):
                status, _, payload = self.osmand(method, query, body, content_type)
                self.assertEqual((status, payload), (200, b""), (method, query, body))
                sent.append(expected)

        trail = self.trail()
        for ts_ms, altitude, battery, speed in sent:
            with self.subTest(ts=ts_ms):
                self.assertEqual(trail["ts"].count(ts_ms), 1, f"{ts_ms} not in the trail {trail['ts']}")
                i = trail["ts"].index(ts_ms)
                self.assertEqual(trail["altitude"][i], altitude)
                self.assertEqual(trail["battery"][i], battery)
                if speed is None:
                    self.assertIsNone(trail["speed_mps"][i])
                else:
                    self.assertAlmostEqual(trail["speed_mps"][i], speed, places=6)
        status, doc, _ = self.hub.http("GET", f"/v1/devices/{self.device}")
        self.assertEqual(status, 200)
        self.assertIsNotNone(doc["last_seen"])
        self.assertAlmostEqual(doc["last_position"]["lat"], point(6)[0], places=6)

    def test_a_resend_with_the_same_time_is_a_duplicate_answered_200(self):
        query = f"id={self.device}&lat=38.7&lon=-9.14&timestamp={self.t0 // 1000}"
        for _ in range(3):
            status, _, payload = self.osmand("GET", query)
            self.assertEqual((status, payload), (200, b""))
        self.assertEqual(self.trail()["ts"].count((self.t0 // 1000) * 1000), 1)

    async def test_a_subscriber_sees_the_fix_move_the_marker(self):
        client = await Client.open(self.hub)
        try:
            await client.send(op="subscribe", trip=self.trip, id=1)
            await client.wait_type("snapshot", trip=self.trip)
            lat, lon = 38.7001, -9.1401
            status, _, _ = await asyncio.to_thread(self.osmand, "GET", f"id={self.device}&lat={lat}&lon={lon}&timestamp={now_ms() - 1000}")
            self.assertEqual(status, 200)
            frame = await client.wait_type("frame", trip=self.trip)
            self.assertAlmostEqual(frame["lat"], lat, places=6)
            self.assertAlmostEqual(frame["lon"], lon, places=6)
        finally:
            await client.ws.close()

    def test_malformed_requests_are_400_naming_the_field(self):
        cases = [
            ("lat=1&lon=2", "id"),
            (f"id={self.device}&lon=2", "lat"),
            (f"id={self.device}", "lat"),
            (f"id={self.device}&lat=1&lon=2&timestamp=yesterday", "timestamp"),
            (f"id={self.device}&lat=95&lon=2", "lat"),
            (f"id={self.device}&lat=1&lon=2&speed=fast", "speed"),
        ]
        for query, field in cases:
            with self.subTest(query=query):
                status, _, payload = self.osmand("GET", query)
                self.assertEqual(status, 400, payload)
                self.assertIn(field, json.loads(payload)["error"]["message"])

    def test_unknown_device_is_404_and_a_device_without_trip_only_updates_last_seen(self):
        status, _, payload = self.osmand("GET", "id=nobody-0123456789abc&lat=1&lon=2")
        self.assertEqual(status, 404, payload)
        loose = self.device + "-loose"
        status, doc, raw = self.hub.http("PUT", f"/v1/devices/{loose}", {"trip": None})
        self.assertEqual((status, doc["trip"]), (200, None), raw)
        status, _, payload = self.osmand("GET", f"id={loose}&lat=38.5&lon=-9.5")
        self.assertEqual((status, payload), (200, b""))
        status, doc, _ = self.hub.http("GET", f"/v1/devices/{loose}")
        self.assertEqual(doc["last_position"], {"lat": 38.5, "lon": -9.5})
        self.assertIsNotNone(doc["last_seen"])

    def test_owntracks_location_is_a_fix_and_other_types_are_answered_empty(self):
        tst = self.t0 // 1000 + 5
        body = {"_type": "location", "acc": 15, "alt": 440, "batt": 46, "conn": "w", "lat": 46.0681247,
                "lon": 11.1512805, "t": "u", "tid": "5t", "tst": tst, "vac": 2, "vel": 36, "cog": 271}
        status, doc, raw = self.hub.http("POST", f"/v1/owntracks/{self.device}", body)
        # `[]`, or (PROTOCOL 18) the interval the hub wants, the first time it tells this phone.
        self.assertEqual(status, 200, raw)
        self.assertIn(doc, ([], [{"_type": "cmd", "action": "setConfiguration", "configuration": {
            "_type": "configuration", "monitoring": 2, "locatorInterval": 30, "moveModeLocatorInterval": 30}}]), raw)
        status, doc, raw = self.hub.http("POST", f"/v1/owntracks/{self.device}", {"_type": "transition", "event": "enter"})
        self.assertEqual((status, doc), (200, []), raw)
        trail = self.trail()
        i = trail["ts"].index(tst * 1000)
        self.assertEqual((trail["altitude"][i], trail["battery"][i]), (440, 46))
        self.assertAlmostEqual(trail["speed_mps"][i], 10.0, places=6)
        status, _, _ = self.hub.http("POST", "/v1/owntracks/nobody-0123456789abc", body)
        self.assertEqual(status, 404)

    def test_devices_are_listed_got_and_deleted(self):
        status, doc, _ = self.hub.http("GET", "/v1/devices")
        self.assertEqual(status, 200)
        ids = [d["device"] for d in doc["devices"]]
        self.assertIn(self.device, ids)
        self.assertEqual(ids, sorted(ids))
        status, doc, raw = self.hub.http("PUT", f"/v1/devices/{self.device}", {"trip": "no-such-trip"})
        self.assertEqual(status, 404, raw)
        self.assertIn("trip", doc["error"]["message"])
        status, doc, _ = self.hub.http("DELETE", f"/v1/devices/{self.device}")
        self.assertEqual((status, doc["device"]), (200, self.device))
        self.assertEqual(self.hub.http("GET", f"/v1/devices/{self.device}")[0], 404)
        self.assertEqual(self.osmand("GET", f"id={self.device}&lat=1&lon=2")[0], 404)

    def test_metrics_count_fixes_by_protocol_and_refusals_by_reason(self):
        self.osmand("GET", f"id={self.device}&lat=1&lon=2&timestamp={self.t0}")
        self.osmand("GET", "id=nobody-0123456789abc&lat=1&lon=2")
        _, _, text = self.hub.http("GET", "/metrics")
        text = text.decode()
        self.assertRegex(text, r'trackhub_device_fixes_total\{protocol="osmand"\} [1-9]')
        self.assertRegex(text, r'trackhub_device_refused_total\{reason="not_found"\} [1-9]')


class SecuredHubDevices(unittest.TestCase):
    """Section 2's table for devices: admin manages them; the id reaches only the device endpoints."""

    @classmethod
    def setUpClass(cls):
        cls.hub = HubProcess("--jwt-secret", SECRET, "--log-level", "warn").start()

        def token(*args):
            out = run_cli(["token", "--secret", SECRET, *args])
            assert out.returncode == 0, out.stderr
            return out.stdout.strip()

        cls.admin = {"Authorization": "Bearer " + token("--scope", "admin")}
        cls.courier = {"Authorization": "Bearer " + token("--scope", "courier", "--trip", "*")}
        status, _, raw = cls.hub.http("POST", "/v1/trips", {"id": "sec-trip"}, headers=cls.admin)
        assert status == 201, raw

    @classmethod
    def tearDownClass(cls):
        cls.hub.stop()

    def test_a_short_device_id_is_refused_and_a_long_one_registered(self):
        status, doc, _ = self.hub.http("PUT", "/v1/devices/short-id", {"trip": "sec-trip"}, headers=self.admin)
        self.assertEqual(status, 400)
        self.assertIn("16", doc["error"]["message"])
        status, _, raw = self.hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": "sec-trip"}, headers=self.admin)
        self.assertEqual(status, 200, raw)

    def test_devices_need_admin(self):
        self.assertEqual(self.hub.http("GET", "/v1/devices")[0], 401)
        self.assertEqual(self.hub.http("GET", "/v1/devices", headers=self.courier)[0], 403)
        self.assertEqual(self.hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": None}, headers=self.courier)[0], 403)
        self.assertEqual(self.hub.http("GET", "/v1/devices", headers=self.admin)[0], 200)

    def test_a_device_id_reaches_only_the_device_endpoints(self):
        status, _, raw = self.hub.http("PUT", f"/v1/devices/{PHONE}-x", {"trip": "sec-trip"}, headers=self.admin)
        self.assertEqual(status, 200, raw)
        status, _, payload = raw_http(self.hub.host, self.hub.port, "GET", f"/v1/osmand?id={PHONE}-x&lat=1&lon=2")
        self.assertEqual((status, payload), (200, b""))
        as_token = {"Authorization": f"Bearer {PHONE}-x"}
        for method, path in [("GET", "/v1/trips"), ("GET", "/v1/trips/sec-trip"), ("GET", "/v1/devices")]:
            with self.subTest(path=path):
                self.assertEqual(self.hub.http(method, path, headers=as_token)[0], 401)
        status, _, _ = raw_http(self.hub.host, self.hub.port, "GET", "/v1/trips/sec-trip/trail?id=" + PHONE)
        self.assertEqual(status, 401)


class OsmAndListener(unittest.TestCase):
    """`--osmand-listen`: Traccar Client's server URL has no path (its default port is 5055)."""

    def setUp(self):
        self.data = tempfile.mkdtemp(prefix="trackhub-osmand-port-")
        self.hub = DeviceHub(self.data, "--osmand-listen", "127.0.0.1:0", "--jwt-secret", SECRET)
        self.admin = {"Authorization": "Bearer " + run_cli(["token", "--secret", SECRET, "--scope", "admin"]).stdout.strip()}

    def tearDown(self):
        self.hub.kill()
        shutil.rmtree(self.data, ignore_errors=True)

    def test_the_second_port_takes_osmand_at_root_and_nothing_else(self):
        hub = self.hub
        self.assertIsNotNone(hub.osmand_port)
        self.assertNotEqual(hub.osmand_port, hub.port)
        self.assertEqual(hub.http("POST", "/v1/trips", {"id": "port-trip"}, headers=self.admin)[0], 201)
        self.assertEqual(hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": "port-trip"}, headers=self.admin)[0], 200)
        ts = (now_ms() - 60_000) // 1000
        # Traccar Client: GET and POST at /, a phone's own Host header, no token.
        for method, query, body, ctype, t in [
            ("GET", f"/?id={PHONE}&lat=38.7&lon=-9.14&timestamp={ts}&batt=90", None, None, ts),
            ("POST", f"/?id={PHONE}&lat=38.7001&lon=-9.14&timestamp={ts + 5}", b"", None, ts + 5),
            ("POST", "/", f"id={PHONE}&lat=38.7002&lon=-9.14&timestamp={ts + 10}".encode(), "application/x-www-form-urlencoded", ts + 10),
        ]:
            headers = {"Host": "tracking.example.com:5055"}
            if ctype:
                headers["Content-Type"] = ctype
            status, _, payload = raw_http(hub.host, hub.osmand_port, method, query, body, headers)
            self.assertEqual((status, payload), (200, b""), (method, query))
        status, doc, _ = hub.http("GET", "/v1/trips/port-trip/trail", headers=self.admin)
        self.assertEqual(doc["properties"]["ts"], [ts * 1000, (ts + 5) * 1000, (ts + 10) * 1000])
        # Nothing else is served there: not the API, not the web client, not a WebSocket.
        for path in ["/v1/trips", "/index.html", "/healthz"]:
            with self.subTest(path=path):
                self.assertEqual(raw_http(hub.host, hub.osmand_port, "GET", path, None, self.admin)[0], 404)
        status, _, _ = raw_http(hub.host, hub.osmand_port, "GET", "/v1/ws", None, {
            "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
        self.assertNotEqual(status, 101)
        # An unregistered device there is 404, as on /v1/osmand.
        self.assertEqual(raw_http(hub.host, hub.osmand_port, "GET", f"/?id=nobody-0123456789abc&lat=1&lon=2")[0], 404)

    def test_osmand_post_with_a_body_needs_no_token_on_a_secured_hub(self):
        self.assertEqual(self.hub.http("POST", "/v1/trips", {"id": "body-trip"}, headers=self.admin)[0], 201)
        self.assertEqual(self.hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": "body-trip"}, headers=self.admin)[0], 200)
        body = json.dumps({"device_id": PHONE, "location": {"timestamp": iso(now_ms() - 5000).replace("+00:00", "Z"),
                                                             "coords": {"latitude": 38.7, "longitude": -9.14}}})
        status, _, payload = raw_http(self.hub.host, self.hub.port, "POST", "/v1/osmand", body.encode(), {"Content-Type": "application/json"})
        self.assertEqual((status, payload), (200, b""))


class FullDiskDevices(unittest.TestCase):
    """A data directory on a small tmpfs filled up: the store cannot commit, so a phone gets
    503 (never 200) until there is room again, then its resend is stored once."""

    def setUp(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to mount a small tmpfs")
        self.tmp = tempfile.mkdtemp(prefix="trackhub-full-")
        self.mnt = os.path.join(self.tmp, "mnt")
        os.mkdir(self.mnt)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", self.mnt], capture_output=True)
        if mounted.returncode != 0:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.skipTest(f"cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
        self.hub = None

    def tearDown(self):
        if self.hub is not None and self.hub.proc.poll() is None:
            self.hub.kill()
        subprocess.run(["umount", self.mnt], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fill(self):
        filler = os.path.join(self.mnt, "filler")
        # Unbuffered: a buffered file would keep the bytes the full disk refused and raise
        # ENOSPC again when closed, depending on how much room the hub's files left.
        with open(filler, "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
            except OSError:
                pass
        return filler

    def fix(self, ts):
        return raw_http(self.hub.host, self.hub.port, "GET", f"/v1/osmand?id={PHONE}&lat=38.7&lon=-9.14&timestamp={ts}")[0]

    def test_a_full_disk_is_503_never_200_and_the_resend_is_stored_once(self):
        self.hub = DeviceHub(os.path.join(self.mnt, "data"))
        self.assertEqual(self.hub.http("POST", "/v1/trips", {"id": "full-trip"})[0], 201)
        self.assertEqual(self.hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": "full-trip"})[0], 200)
        t0 = now_ms() - 3_600_000
        self.assertEqual(self.fix(t0), 200)
        filler = self.fill()
        answers = {}
        ts = t0
        deadline = time.monotonic() + 30
        while 503 not in answers.values():
            self.assertLess(time.monotonic(), deadline, "the store never failed on a full disk")
            ts += 1000
            answers[ts] = self.fix(ts)
            self.assertIn(answers[ts], (200, 503))
        refused = [t for t, status in answers.items() if status == 503]
        for _ in range(3):  # still full: still 503, never 200
            ts += 1000
            answers[ts] = self.fix(ts)
            self.assertEqual(answers[ts], 503)
            refused.append(ts)
        self.assertEqual(self.hub.http("GET", "/healthz")[0], 503)
        os.remove(filler)
        # The phone sends its first refused fix again until it gets a 200.
        wait_until(lambda: self.fix(refused[0]) == 200, "a 200 once there is room")
        self.assertEqual(self.fix(refused[0]), 200)  # and again: a duplicate, answered 200
        status, doc, _ = self.hub.http("GET", "/v1/trips/full-trip/trail")
        self.assertEqual(status, 200)
        stored = doc["properties"]["ts"]
        for t, status in answers.items():
            expected = 1 if status == 200 or t == refused[0] else 0
            self.assertEqual(stored.count(t), expected, (t, status))
        self.assertEqual(stored.count(t0), 1)


class DurableDevices(unittest.TestCase):
    def setUp(self):
        self.data = tempfile.mkdtemp(prefix="trackhub-devices-")
        self.hubs = []

    def tearDown(self):
        for hub in self.hubs:
            if hub.proc.poll() is None:
                hub.kill()
        shutil.rmtree(self.data, ignore_errors=True)

    def start(self):
        hub = DeviceHub(self.data)
        self.hubs.append(hub)
        return hub

    def test_sigkill_after_a_200_loses_nothing(self):
        hub = self.start()
        self.assertEqual(hub.http("POST", "/v1/trips", {"id": "kill-trip"})[0], 201)
        self.assertEqual(hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": "kill-trip", "name": "K"})[0], 200)
        t0 = now_ms() - 100_000
        answered = []
        for i in range(20):
            ts = t0 + i * 1000
            status, _, _ = raw_http(hub.host, hub.port, "GET", f"/v1/osmand?id={PHONE}&lat={38.7 + i * 1e-4}&lon=-9.14&timestamp={ts}&altitude={i}&batt=50")
            self.assertEqual(status, 200)
            answered.append(ts)
        hub.kill()
        hub = self.start()
        status, doc, _ = hub.http("GET", "/v1/trips/kill-trip/trail")
        self.assertEqual(status, 200)
        props = doc["properties"]
        for i, ts in enumerate(answered):
            self.assertEqual(props["ts"].count(ts), 1, ts)
            self.assertEqual(props["altitude"][props["ts"].index(ts)], i)
        status, device, _ = hub.http("GET", f"/v1/devices/{PHONE}")
        self.assertEqual((status, device["trip"], device["name"]), (200, "kill-trip", "K"))
        # A resend after the restart is still a duplicate.
        status, _, _ = raw_http(hub.host, hub.port, "GET", f"/v1/osmand?id={PHONE}&lat=38.7&lon=-9.14&timestamp={answered[0]}")
        self.assertEqual(status, 200)
        self.assertEqual(hub.http("GET", "/v1/trips/kill-trip/trail")[1]["properties"]["ts"].count(answered[0]), 1)


if __name__ == "__main__":
    unittest.main()
