"""An operator's first day (PROTOCOL.md section 14, issue 17), end to end against the
release binary: `--version`, `--config FILE` (precedence flags > environment > file, an
unknown key or bad value exits 2 naming it, `config default` round trip, the systemd
sample), secrets (`--jwt-secret-file`, two secrets for rotation, the short-secret warning),
systemd readiness over a NOTIFY_SOCKET datagram socket this test binds, and `simulate`
with the `http://` URL serve prints and a `--replay` that exits when its track ends.

Nothing sleeps to synchronise: every wait is for a line, a datagram or a process exit,
with a deadline that only guards against a hang.
"""

import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import unittest

import hubproc
from hubproc import HubProcess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Hang guards only: a healthy run is done in a fraction of these.
EXIT_DEADLINE_S = 60
DATAGRAM_DEADLINE_S = 30

LONG_SECRET = "0123456789abcdef0123456789abcdef-current"
OLD_SECRET = "fedcba9876543210fedcba9876543210-retired"


def setUpModule():
    hubproc.require_binary()


def serve(*args, env=None, cwd=None):
    """`trackhub serve ARGS` run to completion (for flag and config errors)."""
    with tempfile.TemporaryDirectory(prefix="trackhub-ops-") as tmp:
        return subprocess.run(
            [hubproc.require_binary(), "serve", *args],
            env=hubproc.clean_env(env), cwd=cwd or tmp, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=EXIT_DEADLINE_S)


def token(secret, scope="admin"):
    result = hubproc.run_cli(["token", "--secret", secret, "--scope", scope, "--trip", "*"])
    if result.returncode != 0:
        raise AssertionError(f"token failed: {result.stderr}")
    return result.stdout.strip()


def signed_with(jwt, secret):
    """True when the HS256 signature of `jwt` was made with `secret`."""
    head, payload, signature = jwt.split(".")
    return hubproc.hs256_signature(secret, f"{head}.{payload}") == signature


def welcome(hub):
    """tick_hz and fleet_hz of the hub's `welcome`: the settings a client can see."""
    import asyncio

    async def hello():
        client = await hubproc.Client.open(hub)
        try:
            await client.send(op="hello", id="h")
            msg = await client.wait_for(lambda m: m.get("type") == "welcome", what="welcome")
            return msg["tick_hz"], msg["fleet_hz"]
        finally:
            await client.ws.close()

    return asyncio.run(hello())


class UsageErrorAssertions(unittest.TestCase):
    def assert_usage_error(self, result, *words):
        self.assertEqual(result.returncode, 2, f"stdout={result.stdout!r} stderr={result.stderr!r}")
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, f"want one line on stderr, got {result.stderr!r}")
        for word in words:
            self.assertIn(word, lines[0])
        self.assertNotIn("listening on", result.stdout)


class TestVersion(unittest.TestCase):
    def test_version_flag_and_command_print_the_same_version(self):
        flag = hubproc.run_cli(["--version"])
        command = hubproc.run_cli(["version"])
        self.assertEqual(flag.returncode, 0, flag.stderr)
        self.assertEqual(command.returncode, 0, command.stderr)
        self.assertRegex(flag.stdout.strip(), r"^trackhub \d+\.\d+\.\d+$")
        self.assertEqual(flag.stdout, command.stdout)

    def test_main_usage_lists_the_new_commands(self):
        result = hubproc.run_cli(["--help"])
        self.assertEqual(result.returncode, 0)
        for word in ("config", "version"):
            self.assertIn(word, result.stdout)


