"""The hub under test for the browser tests: the real `trackhub` release binary.

TRACKHUB_BIN names it (the build's bin directory or the executable, as for every
end-to-end test; scripts/test.sh sets it). `HubUnderTest` runs `trackhub serve` on
127.0.0.1 with an ephemeral port, a temporary `--data` and this checkout's
`web-client/` as `--web-root`, optionally secured with `--jwt-secret` and given more
`serve` flags (`serve_args`; `serve_supports(flag)` says whether the binary has one), and offers:
  base_url, ws_url       where the pages and the WebSocket are
  create_trip(...)       POST /v1/trips (PROTOCOL 5), with an admin token when secured
  token(scopes, trips)   a JWT the hub accepts, from `trackhub token` (PROTOCOL 9)
  courier_token          a courier token for every trip when secured, else None
  stop() / start()       a restart on the same port, the data directory kept
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
PARENT = os.path.dirname(HERE)
for path in (HERE, PARENT):
    if path not in sys.path:
        sys.path.insert(0, path)

from hubproc import SKIP_MESSAGE, clean_env, trackhub_binary  # noqa: E402,F401

SUBPROTOCOL = "trackhub.v1"
WEB_ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "web-client"))


_SERVE_HELP = None


def serve_supports(flag):
    """Whether `trackhub serve --help` lists `flag` (a test of a newer flag skips without it)."""
    global _SERVE_HELP
    if _SERVE_HELP is None:
        exe = trackhub_binary()
        if not exe or not os.path.exists(exe):
            return False
        out = subprocess.run([exe, "serve", "--help"], env=clean_env(), stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=30)
        _SERVE_HELP = out.stdout + out.stderr
    return flag in _SERVE_HELP


class HubUnderTest:
    def __init__(self, jwt_secret=None, serve_args=()):
        self.exe = trackhub_binary()
        if not self.exe or not os.path.exists(self.exe):
            raise FileNotFoundError(self.exe or SKIP_MESSAGE)
        self.jwt_secret = jwt_secret
        self.serve_args = list(serve_args)
        self.data = tempfile.mkdtemp(prefix="trackhub-web-test-")
        self.listen = "127.0.0.1:0"
        self.proc = None
        self.base_url = None
        self.log_lines = []
        self.admin_token = self.token(["admin"]) if jwt_secret else None
        self.courier_token = self.token(["courier"], ["*"]) if jwt_secret else None
        self.start()

    @property
    def ws_url(self):
        return self.base_url.replace("http", "ws", 1) + "/v1/ws"

    def token(self, scopes, trips=()):
        """A token signed with the hub's secret, as `trackhub token` prints it."""
        args = [self.exe, "token", "--secret", self.jwt_secret, "--scope", ",".join(scopes), "--ttl", "1h"]
        for trip in trips:
            args += ["--trip", trip]
        out = subprocess.run(args, env=clean_env(), stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=30, check=True)
        return out.stdout.strip()

    def start(self):
        args = [self.exe, "serve", "--listen", self.listen, "--data", self.data, "--web-root", WEB_ROOT]
        if self.jwt_secret:
            args += ["--jwt-secret", self.jwt_secret]
        args += self.serve_args
        self.proc = subprocess.Popen(args, env=clean_env(), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        deadline = time.time() + 30
        found = threading.Event()

        def reader():
            for line in self.proc.stdout:
                self.log_lines.append(line.rstrip())
                if not found.is_set() and "listening on http" in line:
                    self.base_url = line.strip().split("listening on ", 1)[1].strip().rstrip("/")
                    found.set()
        self.reader = threading.Thread(target=reader, daemon=True)
        self.reader.start()
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
        if self.proc:
            self.reader.join(5)  # it ends at the pipe's end of file
            self.proc.stdout.close()

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
        headers = {"Content-Type": "application/json"}
        if self.admin_token:
            headers["Authorization"] = f"Bearer {self.admin_token}"
        req = urllib.request.Request(self.base_url + "/v1/trips", data=json.dumps(body).encode(), method="POST",
                                     headers=headers)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())


def hub_under_test(jwt_secret=None, serve_args=()):
    """A fresh release hub (secured with `jwt_secret` if given, with `serve_args`), started."""
    return HubUnderTest(jwt_secret, serve_args)


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

    def fix(self, trip, lon, lat, ts, seq=None, duration_ms=None, speed_mps=None, battery=None):
        msg = {"op": "fix", "trip": trip, "lat": lat, "lon": lon, "ts": int(ts)}
        if battery is not None:
            msg["battery"] = battery
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
