"""Shared helpers for TrackHub's end-to-end tests.

Starts the real release binary (`$TRACKHUB_BIN/trackhub serve`) as a user would, in a
temporary data directory, waits for its `listening on http://HOST:PORT` line with a
deadline, and stops it with SIGTERM. Also: a small HTTP client (http.client), WebSocket
helpers (websockets 12 asyncio client) and geometry helpers for building plausible
courier tracks.

No helper sleeps to synchronise: everything waits for a message, a line or a process
exit, with a deadline.
"""

import asyncio
import base64
import hashlib
import hmac
import http.client
import json
import math
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
import unittest

import websockets

# --------------------------------------------------------------------------------------
# Locating the binary
# --------------------------------------------------------------------------------------

SKIP_MESSAGE = (
    "TRACKHUB_BIN is not set: these end-to-end tests need the release binary. Run "
    "TRACKHUB_BIN=$(swift build -c release --show-bin-path) python3 -m unittest discover -s tests-py"
)

# How long to wait for the hub to print its listening line.
START_DEADLINE_S = 30.0
# Default deadline for one awaited message.
RECV_DEADLINE_S = 10.0


def trackhub_binary():
    """The path of the `trackhub` executable, or None when TRACKHUB_BIN is unset.

    TRACKHUB_BIN may be the build's bin directory (what `--show-bin-path` prints) or the
    executable itself.
    """
    value = os.environ.get("TRACKHUB_BIN", "").strip()
    if not value:
        return None
    path = os.path.join(value, "trackhub") if os.path.isdir(value) else value
    return path


def require_binary():
    """For `setUpModule`: skips the whole module with a clear message without the binary."""
    path = trackhub_binary()
    if path is None:
        raise unittest.SkipTest(SKIP_MESSAGE)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise unittest.SkipTest(f"TRACKHUB_BIN is set but {path} is not an executable trackhub binary")
    return path


def clean_env(extra=None):
    """The environment for a child hub: ours without any TRACKHUB_* variable (so a
    developer's settings cannot leak into a test), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACKHUB_")}
    env.update(extra or {})
    return env


def run_cli(args, env=None, timeout=30):
    """Runs `trackhub ARGS` to completion (for flag errors and --help)."""
    return subprocess.run(
        [require_binary(), *args],
        env=clean_env(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# --------------------------------------------------------------------------------------
# The hub process
# --------------------------------------------------------------------------------------


class HubProcess:
    """One `trackhub serve` process on 127.0.0.1 with a free port and a temp data dir.

        hub = HubProcess("--tick-hz", "20").start()
        ... hub.http_url, hub.ws_url ...
        hub.stop()
    """

    def __init__(self, *args, env=None, listen="127.0.0.1:0"):
        self.args = list(args)
        self.env = env or {}
        self.listen = listen
        self.proc = None
        self.port = None
        self.host = None
        self._tmp = None
        self._stdout_lines = queue.Queue()
        self._stderr = []
        self._threads = []

    # -- life cycle --

    def start(self, deadline_s=START_DEADLINE_S):
        binary = require_binary()
        self._tmp = tempfile.TemporaryDirectory(prefix="trackhub-e2e-")
        data = os.path.join(self._tmp.name, "data")  # serve creates it
        argv = [binary, "serve", "--listen", self.listen, "--data", data, *self.args]
        self.proc = subprocess.Popen(
            argv,
            env=clean_env(self.env),
            cwd=self._tmp.name,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self._threads = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, self._stdout_lines.put), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, self._stderr.append), daemon=True),
        ]
        for t in self._threads:
            t.start()
        end = time.monotonic() + deadline_s
        while True:
            remaining = end - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise AssertionError(f"hub did not print its listening line within {deadline_s}s; stderr:\n{self.stderr_text()}")
            try:
                line = self._stdout_lines.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                if self.proc.poll() is not None and self._stdout_lines.empty():
                    self.kill()
                    raise AssertionError(
                        f"hub exited with {self.proc.returncode} before listening; stderr:\n{self.stderr_text()}")
                continue
            if line is None:
                continue
            line = line.strip()
            if line.startswith("listening on http://"):
                hostport = line[len("listening on http://"):]
                self.host, _, port = hostport.rpartition(":")
                self.port = int(port)
                return self

    @staticmethod
    def _pump(stream, sink):
        try:
            for line in iter(stream.readline, ""):
                sink(line)
        except (ValueError, OSError):
            pass  # closed while reading

    def stderr_text(self):
        return "".join(x for x in self._stderr if x)

    def signal(self, signum=signal.SIGTERM):
        self.proc.send_signal(signum)

    def wait(self, timeout):
        return self.proc.wait(timeout=timeout)

    def stop(self, timeout=20):
        """SIGTERM, then wait for the exit; SIGKILL if it hangs. Returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._cleanup()
        return self.proc.returncode

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._cleanup()

    def _cleanup(self):
        for stream in (self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except Exception:
                pass
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    # -- addresses --

    @property
    def http_url(self):
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self):
        return f"ws://{self.host}:{self.port}/v1/ws"

    # -- HTTP --

    def http(self, method, path, body=None, raw=None, headers=None, timeout=10, source=None):
        """One HTTP request. `body` is JSON-encoded; `raw` is sent as is (bytes).
        `source`, when given, is the loopback address the client binds to (Linux routes
        all of 127/8 to lo, so 127.0.0.2 is another client address for the hub).
        Returns (status, parsed JSON or None, raw bytes)."""
        source_address = (source, 0) if source is not None else None
        conn = http.client.HTTPConnection(self.host.strip("[]"), self.port, timeout=timeout,
                                          source_address=source_address)
        try:
            hdrs = dict(headers or {})
            data = raw
            if body is not None:
                data = json.dumps(body).encode()
            if data is not None:
                hdrs.setdefault("Content-Type", "application/json")
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            payload = resp.read()
        finally:
            conn.close()
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = None
        return resp.status, parsed, payload

    def stop_and_read(self, deadline_s=30):
        """SIGTERM, wait for the exit (at most `deadline_s`) and for the stderr reader to
        reach end of file, so the log is whole; returns the hub's whole log (stderr)."""
        self.signal()
        self.wait(deadline_s)
        for thread in self._threads:
            thread.join(deadline_s)
        return self.stderr_text()

    def create_trip(self, **body):
        status, doc, raw = self.http("POST", "/v1/trips", body)
        if status != 201:
            raise AssertionError(f"POST /v1/trips answered {status}: {raw[:500]!r}")
        return doc


