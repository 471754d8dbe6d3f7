"""The README's run command, run as a newcomer runs it (issue 10).

`scripts/run.sh` installs what is missing, builds, starts the hub with its embedded defaults
and simulated couriers, and prints the URL. This test runs it on a free port and checks that
riders are moving in the fleet view within 30 seconds, then that Ctrl-C stops both the hub
and the simulator. The release build already exists when the test command gets here, so the
script's build step is quick.

Its terminal (issue 36) carries the URL, the hub log's path and the simulator's status line
(riders, fixes/s, viewers; here, not a terminal, one line a second), and none of the hub's
own log lines: those are in the file it names, one per HTTP request.
"""

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from websockets.sync.client import connect as ws_connect

import hubproc

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def setUpModule():
    hubproc.require_binary()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fleet(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/v1/fleet/clusters?zoom=16")
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def riders(answer):
    """Single riders of a fleet answer, by trip: their positions."""
    return {item["trip"]: (item["lat"], item["lon"]) for item in answer.get("items", []) if item["count"] == 1}


class RunCommandTest(unittest.TestCase):
    def test_run_command_shows_moving_riders_within_30_seconds_and_ctrl_c_stops_everything(self):
        port = free_port()
        data = tempfile.mkdtemp(prefix="trackhub-run-")
        env = dict(os.environ, TRACKHUB_LISTEN=f"127.0.0.1:{port}", TRACKHUB_DATA=data,
                   TRACKHUB_DEMO_RIDERS="12", TRACKHUB_DEMO_SPEEDUP="4")
        proc = subprocess.Popen(["bash", os.path.join(REPO, "scripts", "run.sh")], cwd=REPO, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        lines = []
        url_seen = threading.Event()
        line_added = threading.Condition()

        def read():
            for line in proc.stdout:
                with line_added:
                    lines.append(line)
                    line_added.notify_all()
                if "TrackHub is running:" in line:
                    url_seen.set()

        def wait_for_line(pattern, after, timeout):
            """The first line from index `after` on matching `pattern`, waited for with a deadline."""
            deadline = time.monotonic() + timeout
            with line_added:
                while True:
                    for line in lines[after:]:
                        if re.search(pattern, line):
                            return line
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return None
                    line_added.wait(left)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            self.assertTrue(url_seen.wait(180), "no URL printed:\n" + "".join(lines[-30:]))
            self.assertTrue(any(f"http://127.0.0.1:{port}/" in line for line in lines), "".join(lines[-10:]))
            named = wait_for_line(r"^  hub log: ", 0, 10)
            self.assertIsNotNone(named, "the hub log's path is not on screen:\n" + "".join(lines[-10:]))
            log = named.split("hub log:", 1)[1].strip()
            self.assertEqual(os.path.realpath(log), os.path.realpath(os.path.join(data, "hub.log")))

            # Within 30 s of the URL: riders in the fleet, and at least one has moved.
            deadline = time.monotonic() + 30
            first = {}
            moved = False
            while time.monotonic() < deadline and not moved:
                try:
                    now = riders(fleet(port))
                except OSError:
                    now = {}
                for trip, position in now.items():
                    if trip in first and first[trip] != position:
                        moved = True
                    first.setdefault(trip, position)
                if not moved:
                    time.sleep(0.5)  # polling interval, not synchronisation: the deadline decides
            self.assertTrue(first, "no rider appeared in the fleet view within 30 s")
            self.assertTrue(moved, "no rider moved within 30 s")
            # The status line: riders, their fixes per second, and viewers; a browser's
            # WebSocket (this one) is one viewer.
            status = r"^riders \d+ · fixes \d+ \(acked \d+\) · \d+\.\d fixes/s · .* · viewers (\d+)$"
            self.assertIsNotNone(wait_for_line(status, 0, 10), "no status line:\n" + "".join(lines[-10:]))
            with ws_connect(f"ws://127.0.0.1:{port}/v1/ws", open_timeout=10):
                seen = len(lines)
                one_viewer = wait_for_line(status.replace("(\\d+)", "1"), seen, 10)
                self.assertIsNotNone(one_viewer, "the status line did not count the viewer:\n" + "".join(lines[-5:]))
            # The demo hub finds routes (PROTOCOL 16): the sample Helsinki roads' database.
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            try:
                conn.request("GET", "/v1/route?from=60.1660,24.9400&to=60.1770,24.9510")
                answer = conn.getresponse()
                self.assertEqual(answer.status, 200, "the run command's hub has a router")
                self.assertGreater(len(json.loads(answer.read())["route"]), 2)
            finally:
                conn.close()
        finally:
            # Ctrl-C: the script stops the simulator and the hub.
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                self.fail("run.sh did not stop within 30 s of Ctrl-C")
            finally:
                reader.join(timeout=5)
                proc.stdout.close()
        with self.assertRaises(OSError):
            fleet(port)
        # Nothing scrolled: no line of the hub's log on the terminal, and they are in the file.
        screen = "".join(lines)
        self.assertNotIn("http request", screen)
        self.assertIsNone(re.search(r"^\d{4}-\d\d-\d\dT\S+Z (debug|info|warn|error) ", screen, re.M), screen[-2000:])
        with open(log) as f:
            logged = f.read()
        self.assertIn("http request", logged)
        self.assertIn("OPEN MODE", logged)


if __name__ == "__main__":
    unittest.main()