class TestConfigFile(UsageErrorAssertions):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="trackhub-config-")
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def hub(self, *args, env=None):
        hub = HubProcess(*args, env=env).start()
        self.addCleanup(hub.stop)
        return hub

    def test_the_file_applies(self):
        path = self.write("a.yaml", "tick-hz: 5\nfleet-hz: 0.5\n")
        self.assertEqual(welcome(self.hub("--config", path)), (5, 0.5))

    def test_flags_win_over_environment_which_wins_over_the_file(self):
        path = self.write("b.yaml", "tick-hz: 5\nfleet-hz: 0.5\n")
        hub = self.hub("--config", path, "--tick-hz", "7", env={"TRACKHUB_TICK_HZ": "6", "TRACKHUB_FLEET_HZ": "2"})
        # tick-hz: flag 7 over env 6 over file 5; fleet-hz: env 2 over file 0.5.
        self.assertEqual(welcome(hub), (7, 2))

    def test_the_file_can_be_named_by_the_environment(self):
        path = self.write("c.yaml", "tick-hz: 12\n")
        self.assertEqual(welcome(self.hub(env={"TRACKHUB_CONFIG": path}))[0], 12)

    def test_an_unknown_key_exits_2_naming_it(self):
        path = self.write("d.yaml", "tick-hz: 5\ntick_hz: 6\n")
        self.assert_usage_error(serve("--config", path), "tick_hz", "unknown key", path)

    def test_a_bad_value_exits_2_naming_the_flag_and_the_file(self):
        path = self.write("e.yaml", "sync: normal\ntick-hz: 70\n")
        self.assert_usage_error(serve("--config", path), "--tick-hz", path, "line 2")

    def test_a_file_that_is_not_yaml_or_not_there_exits_2(self):
        path = self.write("f.yaml", "tick-hz: [5\n")
        self.assert_usage_error(serve("--config", path), "--config", path)
        self.assert_usage_error(serve("--config", os.path.join(self.tmp.name, "missing.yaml")), "--config", "missing.yaml")

    def test_config_default_lists_every_flag_of_serve_help(self):
        default = hubproc.run_cli(["config", "default"])
        self.assertEqual(default.returncode, 0, default.stderr)
        keys = set(re.findall(r"(?m)^# ([a-z][a-z-]*):", default.stdout))
        helped = set(re.findall(r"--([a-z][a-z-]+)", serve("--help").stdout)) - {"config", "help"}
        self.assertTrue(helped, "serve --help lists no flags")
        self.assertEqual(helped - keys, set(), "flags of serve --help missing from config default")
        self.assertIn("# tick-hz: 10", default.stdout)

    def test_config_default_is_accepted_as_it_is_and_with_every_line_uncommented(self):
        text = hubproc.run_cli(["config", "default"]).stdout
        as_is = self.write("default.yaml", text)
        self.assertEqual(welcome(self.hub("--config", as_is)), (10, 1))
        # Strip one "# " from every line that has a value: the settings become keys, prose
        # (##) stays comment. A line without a value (`# jwt-secret:`) stays commented: a
        # secret written with no value is an error (PROTOCOL 14), not an open hub.
        uncommented_text = re.sub(r"(?m)^# (?=[a-z][a-z-]*: *[^ #\n])", "", text)
        self.assertRegex(uncommented_text, r"(?m)^# jwt-secret: ")
        self.assertRegex(uncommented_text, r"(?m)^tick-hz: 10\b")
        uncommented = self.write("uncommented.yaml", uncommented_text)
        # --listen and --data (HubProcess's flags) win over the file's 127.0.0.1:8080 and ./trackhub-data.
        self.assertEqual(welcome(self.hub("--config", uncommented)), (10, 1))

    def test_the_systemd_sample_config_starts_a_secured_hub(self):
        secret = self.write("jwt-secret", LONG_SECRET + "\n")
        sample = os.path.join(ROOT, "deploy", "systemd", "trackhub.yaml")
        # Flags override what names this machine's paths; the rest is the sample as shipped.
        hub = self.hub("--config", sample, "--jwt-secret-file", secret, "--web-root", os.path.join(ROOT, "web-client"))
        status, _, _ = hub.http("GET", "/v1/trips")
        self.assertEqual(status, 401)
        status, _, _ = hub.http("GET", "/v1/trips", headers={"Authorization": f"Bearer {token(LONG_SECRET)}"})
        self.assertEqual(status, 200)


