"""A webhook receiver for the tests (and the bench): Python's http.server on loopback, an
ephemeral port, recording every request; what it answers is up to the test.

`answer(request)` returns the status to send, or None to hang (hold the request unanswered
until `release()`); it runs in the server's request thread.
"""

import base64
import hashlib
import hmac
import http.server
import json
import socket
import threading
import time


class Receiver:
    def __init__(self, answer=None):
        self.answer = answer or (lambda req: 200)
        self.requests = []  # every request, in arrival order: dict(id, ts, sig, body, doc, status)
        self.cond = threading.Condition()
        self.hanging = 0
        self._release = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def setup(self):
                super().setup()
                # The status line and the body go out in two writes: without this, Nagle's
                # algorithm and the client's delayed ACK hold each answer ~40 ms.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self):
                length = int(self.headers.get("content-length", "0"))
                body = self.rfile.read(length)
                req = {
                    "id": self.headers.get("webhook-id"),
                    "ts": self.headers.get("webhook-timestamp"),
                    "sig": self.headers.get("webhook-signature"),
                    "type": self.headers.get("content-type"),
                    "path": self.path,
                    "body": body,
                }
                try:
                    req["doc"] = json.loads(body)
                except ValueError:
                    req["doc"] = None
                status = receiver.answer(req)
                req["status"] = status
                with receiver.cond:
                    receiver.requests.append(req)
                    if status is None:
                        receiver.hanging += 1
                    receiver.cond.notify_all()
                if status is None:
                    receiver._release.wait()
                    return
                self.send_response(status)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # a hub killed mid-request resets its connections: expected here

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        # The `url` label of the hub's webhook metrics when this is its first --webhook
        # (PROTOCOL 12: scheme, host, port and place; the path is left out).
        self.label = f"http://127.0.0.1:{self.server.server_address[1]}#1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def release(self):
        self._release.set()

    def close(self):
        self.release()
        self.server.shutdown()
        self.server.server_close()

    def accepted(self):
        with self.cond:
            return [r for r in self.requests if r["status"] is not None and 200 <= r["status"] < 300]

    def wait_until(self, predicate, timeout=30.0, what="the expected requests"):
        """Waits (with a deadline) until predicate(self) is true; checked on every request."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate(self):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    ids = [(r["id"], r["status"]) for r in self.requests[-10:]]
                    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last requests: {ids}")
                self.cond.wait(min(remaining, 0.5))


def expected_signature(key, req):
    """Standard Webhooks: v1,base64(HMAC-SHA256(key, id.timestamp.body))."""
    signed = f"{req['id']}.{req['ts']}.".encode() + req["body"]
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def key_of(secret):
    if secret.startswith("whsec_"):
        return base64.b64decode(secret[len("whsec_"):])
    return secret.encode()
