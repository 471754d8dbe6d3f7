"""Logs and metrics (PROTOCOL.md section 14, issue 17), end to end against the release
binary: `--log-format json` lines parse and carry `time`, `level`, `msg`; one line per HTTP
answer and per closed WebSocket with their fields; a secured hub used with tokens in
`?token=`, `Authorization` and `hello` (good and bad ones, and one in a path) writes none
of them, nor its secret, anywhere in its log; text lines start with a time stamp;
`/metrics` has build info and plausible `process_*` values, and `fix_ack` counts fixes.

Nothing sleeps to synchronise: every wait is for a message, a log line or a process exit,
with a deadline that only guards against a hang.
"""

import asyncio
import json
import re
import time
import unittest

import websockets

import hubproc
from hubproc import AsyncTestCase, Client, HubProcess, connect, expect_close
from rawclient import wait_until

SECRET = "logs-and-metrics-secret-0123456789abcdef"
ROUTE = [[-9.1420, 38.7158], [-9.1360, 38.7180], [-9.1300, 38.7200]]
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
TEXT_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (error|warn|info|debug) ")
EXIT_DEADLINE_S = 30


def setUpModule():
    hubproc.require_binary()


def token(secret, scope="admin"):
    result = hubproc.run_cli(["token", "--secret", secret, "--scope", scope, "--trip", "*"])
    if result.returncode != 0:
        raise AssertionError(f"token failed: {result.stderr}")
    return result.stdout.strip()


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class SecuredJSONLogTest(AsyncTestCase):
    """One secured hub, used with every kind of token; its whole log is then checked."""

    async def test_json_lines_fields_and_no_token_or_secret(self):
        good, wrong_secret = token(SECRET), token("another-secret-of-forty-bytes-0123456789")
        garbage = "garbage-token-value-7f3a"
        hub = HubProcess("--jwt-secret", SECRET, "--log-format", "json", "--log-level", "debug").start()
        try:
            # HTTP: Authorization good and bad, a token in the query, one in a path.
            status, _, _ = hub.http("GET", "/v1/trips", headers={"Authorization": f"Bearer {good}"})
            self.assertEqual(status, 200)
            status, _, _ = hub.http("GET", "/v1/trips", headers={"Authorization": f"Bearer {wrong_secret}"})
            self.assertEqual(status, 401)
            status, _, _ = hub.http("GET", f"/v1/trips?token={garbage}")
            self.assertEqual(status, 401)
            status, _, _ = hub.http("GET", f"/v1/trips/{wrong_secret}", headers={"Authorization": f"Bearer {good}"})
            self.assertEqual(status, 400)  # not a trip id

            # WebSocket: a good ?token=, then hello with it and a ping; closed by us with 4001.
            ws = await websockets.connect(f"{hub.ws_url}?token={good}", subprotocols=["trackhub.v1"],
                                          open_timeout=hubproc.RECV_DEADLINE_S, ping_interval=None)
            client = Client(ws)
            await client.send(op="hello", id="h1", token=good)
            await client.wait_type("welcome")
            await client.send(op="ping", id="p1")
            await client.wait_type("pong", re="p1")
            await ws.close(code=4001, reason="done")

            # A bad ?token= is refused at the upgrade (401, logged as an HTTP answer).
            # (The status is checked in the log: lws may close before the client parses it.)
            with self.assertRaises(websockets.InvalidHandshake):
                await websockets.connect(f"{hub.ws_url}?token={wrong_secret}", open_timeout=hubproc.RECV_DEADLINE_S)

            # hello with bad tokens: answered unauthorized.
            client = await Client.open(hub)
            await client.send(op="hello", id="h2", token=wrong_secret)
            await client.wait_type("error", re="h2")
            await client.send(op="hello", id="h3", token=garbage)
            await client.wait_type("error", re="h3")
            await client.close()

            # Open at SIGTERM: the hub closes it with 1001.
            draining = await connect(hub)
            await asyncio.to_thread(wait_until, lambda: '"code":4001' in hub.stderr_text(), what="the closed-WebSocket line of 4001")
            hub.signal()
            code, _ = await expect_close(draining)
            self.assertEqual(code, 1001)
            log = await asyncio.to_thread(hub.stop_and_read, EXIT_DEADLINE_S)
        finally:
            hub.kill()

        lines = json_lines(log)  # every line parses, or this raises
        self.assertGreater(len(lines), 5)
        for line in lines:
            self.assertIsInstance(line, dict)
            self.assertRegex(line.get("time", ""), TIME, line)
            self.assertIn(line.get("level"), {"error", "warn", "info", "debug"}, line)
            self.assertIsInstance(line.get("msg"), str, line)

        requests = [l for l in lines if l["msg"] == "http request"]
        ok = [l for l in requests if l["path"] == "/v1/trips" and l["status"] == 200]
        self.assertEqual(len(ok), 1, requests)
        self.assertEqual(ok[0]["method"], "GET")
        self.assertEqual(ok[0]["peer"], "127.0.0.1")
        self.assertIsInstance(ok[0]["duration_s"], float)
        self.assertGreaterEqual(ok[0]["duration_s"], 0)
        self.assertFalse(any("?" in l["path"] for l in requests), "a path with its query")
        self.assertEqual(sorted(l["status"] for l in requests if l["path"] == "/v1/trips"), [200, 401, 401])
        self.assertTrue(any(l["path"] == "/v1/ws" and l["status"] == 401 for l in requests), requests)
        in_path = [l for l in requests if l["path"].startswith("/v1/trips/")]
        self.assertEqual([l["path"] for l in in_path], ["/v1/trips/[redacted]"])

        closed = {l["code"]: l for l in lines if l["msg"] == "websocket closed"}
        self.assertIn(4001, closed, lines)
        by_peer = closed[4001]
        self.assertEqual((by_peer["closed_by"], by_peer["messages_in"], by_peer["messages_out"]), ("peer", 2, 2))
        self.assertEqual(by_peer["peer"], "127.0.0.1")
        self.assertGreaterEqual(by_peer["duration_s"], 0)
        self.assertIn(1001, closed, lines)
        self.assertEqual(closed[1001]["closed_by"], "hub")

        self.assertGreaterEqual(sum(1 for l in lines if l["msg"] == "token refused"), 3)
        self.assertTrue(any(l.get("source") == "lws" for l in lines), "no libwebsockets line at debug")

        for needle in [SECRET, good, wrong_secret, garbage, *good.split("."), *wrong_secret.split(".")[1:]]:
            self.assertNotIn(needle, log)


