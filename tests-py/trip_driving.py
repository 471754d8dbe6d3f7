"""What the end-to-end tests that drive trips share (test_stops, test_courier_signal,
test_cadence, test_stop_links): WebSocket clients closed after each test, a condition polled
with a deadline, a courier's fix sent and its ack awaited, and three hubs of a cluster on one
`redis-server` (as tests-py/test_cluster.py starts them).

Nothing here sleeps to synchronise: every wait is a message or a condition with a deadline.
"""

import asyncio
import os
import shutil
import tempfile
import time

import websockets

import hubproc
from hubproc import Client, HubProcess

# How long one awaited answer or condition may take on a loaded machine (a deadline, never a
# threshold an assertion compares against).
DEADLINE_S = 15.0
# The interval between two polls of a condition.
POLL_S = 0.05


def redis_server_path():
    """Where `redis-server` is (on PATH, else /usr/bin), or None: the cluster tests need it."""
    path = shutil.which("redis-server")
    if path is None and os.access("/usr/bin/redis-server", os.X_OK):
        path = "/usr/bin/redis-server"
    return path


class TrackedClients:
    """A mixin for `hubproc.AsyncTestCase`: `client()` opens a WebSocket client that keeps every
    message (nothing held back by the test's pace: `max_queue=None`) and is closed after the
    test; `eventually()` polls a condition with a deadline (`wait_deadline_s` by default)."""

    hub = None
    wait_deadline_s = DEADLINE_S

    async def asyncSetUp(self):
        await super().asyncSetUp()
        self.clients = []

    async def asyncTearDown(self):
        await self.close_clients()
        await super().asyncTearDown()

    async def close_clients(self):
        for c in self.clients:
            try:
                await asyncio.wait_for(c.close(), 5)
            except Exception:
                pass
        self.clients = []

    async def client(self, hub=None, url=None):
        """A client of `hub` (default `self.hub`), or of the WebSocket `url` as given (a token in it)."""
        if url is not None:
            c = Client(await websockets.connect(url, subprotocols=["trackhub.v1"], max_size=16 << 20,
                                                ping_interval=None, max_queue=None))
        else:
            c = await Client.open(hub or self.hub, max_queue=None)
        self.clients.append(c)
        return c

    async def eventually(self, probe, what, deadline_s=None):
        """Polls `probe()` (run in a thread: it may do blocking HTTP) until it returns (True,
        detail); fails with the last detail after the deadline. Returns the detail."""
        deadline_s = self.wait_deadline_s if deadline_s is None else deadline_s
        end = time.monotonic() + deadline_s
        while True:
            ok, detail = await asyncio.to_thread(probe)
            if ok:
                return detail
            if time.monotonic() > end:
                self.fail(f"{what}: not so within {deadline_s}s; last seen: {detail}")
            await asyncio.sleep(POLL_S)


async def send_fix(conn, msg, tag, deadline_s=DEADLINE_S):
    """Sends the `fix` op `msg` with id `tag` on `conn` (a hubproc.Client) and returns its
    reply, which must be an ack."""
    await conn.send(**msg, id=tag)
    reply = await conn.wait_for(lambda m: m.get("re") == tag, deadline_s, what=f"the reply to {tag}")
    assert reply.get("type") == "ack", reply
    return reply


def start_cluster(case, *hub_args, prefix="trackhub-cluster-", names="ABC", start_hub=None):
    """Starts a `redis-server` and one `trackhub serve --cluster ... --tick-hz 10 HUB_ARGS` per
    name, each stopped after the test `case` (hubs before Redis). Returns (redis, {name: hub}).
    `start_hub(redis_url)`, when given, starts each hub instead (another kind of hub process,
    e.g. browser.hubs.HubUnderTest for a secured one) and arranges its own cleanup."""
    import test_cluster  # its Redis process (imported here: test_cluster imports this module)

    tmp = tempfile.TemporaryDirectory(prefix=prefix)
    case.addCleanup(tmp.cleanup)
    redis = test_cluster.RedisServer(os.path.join(tmp.name, "redis"))
    case.addCleanup(redis.kill)
    redis.start()
    hubs = {}
    for name in names:
        if start_hub is not None:
            hubs[name] = start_hub(redis.url)
            continue
        hub = HubProcess("--cluster", redis.url, "--tick-hz", "10", *hub_args)
        case.addCleanup(hub.stop, 10)
        hubs[name] = hub.start()
    return redis, hubs


def wait_healthy(hubs, deadline_s=30.0):
    """Blocks until every hub's /healthz answers 200 (a cluster hub has caught up), with a deadline."""
    import test_cluster

    end = time.monotonic() + deadline_s
    while not all(test_cluster.health(h)[0] == 200 for h in hubs.values()):
        if time.monotonic() > end:
            raise AssertionError("the cluster did not become healthy: " + repr({n: test_cluster.health(h) for n, h in hubs.items()}))
        time.sleep(POLL_S)  # polling a condition, with a deadline


__all__ = ["DEADLINE_S", "POLL_S", "TrackedClients", "hubproc", "redis_server_path", "send_fix", "start_cluster", "wait_healthy"]