class AsyncTestCase(unittest.IsolatedAsyncioTestCase):
    """IsolatedAsyncioTestCase runs its loop in debug mode, which logs every callback
    slower than 0.1 s; on a busy machine that is noise, not a finding."""

    async def asyncSetUp(self):
        asyncio.get_running_loop().slow_callback_duration = 10.0


# --------------------------------------------------------------------------------------
# WebSocket helpers
# --------------------------------------------------------------------------------------


async def connect(hub, subprotocol=True, **kwargs):
    kwargs.setdefault("max_size", 16 << 20)
    kwargs.setdefault("ping_interval", None)
    if subprotocol:
        kwargs.setdefault("subprotocols", ["trackhub.v1"])
    return await websockets.connect(hub.ws_url, open_timeout=RECV_DEADLINE_S, **kwargs)


async def send(ws, **msg):
    await ws.send(json.dumps(msg))


class Client:
    """A WebSocket connection that keeps every message it receives (text and parsed), so a
    test can wait for one kind of message while others keep arriving."""

    def __init__(self, ws):
        self.ws = ws
        self.log = []  # (raw text, parsed) in arrival order
        self._cursor = 0

    @classmethod
    async def open(cls, hub, **kwargs):
        return cls(await connect(hub, **kwargs))

    async def send(self, **msg):
        await self.ws.send(json.dumps(msg))

    async def send_raw(self, data):
        await self.ws.send(data)

    async def _next(self, deadline):
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            raise asyncio.TimeoutError
        text = await asyncio.wait_for(self.ws.recv(), remaining)
        parsed = json.loads(text)
        self.log.append((text, parsed))
        return text, parsed

    async def wait_for(self, predicate, timeout=RECV_DEADLINE_S, what="a message"):
        """Returns the first message after the cursor (already received or new) for which
        predicate(msg) is true, and moves the cursor past it. Messages skipped over stay
        in `log` for later inspection."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            while self._cursor < len(self.log):
                text, msg = self.log[self._cursor]
                self._cursor += 1
                if predicate(msg):
                    return msg
            try:
                await self._next(deadline)
            except asyncio.TimeoutError:
                raise AssertionError(
                    f"timed out after {timeout}s waiting for {what}; last messages: "
                    f"{[t for t, _ in self.log[-8:]]}") from None

    async def wait_type(self, type_, timeout=RECV_DEADLINE_S, **fields):
        def match(m):
            return m.get("type") == type_ and all(m.get(k) == v for k, v in fields.items())
        return await self.wait_for(match, timeout, what=f"{type_} {fields}")

    async def next_message(self, timeout=RECV_DEADLINE_S):
        """The very next message after the cursor, whatever it is."""
        return await self.wait_for(lambda m: True, timeout, what="the next message")

    async def scan(self, mark, stop, type_=None, timeout=RECV_DEADLINE_S, what="a message"):
        """Messages (of `type_`, if given) from log position `mark` (None: the cursor) on, received already or
        still to come, up to and including the first for which stop(msg) is true. Moves the
        cursor past that one. For flows where the messages of interest may have arrived
        while the test waited for something else."""
        deadline = asyncio.get_running_loop().time() + timeout
        picked = []
        i = self._cursor if mark is None else mark
        while True:
            while i < len(self.log):
                msg = self.log[i][1]
                i += 1
                if type_ is None or msg.get("type") == type_:
                    picked.append(msg)
                    if stop(msg):
                        self._cursor = max(self._cursor, i)
                        return picked
            try:
                await self._next(deadline)
            except asyncio.TimeoutError:
                raise AssertionError(
                    f"timed out after {timeout}s waiting for {what}; last messages: "
                    f"{[t for t, _ in self.log[-8:]]}") from None

    def mark(self):
        """The end of the log: messages received from now on start at this position."""
        return len(self.log)

    def since(self, mark, type_=None):
        return [m for _, m in self.log[mark:] if type_ is None or m.get("type") == type_]

    def texts_since(self, mark, type_=None):
        return [t for t, m in self.log[mark:] if type_ is None or m.get("type") == type_]

    async def barrier(self, tag, timeout=RECV_DEADLINE_S):
        """ping with id `tag`, wait for its pong: every reply to earlier ops that the hub
        sends synchronously is then in `log`. Returns the messages between (exclusive)."""
        start = self.mark()
        await self.send(op="ping", id=tag)
        await self.wait_type("pong", timeout, re=tag)
        return [m for _, m in self.log[start:] if not (m.get("type") == "pong" and m.get("re") == tag)]

    async def close(self):
        await self.ws.close()


async def expect_close(ws, timeout=RECV_DEADLINE_S):
    """Reads until the server closes the connection; returns (close code, messages read)."""
    got = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise AssertionError(f"connection not closed within {timeout}s; got {got[-5:]}")
        try:
            text = await asyncio.wait_for(ws.recv(), remaining)
        except websockets.ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd is not None else None
            return code, got
        except asyncio.TimeoutError:
            continue
        got.append(json.loads(text) if isinstance(text, str) else text)


# --------------------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------------------


def b64url(data):
    """base64url without padding, as JWTs use it."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256_signature(secret, signing_input):
    """The HS256 signature (base64url) of `signing_input` ("head.payload") under `secret`."""
    return b64url(hmac.new(secret.encode(), signing_input.encode(), hashlib.sha256).digest())