class TextLogTest(unittest.TestCase):
    def test_text_lines_start_with_a_time_stamp(self):
        hub = HubProcess("--log-format", "text").start()
        try:
            status, _, _ = hub.http("GET", "/healthz?verbose=1")
            self.assertEqual(status, 200)
            wait_until(lambda: "http request" in hub.stderr_text(), what="the access line")
            log = hub.stop_and_read(EXIT_DEADLINE_S)
        finally:
            hub.kill()
        lines = log.splitlines()
        for line in lines:
            self.assertRegex(line, TEXT_LINE)
        self.assertTrue(any("OPEN MODE" in line for line in lines), "the open-mode warning")
        request = next(line for line in lines if " http request " in line)
        self.assertRegex(request, r" method=GET path=/healthz status=200 duration_s=\d+\.\d{6} peer=127\.0\.0\.1$")

    def test_environment_selects_json_and_a_bad_format_exits_2(self):
        hub = HubProcess(env={"TRACKHUB_LOG_FORMAT": "json"}).start()
        try:
            hub.http("GET", "/healthz")
            wait_until(lambda: "http request" in hub.stderr_text(), what="the access line")
            log = hub.stop_and_read(EXIT_DEADLINE_S)
        finally:
            hub.kill()
        self.assertTrue(all(isinstance(l, dict) and "time" in l for l in json_lines(log)))

        result = hubproc.run_cli(["serve", "--log-format", "xml", "--listen", "127.0.0.1:0"])
        self.assertEqual(result.returncode, 2)
        self.assertIn("--log-format", result.stderr)


