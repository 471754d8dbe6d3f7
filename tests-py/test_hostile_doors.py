"""Hostile clients, round two: the doors added since round one (issue 41; PROTOCOL
sections 1, 11, 12, 13, 14 and 16), end to end against the release binary.

    cd tests-py && TRACKHUB_BIN=$PWD/../.build/release python3 -m unittest test_hostile_doors -v

One class per row of the issue:

1. IdentityBeforeWork, CPUBeforeIdentity: a device endpoint looks the device up before
   it reads a body (404 from the headers), refuses a body over 64 KiB from its
   Content-Length (413) and a form over 100 fields (400), on /v1/osmand, /v1/owntracks
   and the --osmand-listen port; and two clients sending big parameter bodies for
   unknown devices cost the hub little CPU (utime + stime from /proc/PID/stat, a bound,
   not a speed) while a real phone's fix is still acked. (An unknown device announcing
   4 MiB may be 404 or 413: both hold from the headers, and section 4 puts too_large
   before not_found; it must be answered at once either way.)
2. WebhookURLLabel: the `url` label of /metrics is scheme, host, port and place only.
3. RouterQueueShare: one address holds at most a tenth of the router's queue (429
   `rate_limited` past it), and searches whose clients have gone are dropped unrun, so a
   new search is answered within the contract's 10 s.
4. ConfigFailsClosed: `jwt-secret: null | ~ | (empty)` and `jwt-secret-file: null` are
   bad values (exit 2, one line naming the key), never an open hub.
5. ShortSecrets, DeviceIdsNotLogged: secrets under 16 bytes exit 2; a device id (a
   credential) appears nowhere in the hub's log, text or JSON.
6. RefusalRate*: `--max-refusal-rate N` turns unknown device ids and bad tokens from one
   address into 429 `rate_limited` past N a second, per address, until the rate falls;
   without the flag nothing changes.
7. ShareReplay: events replayed to a `share` token have `lat` and `lon` null.
8. ControlCharactersInLogs: a peer's control bytes reach a text log escaped (`\\x1b`).
9. RefusedUpgrades: a refused WebSocket upgrade (401, 403, 429) is an HTTP/1.1 answer
   with a JSON error body, which the `websockets` library reports as that status.

Client sockets bind to other loopback addresses (127.0.0.2 ...) where a test needs a
second "address". Nothing sleeps to synchronise: every wait is for an answer, a line or
a metric, with a deadline. The only time bounds are the contract's (10 s for a search),
with margin, and "an answer without the body": the hubs here wait 30 s for a body
(--body-timeout), the tests 5 s for the answer.
"""

import asyncio
import json
import os
import queue
import re
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

import websockets
import websockets.exceptions
import websockets.sync.client

import hubproc
from hubproc import HubProcess, now_ms
from rawclient import RawWebSocket, read_http_response, wait_until
from webhook_receiver import Receiver

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
ROADS = os.path.join(ROOT, "data", "samples", "roads_helsinki.geojson")

SECRET = "hostile-doors-secret-0123456789abcdef"
PHONE = "phone-door-Q7x9Zk2mP4wL8rT1"     # a registered device (its id is its credential)
UNKNOWN = "nobody-door-J3v8Hq5nB2cX6yU0"  # never registered
ROUTE = [[-9.1400, 38.7000], [-9.1400, 38.7090]]  # 1 km due north, Lisbon
LAT0, LON0 = 38.7000, -9.1400

MIB = 1024 * 1024
BODY_LIMIT = 64 * 1024        # PROTOCOL 11: a device endpoint's body
FORM_FIELDS = 100             # PROTOCOL 11: a form's fields
ANSWER_DEADLINE_S = 5.0       # "at once": the hubs here wait 30 s for a body that never comes
FORM = "application/x-www-form-urlencoded"


def setUpModule():
    hubproc.require_binary()


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------

def token(*args, secret=SECRET):
    result = hubproc.run_cli(["token", "--secret", secret, *args])
    if result.returncode != 0:
        raise AssertionError(f"trackhub token failed: {result.stderr}")
    return result.stdout.strip()


def bearer(tok):
    return {"Authorization": f"Bearer {tok}"}


def cpu_seconds(pid):
    """utime + stime of a process, from /proc/PID/stat (fields 14 and 15), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_socket(host, port, source=None, timeout=10.0):
    """A TCP connection, from loopback address `source` when given (Linux routes all of
    127/8 to lo, so 127.0.0.2 is another client address for the hub)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if source is not None:
        s.bind((source, 0))
    s.settimeout(timeout)
    s.connect((host.strip("[]"), port))
    return s


def request_bytes(method, path, headers=(), body=b"", host="127.0.0.1"):
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", *[f"{k}: {v}" for k, v in headers]]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def ask(port, method, path, headers=(), body=b"", source=None, host="127.0.0.1", deadline=ANSWER_DEADLINE_S):
    """Writes one request exactly as given (a Content-Length header may announce more than
    `body`), then reads the answer. Returns (status, headers, body), or None when nothing
    was answered within `deadline` (or the connection closed without an answer)."""
    s = open_socket(host, port, source)
    try:
        s.sendall(request_bytes(method, path, headers, body))
        try:
            return read_http_response(s, deadline)
        except (socket.timeout, TimeoutError, ConnectionError):
            return None
    finally:
        s.close()


def error_code(raw):
    return json.loads(raw)["error"]["code"]


def metrics_text(hub):
    status, _, raw = hub.http("GET", "/metrics")
    assert status == 200, status
    return raw.decode()


def labelled_metric(text, name, **labels):
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    prefix = f"{name}{{{want}}} "
    for line in text.splitlines():
        if line.startswith(prefix):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