class TestSecrets(UsageErrorAssertions):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="trackhub-secret-")
        self.addCleanup(self.tmp.cleanup)

    def status(self, hub, jwt):
        status, _, _ = hub.http("GET", "/v1/trips", headers={"Authorization": f"Bearer {jwt}"})
        return status

    def test_secret_file_without_its_trailing_newline(self):
        path = os.path.join(self.tmp.name, "secret")
        with open(path, "w") as f:
            f.write(LONG_SECRET + "\n")
        hub = HubProcess("--jwt-secret-file", path).start()
        try:
            self.assertEqual(self.status(hub, token(LONG_SECRET)), 200)
            self.assertEqual(self.status(hub, token(LONG_SECRET + "\n")), 401)
        finally:
            self.assertEqual(hub.stop(), 0)

    def test_unreadable_secret_file_exits_2_naming_it(self):
        missing = os.path.join(self.tmp.name, "no-such-secret")
        self.assert_usage_error(serve("--jwt-secret-file", missing), "--jwt-secret-file", missing)

    def test_secret_and_secret_file_together_exit_2(self):
        path = os.path.join(self.tmp.name, "secret")
        with open(path, "w") as f:
            f.write(LONG_SECRET)
        self.assert_usage_error(serve("--jwt-secret", LONG_SECRET, "--jwt-secret-file", path),
                                "--jwt-secret", "--jwt-secret-file")

    def test_rotation_accepts_both_secrets_and_token_signs_with_the_first(self):
        both = f"{LONG_SECRET},{OLD_SECRET}"
        hub = HubProcess("--jwt-secret", both).start()
        try:
            self.assertEqual(self.status(hub, token(OLD_SECRET)), 200, "a token of the retiring secret")
            self.assertEqual(self.status(hub, token(LONG_SECRET)), 200, "a token of the new secret")
            self.assertEqual(self.status(hub, token("x" * 40)), 401, "a token of neither")
            minted = token(both)
            self.assertTrue(signed_with(minted, LONG_SECRET), "token did not sign with the first secret")
            self.assertFalse(signed_with(minted, OLD_SECRET))
            self.assertEqual(self.status(hub, minted), 200)
            self.assertNotIn(LONG_SECRET, hub.stderr_text())
        finally:
            self.assertEqual(hub.stop(), 0)

    def test_three_secrets_exit_2(self):
        self.assert_usage_error(serve("--jwt-secret", "a" * 32 + "," + "b" * 32 + "," + "c" * 32), "--jwt-secret")

    def test_short_secret_is_accepted_with_a_warning_that_does_not_print_it(self):
        short = "small-but-ok-Secret-9"
        hub = HubProcess("--jwt-secret", short).start()
        try:
            self.assertEqual(self.status(hub, token(short)), 200)
        finally:
            self.assertEqual(hub.stop(), 0)
        stderr = hub.stderr_text()
        self.assertRegex(stderr, r"(?m)^.*warn.*JWT secret is 21 bytes, shorter than 32")
        self.assertNotIn(short, stderr)

    def test_a_secret_under_16_bytes_exits_2_without_printing_it(self):
        """PROTOCOL 14: too short to be a secret, and its redaction would blank common words."""
        for secret in ("tiny-Secret-9", "a,b", "0123456789abcdef0123456789abcdef,short"):
            r = serve("--jwt-secret", secret)
            self.assert_usage_error(r, "--jwt-secret")
            self.assertIn("at least 16 bytes", r.stderr)
            self.assertNotIn("tiny-Secret-9", r.stderr)

    def test_a_long_secret_gets_no_warning(self):
        hub = HubProcess("--jwt-secret", LONG_SECRET).start()
        self.assertEqual(hub.stop(), 0)
        self.assertNotIn("shorter than", hub.stderr_text())


class TestSystemdReadiness(unittest.TestCase):
    """The test plays systemd: it binds the datagram socket and names it in NOTIFY_SOCKET."""

    def check(self, bind_address, notify_socket):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(listener.close)
        listener.bind(bind_address)
        listener.settimeout(DATAGRAM_DEADLINE_S)
        hub = HubProcess(env={"NOTIFY_SOCKET": notify_socket}).start()
        try:
            # start() returned: the listening line is out. READY=1 is the first datagram.
            self.assertEqual(listener.recv(4096), b"READY=1")
            hub.signal(signal.SIGTERM)
            self.assertEqual(listener.recv(4096), b"STOPPING=1")
            self.assertEqual(hub.wait(EXIT_DEADLINE_S), 0)
        finally:
            hub.stop()
        self.assertNotIn("NOTIFY_SOCKET", hub.stderr_text())

    def test_ready_and_stopping_on_a_path_socket(self):
        tmp = tempfile.TemporaryDirectory(prefix="trackhub-notify-")
        self.addCleanup(tmp.cleanup)
        path = os.path.join(tmp.name, "notify")
        self.check(path, path)

    def test_ready_and_stopping_on_an_abstract_socket(self):
        name = f"trackhub-notify-{os.getpid()}"
        self.check("\0" + name, "@" + name)