def scrape(hub):
    status, _, raw = hub.http("GET", "/metrics")
    assert status == 200, status
    return raw.decode()


def value(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


class MetricsTest(unittest.TestCase):
    def test_build_info_process_metrics_and_fix_ack_per_fix(self):
        before_start = time.time()
        hub = HubProcess().start()
        after_start = time.time()
        try:
            text = scrape(hub)
            version = hubproc.run_cli(["--version"]).stdout.split()[-1]
            self.assertIn(f'trackhub_build_info{{version="{version}"}} 1\n', text)
            self.assertGreater(value(text, "process_resident_memory_bytes"), 0)
            self.assertGreater(value(text, "process_open_fds"), 0)
            self.assertGreaterEqual(value(text, "process_cpu_seconds_total"), 0)
            # btime in /proc/stat is whole seconds (truncated): up to 1 s early.
            started = value(text, "process_start_time_seconds")
            self.assertGreaterEqual(started, before_start - 1.5)
            self.assertLessEqual(started, after_start + 0.5)

            for line in text.splitlines():
                if line.startswith("# TYPE "):
                    _, _, name, kind = line.split()
                    if kind == "counter":
                        self.assertTrue(name.endswith("_total"), name)
                    self.assertNotRegex(name, r"_ms(_|$)")

            hub.create_trip(id="M4", route=ROUTE)
            count = value(text, "trackhub_fix_ack_seconds_count")
            t0 = hubproc.now_ms() - 600_000
            fixes = [{"lat": 38.7158 + i * 0.0002, "lon": -9.1420 + i * 0.0005, "ts": t0 + i * 30_000, "seq": i + 1}
                     for i in range(4)]
            status, _, raw = hub.http("POST", "/v1/trips/M4/fixes", {"fixes": fixes})
            self.assertEqual(status, 200, raw)
            # The ack histogram is updated before the answer is written.
            self.assertEqual(value(scrape(hub), "trackhub_fix_ack_seconds_count"), count + 4)
        finally:
            hub.stop()


class CommitHereTest(AsyncTestCase):
    async def test_fixes_over_a_websocket_are_committed_on_the_service_thread_when_the_store_is_idle(self):
        """Issue 40: a fix whose store is idle is committed on the service thread (no hand-off
        to the writer and back), counted by trackhub_store_commits_here_total, and still acked
        only once stored: each ack's fix is in the trail when the ack arrives."""
        hub = HubProcess().start()
        try:
            hub.create_trip(id="CH", route=ROUTE)
            before = value(scrape(hub), "trackhub_store_commits_here_total")
            client = Client(await connect(hub))
            t0 = hubproc.now_ms() - 600_000
            # One fix at a time, each waiting for its ack: the writer is idle between them
            # (but for the hub's 100 ms state flushes, which a few fixes cannot all meet).
            for i in range(6):
                await client.send(op="fix", id=f"f{i}", trip="CH", lat=38.7158 + i * 0.0002,
                                  lon=-9.1420 + i * 0.0005, ts=t0 + i * 30_000, seq=i + 1)
                ack = await client.wait_for(lambda m, i=i: m.get("re") == f"f{i}", what=f"the ack of f{i}")
                self.assertEqual(ack["type"], "ack", ack)
                status, trail, raw = hub.http("GET", "/v1/trips/CH/trail")
                self.assertEqual(status, 200, raw)
                self.assertIn(t0 + i * 30_000, trail["properties"]["ts"])
            self.assertGreaterEqual(value(scrape(hub), "trackhub_store_commits_here_total") - before, 1)
            await client.ws.close()
        finally:
            hub.stop()


if __name__ == "__main__":
    unittest.main()