class _RecordingLines(queue.Queue):
    """HubProcess's stdout queue, keeping every line (start() drops the ones it skips)."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def put(self, item, block=True, timeout=None):
        self.seen.append(item)
        super().put(item, block, timeout)


def start_with_osmand_port(*args):
    """A hub with `--osmand-listen 127.0.0.1:0`; `hub.osmand_port` is the port it printed."""
    hub = HubProcess("--osmand-listen", "127.0.0.1:0", *args)
    hub._stdout_lines = _RecordingLines()
    hub.start()

    def port():
        for line in list(hub._stdout_lines.seen):
            if line and line.startswith("osmand listening on http://"):
                return int(line.strip().rsplit(":", 1)[1])
        return None

    hub.osmand_port = wait_until(port, 10, "the `osmand listening on` line")
    return hub


def serve_outcome(args, env=None, deadline_s=15):
    """Runs `trackhub serve ARGS` on a fresh data directory until it exits or prints
    `listening on` (then it is killed: it started). Returns (exit code or None, listening,
    stderr text)."""
    with tempfile.TemporaryDirectory(prefix="trackhub-doors-serve-") as tmp:
        proc = subprocess.Popen(
            [hubproc.require_binary(), "serve", "--listen", "127.0.0.1:0", "--data", os.path.join(tmp, "data"), *args],
            env=hubproc.clean_env(env), cwd=tmp, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(l) for l in iter(proc.stdout.readline, "")], daemon=True)
        reader.start()
        listening = False
        end = time.monotonic() + deadline_s
        while proc.poll() is None and time.monotonic() < end:
            try:
                if lines.get(timeout=0.1).startswith("listening on"):
                    listening = True
                    break
            except queue.Empty:
                continue
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
            code = None
        else:
            code = proc.returncode
        reader.join(10)
        err = proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
        while not lines.empty():
            listening = listening or lines.get().startswith("listening on")
        return code, listening, err


def form(fields):
    return "&".join(f"{k}={v}" for k, v in fields)


def padded(text, size, pad_name="hdop"):
    """`text` plus `&pad_name=000...` so that the whole is exactly `size` bytes."""
    filler = f"&{pad_name}="
    return (text + filler + "0" * (size - len(text) - len(filler))).encode()


def osmand_fix_fields(device, ts_s, north_m=0.0):
    return [("id", device), ("lat", f"{LAT0 + north_m / 111_195:.6f}"), ("lon", f"{LON0}"), ("timestamp", str(ts_s))]


# --------------------------------------------------------------------------------------
# 1. Identity before work
# --------------------------------------------------------------------------------------

class IdentityBeforeWork(unittest.TestCase):
    """PROTOCOL 11: an unknown device is 404 without its body being read; a body over
    64 KiB is 413 from its Content-Length; a form has at most 100 fields."""

    @classmethod
    def setUpClass(cls):
        cls.hub = start_with_osmand_port("--body-timeout", "30s", "--log-level", "warn")
        cls.hub.create_trip(id="door-trip", route=ROUTE)
        status, _, raw = cls.hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": "door-trip"})
        assert status == 200, raw
        cls.ts = (now_ms() - 3_600_000) // 1000

    @classmethod
    def tearDownClass(cls):
        cls.hub.stop()

    def next_ts(self):
        type(self).ts += 10
        return self.ts

    def assert_answer(self, answer, status, code, what):
        """The answer is `status` with error `code`; `status` may be a dict of the
        acceptable {status: code}."""
        allowed = status if isinstance(status, dict) else {status: code}
        self.assertIsNotNone(answer, f"{what}: no answer within {ANSWER_DEADLINE_S}s (the hub waits for the body)")
        self.assertIn(answer[0], allowed, f"{what}: {answer[2][:200]!r}")
        self.assertEqual(error_code(answer[2]), allowed[answer[0]], what)

    def assert_unknown_refused_from_headers(self, port, path, ctype):
        """An unknown device announcing a body it never sends: 404 at once when the body
        would be within 64 KiB; when it would not, 404 or 413 (both hold from the headers;
        section 4 puts too_large before not_found), but at once."""
        headers = [("Content-Type", ctype)]
        answer = ask(port, "POST", path, headers + [("Content-Length", str(BODY_LIMIT))])
        self.assert_answer(answer, 404, "not_found", f"POST {path} announcing 64 KiB")
        answer = ask(port, "POST", path, headers + [("Content-Length", str(4 * MIB))])
        self.assert_answer(answer, {404: "not_found", 413: "too_large"}, None, f"POST {path} announcing 4 MiB")

    def test_unknown_osmand_device_in_the_query_is_refused_before_its_body(self):
        self.assert_unknown_refused_from_headers(self.hub.port, f"/v1/osmand?id={UNKNOWN}&lat=38.7&lon=-9.14", FORM)

    def test_unknown_owntracks_device_is_refused_before_its_body(self):
        self.assert_unknown_refused_from_headers(self.hub.port, f"/v1/owntracks/{UNKNOWN}", "application/json")

    def test_a_body_over_64_kib_is_413_from_its_content_length(self):
        over = str(BODY_LIMIT + 1)
        cases = [
            ("OwnTracks", f"/v1/owntracks/{PHONE}", "application/json"),
            ("OsmAnd, id in the query", f"/v1/osmand?id={PHONE}", FORM),
            ("OsmAnd form, id in the body", "/v1/osmand", FORM),
            ("OsmAnd JSON (Traccar Client 9)", "/v1/osmand", "application/json"),
        ]
        for what, path, ctype in cases:
            with self.subTest(what):
                answer = ask(self.hub.port, "POST", path, [("Content-Type", ctype), ("Content-Length", over)])
                self.assert_answer(answer, 413, "too_large", f"{what} announcing {over} bytes")
        # 64 KiB itself is taken, on both endpoints.
        doc = {"_type": "location", "lat": LAT0, "lon": LON0, "tst": self.next_ts(), "pad": ""}
        doc["pad"] = "x" * (BODY_LIMIT - len(json.dumps(doc)))
        body = json.dumps(doc).encode()
        self.assertEqual(len(body), BODY_LIMIT)
        status, parsed, raw = self.hub.http("POST", f"/v1/owntracks/{PHONE}", raw=body)
        self.assertEqual(status, 200, raw[:200])
        # `[]`, or the phone's first answer (PROTOCOL 18): the interval the hub wants of it.
        self.assertTrue(parsed == [] or (len(parsed) == 1 and parsed[0].get("action") == "setConfiguration"), raw[:200])
        body = padded(form(osmand_fix_fields(PHONE, self.next_ts())), BODY_LIMIT)
        status, _, raw = self.hub.http("POST", "/v1/osmand", raw=body, headers={"Content-Type": FORM})
        self.assertEqual(status, 200, raw[:200])

    def test_a_form_has_at_most_100_fields_and_its_device_is_looked_up(self):
        def with_fields(device, count):
            fields = osmand_fix_fields(device, self.next_ts())
            fields += [(f"x{i}", "0") for i in range(count - len(fields))]
            self.assertEqual(len(fields), count)
            return form(fields).encode()

        status, _, raw = self.hub.http("POST", "/v1/osmand", raw=with_fields(PHONE, FORM_FIELDS), headers={"Content-Type": FORM})
        self.assertEqual(status, 200, f"a form of {FORM_FIELDS} fields: {raw[:200]!r}")
        status, _, raw = self.hub.http("POST", "/v1/osmand", raw=with_fields(PHONE, FORM_FIELDS + 1), headers={"Content-Type": FORM})
        self.assertEqual(status, 400, f"a form of {FORM_FIELDS + 1} fields: {raw[:200]!r}")
        self.assertEqual(error_code(raw), "bad_request")
        status, _, raw = self.hub.http("POST", "/v1/osmand", raw=with_fields(UNKNOWN, 10), headers={"Content-Type": FORM})
        self.assertEqual(status, 404, f"an unknown device in a form: {raw[:200]!r}")
        self.assertEqual(error_code(raw), "not_found")

    def test_the_osmand_port_is_the_same_door(self):
        port = self.hub.osmand_port
        self.assert_unknown_refused_from_headers(port, f"/?id={UNKNOWN}&lat=38.7&lon=-9.14", FORM)
        answer = ask(port, "POST", f"/?id={PHONE}", [("Content-Type", FORM), ("Content-Length", str(BODY_LIMIT + 1))])
        self.assert_answer(answer, 413, "too_large", "POST /?id=<device> on the OsmAnd port announcing 64 KiB + 1")
        fields = osmand_fix_fields(PHONE, self.next_ts()) + [(f"x{i}", "0") for i in range(FORM_FIELDS - 3)]
        body = form(fields).encode()
        answer = ask(port, "POST", "/", [("Content-Type", FORM), ("Content-Length", str(len(body)))], body)
        self.assert_answer(answer, 400, "bad_request", f"a form of {len(fields)} fields on the OsmAnd port")
        body = form(osmand_fix_fields(UNKNOWN, self.next_ts())).encode()
        answer = ask(port, "POST", "/", [("Content-Type", FORM), ("Content-Length", str(len(body)))], body)
        self.assert_answer(answer, 404, "not_found", "an unknown device in a form on the OsmAnd port")


class CPUBeforeIdentity(unittest.TestCase):
    """PROTOCOL 11: "a request for a device that does not exist costs at most reading
    64 KiB". Two clients, each alternating a 4 MiB form of 200 000 parameters (refused
    from its Content-Length) and a 64 KiB form of 16 000 parameters for an unknown device,
    for 6 s or until each has sent REQUESTS_PER_CLIENT. The bound: the hub's CPU time over
    that window (from /proc), in total and per request. Before the fix the hub parsed
    every body before looking the device up: a core busy for the whole window (6.2-6.5
    CPU-s for about 50 requests, over 100 ms each). A refusal from the headers, or after
    reading 64 KiB, costs about a millisecond (0.2 CPU-s for the 400 requests), so the
    budget of requests, not the window, bounds what a fixed hub spends: the clients
    themselves can make thousands of requests a second, and even a 404 for a 40-byte
    request costs the hub about 0.1 ms."""

    WINDOW_S = 6.0
    REQUESTS_PER_CLIENT = 200
    CPU_BOUND_S = 1.5
    PER_REQUEST_BOUND_S = 0.005

    def setUp(self):
        self.hub = HubProcess("--log-level", "warn").start()
        self.hub.create_trip(id="cpu-trip", route=ROUTE)
        status, _, raw = self.hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": "cpu-trip"})
        self.assertEqual(status, 200, raw)

    def tearDown(self):
        self.hub.stop()

    @staticmethod
    def bodies():
        tail = "&" + form(osmand_fix_fields(UNKNOWN, now_ms() // 1000 - 60)[1:]) + f"&id={UNKNOWN}"
        big = "&".join(f"p{i:06d}=1234567890" for i in range(200_000))  # 18 bytes + "&" each: 3.8 MB
        big = padded(big + tail, 4 * MIB - 1, pad_name="q")  # within --max-body (4 MiB)
        small = "&".join("a=1" for _ in range(16_000)) + tail  # 16 000 parameters, the id last
        small = padded(small, BODY_LIMIT, pad_name="q")
        return big, small

    def send(self, body, counts, lock):
        head = request_bytes("POST", "/v1/osmand", [("Content-Type", FORM), ("Content-Length", str(len(body))), ("Connection", "close")])
        try:
            s = open_socket(self.hub.host, self.hub.port, timeout=10)
        except OSError as e:
            outcome = f"connect: {type(e).__name__}"
        else:
            try:
                s.sendall(head + body)
                outcome = read_http_response(s, 10)[0]
            except OSError as e:  # a hub that answered from the headers and closed: reset
                outcome = type(e).__name__
            finally:
                s.close()
        with lock:
            counts[outcome] = counts.get(outcome, 0) + 1

    def test_unknown_devices_with_big_parameter_bodies_cost_little_cpu(self):
        big, small = self.bodies()
        counts, lock = {}, threading.Lock()
        end = time.monotonic() + self.WINDOW_S

        def client():
            for i in range(self.REQUESTS_PER_CLIENT):
                if time.monotonic() >= end:
                    return
                self.send(big if i % 2 == 0 else small, counts, lock)

        pid = self.hub.proc.pid
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        clients = [threading.Thread(target=client) for _ in range(2)]
        for t in clients:
            t.start()
        try:
            # A registered phone's fix in the middle of it is still acked.
            wait_until(lambda: sum(counts.values()) >= 4 or not any(t.is_alive() for t in clients), 30,
                       "the attack to be under way")
            ts = now_ms() // 1000 - 30
            status, _, raw = self.hub.http("GET", f"/v1/osmand?id={PHONE}&lat={LAT0}&lon={LON0}&timestamp={ts}", timeout=20)
            self.assertEqual(status, 200, raw)
        finally:
            for t in clients:
                t.join(60)
        cpu = cpu_seconds(pid) - cpu0
        wall = time.monotonic() - t0
        sent = sum(counts.values())
        report = f"hub CPU {cpu:.2f} s over {wall:.1f} s for {sent} requests ({counts})"
        self.assertGreater(sent, 0)
        self.assertLess(cpu, self.CPU_BOUND_S, report)
        self.assertLess(cpu / sent, self.PER_REQUEST_BOUND_S, report)
        # Whatever was answered was a refusal (404, or 400/413 for the shape), never a fix.
        answered = {k for k in counts if isinstance(k, int)}
        self.assertTrue(answered <= {400, 404, 413}, report)
        status, doc, _ = self.hub.http("GET", "/healthz")
        self.assertEqual((status, doc["status"]), (200, "ok"))


# --------------------------------------------------------------------------------------
# 2. Webhook credentials on /metrics
# --------------------------------------------------------------------------------------

class WebhookURLLabel(unittest.TestCase):
    """PROTOCOL 12: the `url` label is the URL's scheme, host and port and its 1-based
    place in the --webhook list; userinfo, path and query (which may hold secrets) are
    not shown, while deliveries still go to the whole URL."""

    def test_the_url_label_shows_no_userinfo_path_or_query(self):
        first, second = Receiver(), Receiver()
        hub = None
        try:
            p1, p2 = first.server.server_address[1], second.server.server_address[1]
            url1 = f"http://hookuser-u7:hookpass-p9@127.0.0.1:{p1}/hook?api_key=K-apikey-3141"
            url2 = f"http://127.0.0.1:{p2}/hook/second?api_key=K-apikey-2718"
            hub = HubProcess("--jwt-secret", SECRET, "--log-level", "warn", "--webhook", url1, "--webhook", url2,
                             "--webhook-secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").start()
            status, _, raw = hub.http("POST", "/v1/trips", {"id": "hook-trip", "route": ROUTE}, headers=bearer(token("--scope", "admin")))
            self.assertEqual(status, 201, raw)
            first.wait_until(lambda r: len(r.accepted()) >= 1, what="the first URL's delivery")
            second.wait_until(lambda r: len(r.accepted()) >= 1, what="the second URL's delivery")
            self.assertEqual(first.requests[0]["path"], "/hook?api_key=K-apikey-3141", "deliveries go to the whole URL")
            self.assertEqual(second.requests[0]["path"], "/hook/second?api_key=K-apikey-2718")

            # /metrics is public on a secured hub: no token.
            text = metrics_text(hub)
            labels = set(re.findall(r'url="([^"]*)"', text))
            self.assertEqual(labels, {f"http://127.0.0.1:{p1}#1", f"http://127.0.0.1:{p2}#2"}, labels)
            for label in labels:
                for word in ("user", "pass", "api_key", "/hook", "?", "@"):
                    self.assertNotIn(word, label)
            for secret in ("hookuser-u7", "hookpass-p9", "K-apikey-3141", "K-apikey-2718", "api_key"):
                self.assertNotIn(secret, text)
            for label in (f"http://127.0.0.1:{p1}#1", f"http://127.0.0.1:{p2}#2"):
                wait_until(lambda: labelled_metric(metrics_text(hub), "trackhub_webhook_deliveries_total", url=label, result="ok") >= 1,
                           10, f"a delivery counted under {label}")
        finally:
            if hub is not None:
                hub.stop()
            first.close()
            second.close()


# --------------------------------------------------------------------------------------
# 3. Router searches: a share of the queue per address; abandoned searches dropped
# --------------------------------------------------------------------------------------

class RouterQueueShare(unittest.TestCase):
    """PROTOCOL 16: one address holds at most a tenth of the queue (default 1 000: 100),
    past it `rate_limited`; a search whose client has gone is dropped unrun; so a new
    search is answered within 10 s whatever other clients asked for.

    A slow search: 40 via points alternating between the two opposite corners of the
    sample network, on foot (every leg is found, and long): 10-60 ms of the router's one
    thread on the machine these tests were written on (the issue saw 3.8 s elsewhere).
    Since that varies, whether abandoned searches ran is judged by counting them
    (`trackhub_router_searches_total{result="ok"}`), not by a time."""

    SHARE = 100           # a tenth of the default queue of 1 000
    FLOOD = 200           # from one address: at least 100 past its share
    PER_ADDRESS = 90      # abandoned flood: within every address's share...
    ADDRESSES = ["127.0.0.2", "127.0.0.4", "127.0.0.5", "127.0.0.6"]  # ...from four
    VIA = 40

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="trackhub-doors-router-")
        osm = os.path.join(cls.tmp.name, "helsinki.osm")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "geojson_to_osm.py"), ROADS, osm],
                       check=True, capture_output=True, timeout=60)
        cls.db = os.path.join(cls.tmp.name, "db")
        built = hubproc.run_cli(["router", "build", osm, cls.db], timeout=120)
        assert built.returncode == 0, built.stderr
        with open(ROADS, encoding="utf-8") as f:
            features = json.load(f)["features"]
        vertices = sorted({(lat, lon) for feat in features for lon, lat in feat["geometry"]["coordinates"]})
        sw = min(vertices, key=lambda v: v[0] + v[1])
        ne = max(vertices, key=lambda v: v[0] + v[1])
        cls.slow = "/v1/route?" + cls.query([sw if i % 2 == 0 else ne for i in range(cls.VIA + 2)])
        (lon1, lat1), (lon2, lat2) = features[0]["geometry"]["coordinates"][:2]
        cls.short = "/v1/route?" + cls.query([(lat1, lon1), (lat2, lon2)])  # one piece of one road

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @staticmethod
    def query(points):
        q = {"mode": "foot", "from": "%.6f,%.6f" % points[0], "to": "%.6f,%.6f" % points[-1]}
        if len(points) > 2:
            q["via"] = ";".join("%.6f,%.6f" % p for p in points[1:-1])
        return urllib.parse.urlencode(q, safe=",;")

    def setUp(self):
        self.hub = HubProcess("--router", f"routino:{self.db}", "--log-level", "warn").start()
        self.socks = []
        status, _, raw = self.hub.http("GET", self.slow, timeout=60)
        self.assertEqual(status, 200, f"the slow search on the idle hub: {raw[:200]!r}")

    def tearDown(self):
        self.close_flood()
        self.hub.kill()  # a hub that kept abandoned searches would take a while to drain

    def close_flood(self):
        for s in self.socks:
            s.close()
        self.socks = []

    def ok_searches(self):
        return labelled_metric(metrics_text(self.hub), "trackhub_router_searches_total", result="ok")

    def flood(self, sources):
        """The slow search from each of `sources` (repeats: one connection each), all
        written before any answer is read."""
        request = request_bytes("GET", self.slow)
        for source in sources:
            s = open_socket(self.hub.host, self.hub.port, source)
            s.sendall(request)
            self.socks.append(s)

    def collect(self, deadline_s, enough):
        """Reads the answers that arrive on the flood's connections until enough(answers)
        or the deadline; returns [(status, body)]."""
        sel = selectors.DefaultSelector()
        buffers = {}
        for s in self.socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
            buffers[s] = b""
        answers = []
        end = time.monotonic() + deadline_s
        try:
            while not enough(answers) and time.monotonic() < end and buffers:
                for key, _ in sel.select(timeout=max(0.01, end - time.monotonic())):
                    s = key.fileobj
                    try:
                        chunk = s.recv(65536)
                    except OSError:
                        chunk = b""
                    buffers[s] += chunk
                    head, sep, rest = buffers[s].partition(b"\r\n\r\n")
                    length = 0
                    for line in head.split(b"\r\n")[1:] if sep else []:
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
                    whole = bool(sep) and len(rest) >= length
                    if whole:
                        answers.append((int(head.split(b" ")[1]), rest[:length]))
                    if whole or not chunk:
                        sel.unregister(s)
                        del buffers[s]
        finally:
            sel.close()
            for s in self.socks:
                s.setblocking(True)
        return answers

    def test_one_address_holds_at_most_a_tenth_of_the_queue(self):
        self.flood(["127.0.0.2"] * self.FLOOD)
        # Searches that end while the flood is still being written free places: allow ten.
        want = self.FLOOD - self.SHARE - 10
        answers = self.collect(8.0, lambda a: sum(1 for st, _ in a if st == 429) >= want)
        limited = [body for status, body in answers if status == 429]
        statuses = sorted({status for status, _ in answers})
        self.assertGreaterEqual(len(limited), want, f"{len(limited)} of {self.FLOOD} searches from one address "
                                f"were refused ({len(answers)} answered: {statuses})")
        for body in limited:
            self.assertEqual(error_code(body), "rate_limited")
        self.assertTrue(set(statuses) <= {200, 429}, statuses)

    def test_abandoned_searches_are_dropped_unrun(self):
        sources = [a for a in self.ADDRESSES for _ in range(self.PER_ADDRESS)]
        self.flood(sources)
        # The hub has read the flood once it answers some of it.
        answered = self.collect(15.0, lambda a: len(a) >= 1)
        self.assertTrue(answered, "no search of the flood was answered")
        self.close_flood()
        ran_at_close = self.ok_searches()
        left = len(sources) + 1 - ran_at_close  # + 1: the search of setUp
        self.assertGreater(left, len(sources) / 2, "the flood ended before it could be abandoned")

        started = time.monotonic()
        answer = ask(self.hub.port, "GET", self.short, source="127.0.0.3", deadline=12.0)
        took = time.monotonic() - started
        ran_after = self.ok_searches() - ran_at_close - (1 if answer and answer[0] == 200 else 0)
        self.assertLess(ran_after, left / 4, f"{ran_after:.0f} of the {left:.0f} searches left at the close ran "
                        f"after their clients had gone (the new search took {took:.1f} s)")
        self.assertIsNotNone(answer, "a new search from another address was not answered within 12 s "
                             "(the contract's 10 s and a margin)")
        self.assertEqual(answer[0], 200, answer[2][:200])
        self.assertLess(took, 11.0)
        abandoned = wait_until(lambda: labelled_metric(metrics_text(self.hub), "trackhub_router_searches_total", result="abandoned"),
                               10, 'trackhub_router_searches_total{result="abandoned"} above 0')
        self.assertGreater(abandoned, 0)


# --------------------------------------------------------------------------------------
# 4. Config fails closed
# --------------------------------------------------------------------------------------

class ConfigFailsClosed(unittest.TestCase):
    """PROTOCOL 14: `jwt-secret` or `jwt-secret-file` written with null, ~ or an empty
    value is a bad value: a one-line error naming the key, exit 2, no hub."""

    def test_a_null_or_empty_secret_in_the_config_is_an_error(self):
        cases = [("jwt-secret: null\n", "jwt-secret"), ("jwt-secret: ~\n", "jwt-secret"),
                 ("jwt-secret:\n", "jwt-secret"), ("jwt-secret-file: null\n", "jwt-secret-file")]
        with tempfile.TemporaryDirectory(prefix="trackhub-doors-config-") as tmp:
            for text, key in cases:
                with self.subTest(config=text.strip()):
                    path = os.path.join(tmp, "trackhub.yaml")
                    with open(path, "w") as f:
                        f.write("log-level: info\n" + text)
                    code, listening, err = serve_outcome(["--config", path])
                    self.assertFalse(listening, f"{text.strip()!r} started a hub: {err}")
                    self.assertEqual(code, 2, err)
                    lines = [l for l in err.splitlines() if l.strip()]
                    self.assertEqual(len(lines), 1, err)
                    self.assertIn(key, lines[0])


# --------------------------------------------------------------------------------------
# 5. Secrets and logs
# --------------------------------------------------------------------------------------

class ShortSecrets(unittest.TestCase):
    """PROTOCOL 14: a secret shorter than 16 bytes is refused: one line, exit 2."""

    def assert_refused(self, args, env=None, rule=True):
        code, listening, err = serve_outcome(args, env=env)
        self.assertFalse(listening, f"{args} started a hub: {err}")
        self.assertEqual(code, 2, err)
        lines = [l for l in err.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, err)
        self.assertIn("jwt-secret", lines[0])
        if rule:
            self.assertIn("16", lines[0], "the line names the length rule")

    def test_secrets_shorter_than_16_bytes_exit_2(self):
        with tempfile.TemporaryDirectory(prefix="trackhub-doors-secret-") as tmp:
            secret_file = os.path.join(tmp, "secret")
            with open(secret_file, "w") as f:
                f.write("short-secret\n")
            config = os.path.join(tmp, "trackhub.yaml")
            with open(config, "w") as f:
                f.write("jwt-secret: [a, b]\n")
            cases = [
                ("--jwt-secret of 15 bytes", ["--jwt-secret", "fifteen-bytes!!"], None, True),
                ("a second secret of 5 bytes", ["--jwt-secret", f"{SECRET},short"], None, True),
                ("TRACKHUB_JWT_SECRET of 5 bytes", [], {"TRACKHUB_JWT_SECRET": "short"}, True),
                ("--jwt-secret-file of 12 bytes", ["--jwt-secret-file", secret_file], None, True),
                # A list of 1-byte secrets: refused, by the length rule or as a bad value.
                ("config jwt-secret: [a, b]", ["--config", config], None, False),
            ]
            for what, args, env, rule in cases:
                with self.subTest(what):
                    self.assert_refused(args, env, rule)
        code, listening, err = serve_outcome(["--jwt-secret", "sixteen-bytes-ok"])
        self.assertTrue(listening, f"a 16-byte secret is accepted (with a warning): {err}")


class DeviceIdsNotLogged(unittest.TestCase):
    """PROTOCOL 14: a device id in a path is a secret (section 11): a secured hub at
    `info` writes none, in text or JSON, whatever door the id came through."""

    def check(self, fmt):
        hub = HubProcess("--jwt-secret", SECRET, "--log-level", "info", "--log-format", fmt).start()
        try:
            admin = bearer(token("--scope", "admin"))
            status, _, raw = hub.http("POST", "/v1/trips", {"id": "log-trip", "route": ROUTE}, headers=admin)
            self.assertEqual(status, 201, raw)
            ts = now_ms() // 1000 - 600
            calls = [
                ("PUT", f"/v1/devices/{PHONE}", {"trip": "log-trip"}, admin, None, 200),
                ("GET", f"/v1/devices/{PHONE}", None, admin, None, 200),
                ("GET", f"/v1/osmand?id={PHONE}&lat={LAT0}&lon={LON0}&timestamp={ts}", None, {}, None, 200),
                ("POST", "/v1/osmand", None, {"Content-Type": FORM}, form(osmand_fix_fields(PHONE, ts + 10)).encode(), 200),
                ("POST", f"/v1/owntracks/{PHONE}", {"_type": "location", "lat": LAT0, "lon": LON0, "tst": ts + 20}, {}, None, 200),
                ("POST", f"/v1/owntracks/{UNKNOWN}", {"_type": "location", "lat": LAT0, "lon": LON0, "tst": ts + 30}, {}, None, 404),
                ("GET", f"/v1/osmand?id={UNKNOWN}&lat={LAT0}&lon={LON0}", None, {}, None, 404),
                ("GET", f"/v1/devices/{UNKNOWN}", None, admin, None, 404),
                ("DELETE", f"/v1/devices/{PHONE}", None, admin, None, 200),
            ]
            for method, path, body, headers, raw_body, expected in calls:
                status, _, raw = hub.http(method, path, body=body, raw=raw_body, headers=headers)
                self.assertEqual(status, expected, f"{method} {path}: {raw[:200]!r}")
            log = hub.stop_and_read()
        finally:
            hub.kill()
        self.assertGreaterEqual(log.count("http request"), len(calls), "one access line per request")
        for device in (PHONE, UNKNOWN):
            self.assertNotIn(device, log)
            self.assertNotIn(device[-16:], log, "a part of a device id")

    def test_text_log(self):
        self.check("text")

    def test_json_log(self):
        self.check("json")


# --------------------------------------------------------------------------------------
# 6. --max-refusal-rate
# --------------------------------------------------------------------------------------

RATE = 5
BURST = 30


class RefusalRateCase(unittest.TestCase):
    def burst(self, request):
        """BURST requests one after another; returns ([(status, code)], seconds taken)."""
        got = []
        started = time.monotonic()
        for i in range(BURST):
            status, doc, _ = request(i)
            got.append((status, (doc or {}).get("error", {}).get("code") if isinstance(doc, dict) else None))
        return got, time.monotonic() - started

    def assert_limited(self, got, took, refusal):
        statuses = [s for s, _ in got]
        self.assertEqual(statuses[0], refusal, got)
        self.assertTrue(set(statuses) <= {refusal, 429}, got)
        self.assertIn(429, statuses, f"{BURST} refusals in {took:.2f} s with --max-refusal-rate {RATE}: never 429")
        # N a second over the burst, and one burst of N on top: the most a limit lets through.
        self.assertLessEqual(statuses.count(refusal), RATE * (2 + took), got)
        self.assertEqual({c for s, c in got if s == 429}, {"rate_limited"})


class RefusalRateDevices(RefusalRateCase):
    """PROTOCOL 1: with --max-refusal-rate N, 404s for unknown devices on section 11's
    endpoints past N a second from one address become 429 `rate_limited` until the rate
    falls; other addresses are not affected."""

    @classmethod
    def setUpClass(cls):
        cls.hub = HubProcess("--max-refusal-rate", str(RATE), "--log-level", "warn").start()
        cls.hub.create_trip(id="rate-trip", route=ROUTE)
        status, _, raw = cls.hub.http("PUT", f"/v1/devices/{PHONE}", {"trip": "rate-trip"})
        assert status == 200, raw
        cls.ts = now_ms() // 1000 - 3600

    @classmethod
    def tearDownClass(cls):
        cls.hub.stop()

    def fix_ts(self):
        type(self).ts += 10
        return self.ts

    def recovers(self, source, valid, unknown):
        """Once the burst stops: a valid request gets its normal answer, and then an unknown
        id its 404 again, within a couple of seconds (looked at below the rate)."""
        wait_until(lambda: valid()[0] == 200, 5, f"a valid request from {source} to be answered 200", interval_s=0.25)
        wait_until(lambda: unknown()[0] == 404, 5, f"an unknown device from {source} to be 404 again", interval_s=0.5)

    def test_unknown_osmand_devices_past_the_rate_are_429(self):
        source = "127.0.0.4"
        got, took = self.burst(lambda i: self.hub.http("GET", f"/v1/osmand?id=nobody-burst-{i:03d}-0123456789&lat=38.7&lon=-9.14", source=source))
        self.assert_limited(got, took, 404)
        status, _, _ = self.hub.http("GET", f"/v1/osmand?id={UNKNOWN}&lat=38.7&lon=-9.14", source="127.0.0.5")
        self.assertEqual(status, 404, "another address is not limited")
        self.recovers(
            source,
            lambda: self.hub.http("GET", f"/v1/osmand?id={PHONE}&lat={LAT0}&lon={LON0}&timestamp={self.fix_ts()}", source=source),
            lambda: self.hub.http("GET", f"/v1/osmand?id={UNKNOWN}&lat=38.7&lon=-9.14", source=source))

    def test_unknown_owntracks_devices_past_the_rate_are_429(self):
        source = "127.0.0.6"

        def location():
            return {"_type": "location", "lat": LAT0, "lon": LON0, "tst": self.fix_ts()}

        got, took = self.burst(lambda i: self.hub.http("POST", f"/v1/owntracks/nobody-burst-{i:03d}-0123456789", location(), source=source))
        self.assert_limited(got, took, 404)
        self.recovers(
            source,
            lambda: self.hub.http("POST", f"/v1/owntracks/{PHONE}", location(), source=source),
            lambda: self.hub.http("POST", f"/v1/owntracks/{UNKNOWN}", location(), source=source))


class RefusalRateTokens(RefusalRateCase):
    """PROTOCOL 1: with --max-refusal-rate N, 401s for bad tokens past N a second from one
    address become 429 `rate_limited` until the rate falls."""

    def test_bad_tokens_past_the_rate_are_429(self):
        hub = HubProcess("--jwt-secret", SECRET, "--max-refusal-rate", str(RATE), "--log-level", "warn").start()
        try:
            source = "127.0.0.7"
            got, took = self.burst(lambda i: hub.http("GET", "/v1/trips", headers=bearer(f"not-a-token-{i}"), source=source))
            self.assert_limited(got, took, 401)
            admin = bearer(token("--scope", "admin"))
            self.assertEqual(hub.http("GET", "/v1/trips", headers=bearer("not-a-token"), source="127.0.0.8")[0], 401,
                             "another address is not limited")
            wait_until(lambda: hub.http("GET", "/v1/trips", headers=admin, source=source)[0] == 200, 5,
                       "a valid token from the limited address to be answered 200", interval_s=0.25)
        finally:
            hub.stop()


class RefusalRateOffByDefault(unittest.TestCase):
    """PROTOCOL 1: without --max-refusal-rate there is no limit (behind a proxy every
    client shares one address). This passes before the fix too: it guards the default."""

    def test_without_the_flag_refusals_are_never_429(self):
        hub = HubProcess("--jwt-secret", SECRET, "--log-level", "warn").start()
        try:
            statuses = [hub.http("GET", f"/v1/osmand?id=nobody-{i:04d}-0123456789&lat=38.7&lon=-9.14", source="127.0.0.9")[0]
                        for i in range(200)]
            self.assertEqual(set(statuses), {404})
            statuses = [hub.http("GET", "/v1/trips", headers=bearer(f"bad-{i}"), source="127.0.0.9")[0] for i in range(50)]
            self.assertEqual(set(statuses), {401})
        finally:
            hub.stop()


# --------------------------------------------------------------------------------------
# 7. Share replay
# --------------------------------------------------------------------------------------

class SyncClient:
    """A synchronous WebSocket client (websockets 12) that keeps what it received."""

    def __init__(self, hub, tok):
        self.ws = websockets.sync.client.connect(f"{hub.ws_url}?token={tok}", subprotocols=["trackhub.v1"],
                                                 open_timeout=10, max_size=16 << 20)
        self.log = []

    def send(self, **msg):
        self.ws.send(json.dumps(msg))

    def until(self, predicate, timeout=10.0, what="a message"):
        """Messages from now up to and including the first for which predicate holds."""
        end = time.monotonic() + timeout
        got = []
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}; got {got[-8:]}")
            try:
                msg = json.loads(self.ws.recv(timeout=left))
            except TimeoutError:
                continue
            self.log.append(msg)
            got.append(msg)
            if predicate(msg):
                return got

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass


class ShareReplay(unittest.TestCase):
    """PROTOCOL 13: events replayed to a `share` subscriber (`since_event`) have `lat`
    and `lon` null: a replay is not a way to a trail."""

    def test_a_share_replay_has_no_positions(self):
        hub = HubProcess("--jwt-secret", SECRET, "--log-level", "warn").start()
        clients = []
        try:
            admin_token = token("--scope", "admin")
            admin = bearer(admin_token)
            status, _, raw = hub.http("POST", "/v1/trips", {"id": "replay-trip", "route": ROUTE}, headers=admin)
            self.assertEqual(status, 201, raw)
            # On the route, 300 m east of it (off_route), back on it (back_on_route).
            t0 = now_ms() - 600_000
            fixes = [(LAT0, LON0), (LAT0 + 0.001, LON0 + 0.0035), (LAT0 + 0.002, LON0)]
            for i, (lat, lon) in enumerate(fixes):
                status, _, raw = hub.http("POST", "/v1/trips/replay-trip/fixes",
                                          {"fixes": [{"lat": lat, "lon": lon, "ts": t0 + i * 60_000, "seq": i + 1}]}, headers=admin)
                self.assertEqual(status, 200, raw)
            # The admin's replay: events with the marker's position (the control).
            viewer = SyncClient(hub, admin_token)
            clients.append(viewer)
            viewer.send(op="subscribe", trip="replay-trip", since_event=0, id="a")
            got = viewer.until(lambda m: m.get("type") == "event" and m.get("name") == "back_on_route", what="back_on_route")
            positioned = [m for m in got if m.get("type") == "event" and m.get("lat") is not None]
            self.assertTrue(positioned, f"no event with a position to hide: {got}")

            status, link, raw = hub.http("POST", "/v1/trips/replay-trip/share", {}, headers=admin)
            self.assertEqual(status, 201, raw)
            customer = SyncClient(hub, link["token"])
            clients.append(customer)
            customer.send(op="subscribe", trip="replay-trip", since_event=0, id="s")
            snap = customer.until(lambda m: m.get("type") == "snapshot" and m.get("re") == "s", what="the share snapshot")[-1]
            last = snap["last_event"]
            self.assertGreaterEqual(last, 3)
            got = customer.until(lambda m: m.get("type") == "event" and m.get("n") == last, what=f"the replay up to event {last}")
            replayed = [m for m in got if m.get("type") == "event"]
            self.assertEqual([m["n"] for m in replayed], list(range(1, last + 1)))
            for event in replayed:
                self.assertIn("lat", event)
                self.assertIn("lon", event)
                self.assertIsNone(event["lat"], f"a share replay shows where the rider was: {event}")
                self.assertIsNone(event["lon"], event)
        finally:
            for c in clients:
                c.close()
            hub.stop()


# --------------------------------------------------------------------------------------
# 8. Control characters in text logs
# --------------------------------------------------------------------------------------

class ControlCharactersInLogs(unittest.TestCase):
    """PROTOCOL 14: a peer's control characters are written escaped, never raw."""

    def test_a_terminal_escape_in_a_path_is_escaped_in_the_text_log(self):
        hub = HubProcess("--log-level", "info", "--log-format", "text").start()
        try:
            for path in ("/%1b[31mred", "/bell%07back%08space%7f"):
                answer = ask(hub.port, "GET", path)
                self.assertIsNotNone(answer, path)
            log = hub.stop_and_read()
        finally:
            hub.kill()
        raw = sorted({f"0x{ord(c):02x}" for c in log if ord(c) < 0x20 and c != "\n"})
        self.assertEqual(raw, [], f"raw control bytes in the log: {log!r}")
        self.assertIn("\\x1b", log, "the escape is written as \\x1b")
        self.assertIn("[31mred", log, "the rest of the path is logged")