def mint_token(claims, secret):
    """An HS256 JWT with `claims`, as any client library makes it (for tokens `trackhub
    token` will not make: expired ones, share links with a chosen jti)."""
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps(claims).encode())
    return f"{head}.{body}.{hs256_signature(secret, f'{head}.{body}')}"


# --------------------------------------------------------------------------------------
# Geometry and fixes
# --------------------------------------------------------------------------------------

EARTH_R = 6371008.8


def distance_m(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_R * math.asin(min(1.0, math.sqrt(a)))


def offset(lat, lon, north_m=0.0, east_m=0.0):
    """The point `north_m` north and `east_m` east of (lat, lon) (small offsets)."""
    dlat = north_m / 111_194.9
    dlon = east_m / (111_194.9 * math.cos(math.radians(lat)))
    return lat + dlat, lon + dlon


def now_ms():
    return int(time.time() * 1000)


class Courier:
    """Makes fixes for one trip: `ts` near the current time, rising `seq`, and a `ts` gap
    that keeps the implied speed at `speed_mps` (well below max_speed_mps)."""

    def __init__(self, trip, speed_mps=20.0, start_ts=None):
        self.trip = trip
        self.speed = speed_mps
        # Start a little in the past so a long track never runs ahead of the hub's clock.
        self.ts = start_ts if start_ts is not None else now_ms() - 120_000
        self.seq = 0
        self.last = None

    def fix(self, lat, lon, **extra):
        if self.last is not None:
            d = distance_m(self.last[0], self.last[1], lat, lon)
            self.ts += max(1000, int(math.ceil(d / self.speed * 1000)))
        self.seq += 1
        self.last = (lat, lon)
        msg = {"op": "fix", "trip": self.trip, "lat": lat, "lon": lon, "ts": self.ts, "seq": self.seq}
        msg.update(extra)
        return msg


def encode_polyline(points_latlon, precision=5):
    """Google encoded polyline of [(lat, lon), ...]."""
    factor = 10 ** precision
    out = []
    prev_lat = prev_lon = 0
    for lat, lon in points_latlon:
        ilat, ilon = round(lat * factor), round(lon * factor)
        for delta in (ilat - prev_lat, ilon - prev_lon):
            v = ~(delta << 1) if delta < 0 else (delta << 1)
            while v >= 0x20:
                out.append(chr((0x20 | (v & 0x1F)) + 63))
                v >>= 5
            out.append(chr(v + 63))
        prev_lat, prev_lon = ilat, ilon
    return "".join(out)
