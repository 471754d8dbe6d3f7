"""Raw sockets for tests that behave as no polite client would: a WebSocket that writes
and never reads (with a tiny receive buffer, so the hub's queue fills instead of the
kernel's), and HTTP requests written byte by byte (bad framing, slow bodies, bodies
never sent).

Everything waits with a deadline; nothing sleeps to synchronise.
"""

import base64
import os
import socket
import struct
import time

# A receive buffer this small (set before connect) keeps the TCP window tiny, so data the
# hub sends to a client that does not read stays in the hub's queue, where its limits apply.
TINY_RCVBUF = 4096


def _connect(host, port, rcvbuf=None, timeout=10.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(timeout)
    s.connect((host, port))
    return s


def read_http_response(sock, deadline_s=10.0):
    """Reads one HTTP response (status line, headers, Content-Length body) from `sock`.
    Returns (status, headers dict with lower-case names, body bytes)."""
    end = time.monotonic() + deadline_s
    data = b""
    while b"\r\n\r\n" not in data:
        sock.settimeout(max(0.05, end - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a whole response head: {data!r}")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        sock.settimeout(max(0.05, end - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, headers, rest[:length]


def is_closed_by_peer(sock, deadline_s=10.0):
    """True once the peer has closed the connection (EOF or reset) within the deadline;
    bytes that still arrive are read and dropped."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        sock.settimeout(max(0.05, end - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True
        if not chunk:
            return True
    return False


class RawHTTP:
    """One TCP connection to write an HTTP request exactly as the test says."""

    def __init__(self, hub, timeout=10.0):
        self.sock = _connect(hub.host, hub.port, timeout=timeout)

    def send(self, data):
        self.sock.sendall(data)

    def request_head(self, method, path, headers, host=None):
        lines = [f"{method} {path} HTTP/1.1", f"Host: {host or '127.0.0.1'}"]
        lines += [f"{name}: {value}" for name, value in headers]
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode())

    def response(self, deadline_s=10.0):
        return read_http_response(self.sock, deadline_s)

    def closed_by_peer(self, deadline_s=10.0):
        return is_closed_by_peer(self.sock, deadline_s)

    def close(self):
        self.sock.close()


class RawWebSocket:
    """A WebSocket client on a plain socket: it sends masked text frames and reads only
    when told to. With `rcvbuf=TINY_RCVBUF` it is the client that asks and never reads."""

    def __init__(self, hub, path="/v1/ws", rcvbuf=TINY_RCVBUF, headers=()):
        self.sock = _connect(hub.host, hub.port, rcvbuf=rcvbuf)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: 127.0.0.1:{hub.port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Protocol: trackhub.v1",
            *[f"{name}: {value}" for name, value in headers],
        ]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError(f"closed during the handshake: {head!r}")
            head += chunk
        self.status = int(head.split(b" ")[1])
        self.buffer = b""

    def send_text(self, text):
        payload = text.encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def read_until_close(self, deadline_s=30.0):
        """Reads every frame until the close frame; returns (close code or None, texts).
        None when the connection ended without a close frame."""
        end = time.monotonic() + deadline_s
        texts = []
        while time.monotonic() < end:
            frame = self._next_frame(end)
            if frame is None:
                return None, texts
            opcode, payload = frame
            if opcode == 0x8:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                return code, texts
            if opcode == 0x1:
                texts.append(payload.decode())
        raise TimeoutError("no close frame before the deadline")

    def read_until(self, predicate, deadline_s=30.0):
        """Reads text frames until one satisfies `predicate`; returns all texts read."""
        end = time.monotonic() + deadline_s
        texts = []
        while True:
            frame = self._next_frame(end)
            if frame is None:
                raise ConnectionError("closed before the awaited message")
            opcode, payload = frame
            if opcode == 0x1:
                texts.append(payload.decode())
                if predicate(texts[-1]):
                    return texts

    def _fill(self, count, end):
        while len(self.buffer) < count:
            self.sock.settimeout(max(0.05, end - time.monotonic()))
            try:
                chunk = self.sock.recv(1 << 20)
            except (ConnectionResetError, BrokenPipeError):
                return False
            except socket.timeout:
                if time.monotonic() >= end:
                    raise TimeoutError("frame did not arrive before the deadline")
                continue
            if not chunk:
                return False
            self.buffer += chunk
        return True

    def _next_frame(self, end):
        if not self._fill(2, end):
            return None
        b0, b1 = self.buffer[0], self.buffer[1]
        n = b1 & 0x7F
        offset = 2
        if n == 126:
            if not self._fill(4, end):
                return None
            n = struct.unpack("!H", self.buffer[2:4])[0]
            offset = 4
        elif n == 127:
            if not self._fill(10, end):
                return None
            n = struct.unpack("!Q", self.buffer[2:10])[0]
            offset = 10
        if not self._fill(offset + n, end):
            return None
        payload = self.buffer[offset:offset + n]
        self.buffer = self.buffer[offset + n:]
        return b0 & 0x0F, payload

    def close(self):
        self.sock.close()


def rss_kib(pid):
    """The process's resident set (VmRSS) in KiB, from /proc/PID/status."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS line")


def metric(hub, name):
    """The value of one unlabelled metric from /metrics (0 when absent)."""
    status, _, raw = hub.http("GET", "/metrics")
    assert status == 200, status
    for line in raw.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def wait_until(predicate, deadline_s=20.0, what="the condition", interval_s=0.05):
    """Polls `predicate` every `interval_s` until it is true, at most `deadline_s`; fails
    with `what`. The interval matters where each look is itself a request counted by a
    rate limit."""
    end = time.monotonic() + deadline_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval_s)  # the pace of the looks, not a synchronisation