# --------------------------------------------------------------------------------------
# 9. Refused upgrades
# --------------------------------------------------------------------------------------

ERROR_CODES = {401: "unauthorized", 403: "forbidden", 429: "rate_limited"}


def raw_upgrade(hub, path, extra=()):
    """A WebSocket upgrade written by hand; returns (status line, headers, body)."""
    s = open_socket(hub.host, hub.port)
    try:
        s.sendall(request_bytes("GET", path, [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Protocol", "trackhub.v1"), *extra], host=f"127.0.0.1:{hub.port}"))
        data = b""
        end = time.monotonic() + 10
        while b"\r\n\r\n" not in data and time.monotonic() < end:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        while len(body) < length and time.monotonic() < end:
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
        return lines[0], headers, body
    finally:
        s.close()


def library_status(url, **kwargs):
    """The status the `websockets` library reports for a refused upgrade, with its sync
    client and its asyncio (legacy) client: InvalidStatus / InvalidStatusCode. Anything
    else (InvalidMessage: "did not receive a valid HTTP response") is returned as text."""
    results = []
    try:
        ws = websockets.sync.client.connect(url, open_timeout=10, **kwargs)
        ws.close()
        results.append("accepted")
    except websockets.exceptions.InvalidStatus as e:
        results.append(e.response.status_code)
    except websockets.exceptions.InvalidHandshake as e:
        results.append(f"{type(e).__name__}: {e}")

    async def legacy():
        try:
            ws = await websockets.connect(url, open_timeout=10, **kwargs)
            await ws.close()
            return "accepted"
        except websockets.exceptions.InvalidStatusCode as e:
            return e.status_code
        except websockets.exceptions.InvalidHandshake as e:
            return f"{type(e).__name__}: {e}"

    results.append(asyncio.run(legacy()))
    return results


class RefusedUpgrades(unittest.TestCase):
    """PROTOCOL 1 and 2: every refused upgrade is answered HTTP/1.1 with its status and a
    JSON error body, so a WebSocket library reports the status."""

    @classmethod
    def setUpClass(cls):
        cls.hub = HubProcess("--jwt-secret", SECRET, "--log-level", "warn").start()
        cls.admin_token = token("--scope", "admin")
        status, _, raw = cls.hub.http("POST", "/v1/trips", {"id": "up-trip", "route": ROUTE}, headers=bearer(cls.admin_token))
        assert status == 201, raw

    @classmethod
    def tearDownClass(cls):
        cls.hub.stop()

    def assert_refused(self, hub, path, status, extra=(), origin=None):
        line, headers, body = raw_upgrade(hub, path, extra)
        self.assertTrue(line.startswith(f"HTTP/1.1 {status} "), f"status line {line!r}")
        self.assertIn("content-length", headers, headers)
        self.assertTrue(headers.get("content-type", "").startswith("application/json"), headers)
        self.assertEqual(len(body), int(headers["content-length"]))
        error = json.loads(body)["error"]
        self.assertEqual(error["code"], ERROR_CODES[status], body)
        self.assertIsInstance(error["message"], str)
        kwargs = {"origin": origin} if origin else {}
        self.assertEqual(library_status(f"ws://127.0.0.1:{hub.port}{path}", **kwargs), [status, status])

    def test_a_bad_token_is_401(self):
        self.assert_refused(self.hub, "/v1/ws?token=not-a-token", 401)

    def test_an_expired_token_is_401(self):
        expired = hubproc.mint_token({"sub": "old", "scope": ["viewer"], "trips": ["*"], "exp": int(time.time()) - 3600}, SECRET)
        self.assert_refused(self.hub, f"/v1/ws?token={expired}", 401)

    def test_a_revoked_share_link_is_401(self):
        admin = bearer(self.admin_token)
        status, link, raw = self.hub.http("POST", "/v1/trips/up-trip/share", {}, headers=admin)
        self.assertEqual(status, 201, raw)
        status, _, raw = self.hub.http("DELETE", f"/v1/shares/{link['jti']}", headers=admin)
        self.assertEqual(status, 200, raw)
        self.assert_refused(self.hub, f"/v1/ws?token={link['token']}", 401)

    def test_a_foreign_origin_is_403(self):
        self.assert_refused(self.hub, f"/v1/ws?token={self.admin_token}", 403,
                            extra=[("Origin", "http://evil.example")], origin="http://evil.example")

    def test_one_connection_too_many_is_429(self):
        hub = HubProcess("--max-conns-per-ip", "1", "--log-level", "warn").start()
        held = None
        try:
            held = RawWebSocket(hub)
            self.assertEqual(held.status, 101)
            self.assert_refused(hub, "/v1/ws", 429)
        finally:
            if held is not None:
                held.close()
            hub.stop()


if __name__ == "__main__":
    unittest.main()
