"""The operator's interface of `trackhub serve` (PROTOCOL.md section 9), end to end:
--help, bad flags (exit 2, one line naming the flag), environment variables and their
precedence, and graceful shutdown on SIGTERM / SIGINT (drain, acks delivered, close 1001,
exit 0 within --shutdown-timeout).
"""

import asyncio
import http.client
import json
import signal
import subprocess
import tempfile
import unittest

import hubproc
from hubproc import Client, Courier, HubProcess, expect_close, offset

SHUTDOWN_TIMEOUT_S = 5
# How long past --shutdown-timeout the process may take to be reaped on a busy machine.
EXIT_GRACE_S = 15


def setUpModule():
    hubproc.require_binary()


def serve(*args, env=None):
    """`trackhub serve ARGS` run to completion in an empty directory."""
    with tempfile.TemporaryDirectory(prefix="trackhub-cli-") as cwd:
        return subprocess.run(
            [hubproc.require_binary(), "serve", *args],
            env=hubproc.clean_env(env), cwd=cwd, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=30)


class TestFlags(unittest.TestCase):
    def test_help_exits_0_and_lists_flags(self):
        result = serve("--help")
        self.assertEqual(result.returncode, 0, result.stderr)
        for flag in ("--listen", "--data", "--jwt-secret", "--tick-hz", "--fleet-hz", "--allow-origin",
                     "--sync", "--retain-days", "--end-after", "--shutdown-timeout", "--max-items",
                     "--log-level", "--max-message", "--max-body", "--max-route-points", "--max-waypoints",
                     "--max-subscriptions", "--max-fix-rate", "--max-conns-per-ip", "--max-refusal-rate", "--auth-timeout",
                     "--max-unsent", "--max-clock-skew"):
            self.assertIn(flag, result.stdout, f"--help does not mention {flag}")
        self.assertNotIn("listening on http://127", result.stdout)

    def assert_usage_error(self, result, flag):
        self.assertEqual(result.returncode, 2, f"stdout={result.stdout!r} stderr={result.stderr!r}")
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, f"want one line on stderr, got {result.stderr!r}")
        self.assertIn(flag, lines[0])
        self.assertNotIn("listening on http", result.stdout)

    def test_bad_flags_exit_2_with_one_line_naming_the_flag(self):
        cases = [
            (["--tick-hz", "0"], "--tick-hz"),
            (["--tick-hz", "61"], "--tick-hz"),
            (["--tick-hz", "x"], "--tick-hz"),
            (["--tick-hz"], "--tick-hz"),  # no value
            (["--listen", "nope"], "--listen"),
            (["--listen", "127.0.0.1:99999"], "--listen"),
            (["--unknown"], "--unknown"),
            (["--unknown", "1"], "--unknown"),
            (["--fleet-hz", "0"], "--fleet-hz"),
            (["--sync", "sometimes"], "--sync"),
            (["--retain-days", "0"], "--retain-days"),
            (["--max-items", "0"], "--max-items"),
            (["--shutdown-timeout", "10"], "--shutdown-timeout"),  # a duration needs a unit
            (["--end-after", "soon"], "--end-after"),
            (["--log-level", "loud"], "--log-level"),
            (["--max-message", "lots"], "--max-message"),
        ]
        for args, flag in cases:
            with self.subTest(args=args):
                self.assert_usage_error(serve(*args), flag)

    def test_bad_environment_value_names_the_flag(self):
        self.assert_usage_error(serve(env={"TRACKHUB_TICK_HZ": "0"}), "tick-hz")


class TestEnvironment(hubproc.AsyncTestCase):
    async def welcome(self, *args, env=None):
        hub = HubProcess(*args, env=env).start()
        try:
            c = await Client.open(hub)
            await c.send(op="hello", id="h")
            msg = await c.wait_type("welcome", re="h")
            await c.close()
            return msg
        finally:
            self.assertEqual(hub.stop(), 0)

    async def test_env_var_is_read(self):
        msg = await self.welcome(env={"TRACKHUB_TICK_HZ": "20"})
        self.assertEqual(msg["tick_hz"], 20)

    async def test_flag_wins_over_env_var(self):
        msg = await self.welcome("--tick-hz", "15", env={"TRACKHUB_TICK_HZ": "20"})
        self.assertEqual(msg["tick_hz"], 15)

    async def test_default_tick_hz(self):
        msg = await self.welcome()
        self.assertEqual((msg["tick_hz"], msg["fleet_hz"], msg["protocol"]), (10, 1, 1))


