"""The hub under test for the browser tests: the fake hub (default) or the real
`trackhub` binary when TRACKHUB_BIN is set (the directory holding `trackhub`).

Both offer the same small interface:
  base_url, ws_url       where the pages and the WebSocket are
  create_trip(...)       a new trip (fake: from Python; real: POST /v1/trips)
  stop() / start()       a restart on the same port, state kept
  close()
and `Courier`, a WebSocket client sending `fix` and `proceed` ops like a courier app.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

SUBPROTOCOL = "trackhub.v1"
WEB_ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "web-client"))


class FakeHubUnderTest:
    is_fake = True

    def __init__(self):
        from fake_hub import FakeHub
        self.hub = FakeHub().start()

    @property
    def base_url(self):
        return self.hub.base_url

    @property
    def ws_url(self):
        return self.hub.ws_url

    @property
    def seen_tokens(self):
        return list(self.hub.seen_tokens)

    def create_trip(self, trip_id, route, waypoints=None, rider=None, config=None, destination=None):
        return self.hub.create_trip(trip_id, route=route, waypoints=waypoints, destination=destination, rider=rider, config=config)

    def stop(self):
        self.hub.stop()

    def start(self):
        self.hub.start()

    def close(self):
        self.hub.close()


class RealHubUnderTest:
    is_fake = False

    def __init__(self, bin_dir):
        self.exe = os.path.join(bin_dir, "trackhub")
        if not os.path.exists(self.exe):
            raise FileNotFoundError(self.exe)
        self.data = tempfile.mkdtemp(prefix="trackhub-web-test-")
        self.listen = "127.0.0.1:0"
        self.proc = None
        self.base_url = None
        self.log_lines = []
        self.start()

    @property
    def ws_url(self):
        return self.base_url.replace("http", "ws", 1) + "/v1/ws"

    seen_tokens = None

    def start(self):
        self.proc = subprocess.Popen(
            [self.exe, "serve", "--listen", self.listen, "--data", self.data, "--web-root", WEB_ROOT],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        deadline = time.time() + 30
        found = threading.Event()

        def reader():
            for line in self.proc.stdout:
                self.log_lines.append(line.rstrip())
                if not found.is_set() and "listening on http" in line:
                    self.base_url = line.strip().split("listening on ", 1)[1].strip().rstrip("/")
                    found.set()
        threading.Thread(target=reader, daemon=True).start()
        while not found.wait(0.1):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("trackhub serve did not start:\n" + "\n".join(self.log_lines[-30:]))
        # restart on the same port
        self.listen = self.base_url.split("://", 1)[1]

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def close(self):
        self.stop()
        shutil.rmtree(self.data, ignore_errors=True)

    def create_trip(self, trip_id, route, waypoints=None, rider=None, config=None, destination=None):
        body = {"id": trip_id, "route": route}
        if waypoints:
            body["waypoints"] = waypoints
        if rider:
            body["rider"] = rider
        if config:
            body["config"] = config
        if destination:
            body["destination"] = destination
        req = urllib.request.Request(self.base_url + "/v1/trips", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())


def hub_under_test():
    """The hub to test against: the real one with TRACKHUB_BIN, else the fake hub."""
    bin_dir = os.environ.get("TRACKHUB_BIN")
    if bin_dir:
        return RealHubUnderTest(bin_dir)
    return FakeHubUnderTest()


class Courier:
    """A courier app: sends fixes over the WebSocket and waits for their acks."""

    def __init__(self, ws_url, token=None):
        from websockets.sync.client import connect
        url = ws_url + (f"?token={token}" if token else "")
        self.ws = connect(url, subprotocols=[SUBPROTOCOL], open_timeout=10)
        self.next_id = 1

    def request(self, msg, timeout=10):
        rid = self.next_id
        self.next_id += 1
        self.ws.send(json.dumps(dict(msg, id=rid)))
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError(f"no reply to {msg}")
            reply = json.loads(self.ws.recv(timeout=left))
            if reply.get("re") == rid:
                return reply

    def fix(self, trip, lon, lat, ts, seq=None, duration_ms=None, speed_mps=None):
        msg = {"op": "fix", "trip": trip, "lat": lat, "lon": lon, "ts": int(ts)}
        if seq is not None:
            msg["seq"] = seq
        if duration_ms is not None:
            msg["duration_ms"] = duration_ms
        if speed_mps is not None:
            msg["speed_mps"] = speed_mps
        return self.request(msg)

    def proceed(self, trip):
        return self.request({"op": "proceed", "trip": trip})

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