class TestSimulate(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="trackhub-sim-")
        self.addCleanup(self.tmp.cleanup)
        self.hub = HubProcess().start()
        self.addCleanup(self.hub.stop)
        # A 2-second track, 10 m a second: three points, plausible to the hub.
        self.track = os.path.join(self.tmp.name, "two-seconds.csv")
        with open(self.track, "w") as f:
            f.write("ts,lat,lon\n")
            for i in range(3):
                lat, lon = hubproc.offset(60.17, 24.94, north_m=10 * i)
                f.write(f"{1_700_000_000_000 + 1000 * i},{lat:.7f},{lon:.7f}\n")

    def replay(self, url):
        return subprocess.run(
            [hubproc.require_binary(), "simulate", "--hub", url, "--replay", self.track],
            env=hubproc.clean_env(), cwd=self.tmp.name, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=EXIT_DEADLINE_S)

    def assert_replayed(self, result):
        self.assertEqual(result.returncode, 0, result.stderr)
        # It exits because the track ended: every fix acked, the trip ended, a summary.
        self.assertRegex(result.stderr, r"fixes 3 \(acked 3\)")
        summary = [line for line in result.stderr.splitlines() if "trips started" in line]
        self.assertEqual(len(summary), 1, result.stderr)
        self.assertIn("trips started 1, ended 1", summary[0])
        events = summary[0].split("events:", 1)[1].strip()
        self.assertIn("trip_created 1", events)

    def test_replay_with_the_http_url_serve_prints(self):
        self.assert_replayed(self.replay(self.hub.http_url))

    def test_replay_with_a_ws_url(self):
        self.assert_replayed(self.replay(f"ws://{self.hub.host}:{self.hub.port}"))

    def test_a_hub_url_of_another_scheme_exits_2(self):
        result = self.replay(f"ftp://{self.hub.host}:{self.hub.port}")
        self.assertEqual(result.returncode, 2)
        self.assertIn("--hub", result.stderr)


class TestSimulateStops(unittest.TestCase):
    """`simulate --stops N` (PROTOCOL 17): delivery rounds the hub takes as stops."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="trackhub-sim-stops-")
        self.addCleanup(self.tmp.cleanup)
        self.hub = HubProcess().start()
        self.addCleanup(self.hub.stop)

    def simulate(self, *flags):
        return subprocess.run(
            [hubproc.require_binary(), "simulate", "--hub", self.hub.http_url, *flags],
            env=hubproc.clean_env(), cwd=self.tmp.name, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=EXIT_DEADLINE_S)

    def test_every_trip_has_the_stops_with_ids_names_and_dwells_and_riders_proceed_at_them(self):
        # 20 s of wall clock at 60x is 20 min of riding: rounds of a few km with 3 stops of
        # at most 3 min each fit, so stops are reached and left.
        result = self.simulate("--riders", "2", "--speedup", "60", "--stops", "3", "--duration", "20s")
        self.assertEqual(result.returncode, 0, result.stderr)
        summary = [line for line in result.stderr.splitlines() if "trips started" in line]
        self.assertEqual(len(summary), 1, result.stderr)
        self.assertRegex(summary[0], r"waypoint_resumed [1-9]")
        status, trips, _ = self.hub.http("GET", "/v1/trips")
        self.assertEqual(status, 200)
        ids = [t["id"] if isinstance(t, dict) and "id" in t else t.get("trip") for t in (trips.get("trips") if isinstance(trips, dict) else trips)]
        self.assertTrue(ids)
        for trip in ids:
            status, body, _ = self.hub.http("GET", f"/v1/trips/{trip}")
            self.assertEqual(status, 200)
            stops = body["waypoints"]
            self.assertEqual([w["id"] for w in stops], ["stop-1", "stop-2", "stop-3"])
            for w in stops:
                self.assertTrue(w["name"])
                self.assertTrue(30 <= w["dwell_s"] <= 180, w)

    def test_a_stop_count_out_of_range_exits_2(self):
        for bad in ("0", "21", "x"):
            result = self.simulate("--stops", bad, "--duration", "1s")
            self.assertEqual(result.returncode, 2, (bad, result.stderr))
            self.assertIn("--stops", result.stderr)


if __name__ == "__main__":
    unittest.main()