class TestShutdown(hubproc.AsyncTestCase):
    async def asyncSetUp(self):
        await super().asyncSetUp()
        self.hub = HubProcess("--shutdown-timeout", f"{SHUTDOWN_TIMEOUT_S}s", "--max-fix-rate", "100000").start()

    async def asyncTearDown(self):
        self.hub.kill()

    def health_after_drain(self):
        """/healthz once draining: 503 "draining", or no answer at all (stopped accepting)."""
        try:
            status, body, raw = self.hub.http("GET", "/healthz", timeout=5)
        except (ConnectionError, http.client.HTTPException, OSError):
            return None
        return status, body

    async def wait_exit(self):
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(None, self.hub.wait, SHUTDOWN_TIMEOUT_S + EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            self.fail(f"hub still running {SHUTDOWN_TIMEOUT_S + EXIT_GRACE_S}s after the signal "
                      f"(--shutdown-timeout {SHUTDOWN_TIMEOUT_S}s); stderr:\n{self.hub.stderr_text()}")

    async def check_graceful(self, signum):
        self.assertEqual(self.hub.http("GET", "/healthz")[0], 200)
        viewers = [await Client.open(self.hub) for _ in range(3)]
        for i, v in enumerate(viewers):
            await v.send(op="subscribe", trip=f"sig-{i}", id="s")
            await v.wait_type("snapshot", re="s")
        self.hub.signal(signum)
        for v in viewers:
            code, _ = await expect_close(v.ws, timeout=SHUTDOWN_TIMEOUT_S + EXIT_GRACE_S)
            self.assertEqual(code, 1001, "clients are closed with 1001 (going away)")
        # Draining has begun (the clients were closed): /healthz is 503 draining or gone.
        health = self.health_after_drain()
        if health is not None:
            self.assertEqual(health[0], 503)
            self.assertEqual(health[1]["status"], "draining")
        self.assertEqual(await self.wait_exit(), 0, self.hub.stderr_text())

    async def test_sigterm_closes_1001_and_exits_0(self):
        await self.check_graceful(signal.SIGTERM)

    async def test_sigint_closes_1001_and_exits_0(self):
        await self.check_graceful(signal.SIGINT)

    async def test_acks_for_fixes_received_before_sigterm_are_delivered(self):
        trip = "sig-acks"
        lat0, lon0 = 38.70, -9.15
        self.hub.create_trip(id=trip, route=[[lon0, lat0], [-9.14, lat0]])
        courier = await Client.open(self.hub)
        # Enough fixes that many acks are still on their way when SIGTERM lands (each fix
        # is its own store commit), few enough for a busy machine.
        n = 300
        c = Courier(trip, start_ts=hubproc.now_ms() - n * 1000 - 60_000)
        for i in range(n):
            await courier.send(**c.fix(*offset(lat0, lon0, east_m=(i % 800) + 1, north_m=(i % 7))))
        # The pong proves the hub has read every fix (it handles one connection's messages
        # in order); their acks wait for the store, so most are still to come. SIGTERM now.
        await courier.send(op="ping", id="last")
        await courier.wait_type("pong", re="last", timeout=30)
        acked_before = sum(1 for m in courier.since(0) if m.get("type") == "ack")
        self.hub.signal(signal.SIGTERM)
        code, rest = await expect_close(courier.ws, timeout=SHUTDOWN_TIMEOUT_S + EXIT_GRACE_S)
        self.assertEqual(code, 1001)
        acks = [m for m in courier.since(0) + rest if isinstance(m, dict) and m.get("type") == "ack"]
        self.assertEqual([a["seq"] for a in acks], list(range(1, n + 1)),
                         f"every fix read before SIGTERM is acked, in order ({acked_before} before the signal)")
        errors = [m for m in courier.since(0) + rest if isinstance(m, dict) and m.get("type") == "error"]
        self.assertEqual(errors, [])
        self.assertEqual(await self.wait_exit(), 0, self.hub.stderr_text())


if __name__ == "__main__":
    unittest.main()
