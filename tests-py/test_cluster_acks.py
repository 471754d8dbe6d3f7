"""What a cluster's ack survives (PROTOCOL 15 "What an ack survives") against the release
binary and real `redis-server` processes on loopback: the hub reads its Redis's settings and
says what an ack survives, in one log line and in `trackhub_cluster_ack_survives{event}`;
`--cluster-replicas 1` acks only once a replica confirmed the entry (WAIT), and refuses
(503, never an ack) without one; no hub applies an entry before the replica confirmed it (an entry whose WAIT fell short is
held back until the partition's owner confirms it itself); `--sync full` refuses every command while an ack would not
survive a power cut (`appendfsync everysec`), says why, and takes commands once Redis is
set to `appendfsync always`.

Run:  cd tests-py && TRACKHUB_BIN=/path/to/.build/release python3 -m unittest test_cluster_acks -v

Every wait is a condition polled with a deadline; nothing sleeps to synchronise.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import hubproc  # noqa: E402
from hubproc import HubProcess, now_ms  # noqa: E402
from test_cluster import ROUTE, RedisServer, Resp, free_port, redis_server_path, trail_ts  # noqa: E402

DEADLINE_S = 20.0  # the hub reads the settings every 5 s (PROTOCOL 15: at least every 10 s)
POLL_S = 0.05


def setUpModule():
    if redis_server_path() is None:
        raise unittest.SkipTest("redis-server is not installed")


class Replica:
    """A second `redis-server`, a replica of `master`."""

    def __init__(self, directory, master_port):
        os.makedirs(directory, exist_ok=True)
        self.port = free_port()
        self.proc = subprocess.Popen(
            [redis_server_path(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--dir", directory,
             "--replicaof", "127.0.0.1", str(master_port), "--repl-diskless-load", "disabled"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def metric(hub, name):
    """The value of an unlabelled metric of `hub`."""
    text = hub.http("GET", "/metrics", timeout=5)[2].decode(errors="replace")
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


def metric_values(hub):
    """{event: value} of trackhub_cluster_ack_survives."""
    text = hub.http("GET", "/metrics", timeout=5)[2].decode(errors="replace")
    values = {}
    for line in text.splitlines():
        if line.startswith('trackhub_cluster_ack_survives{event="'):
            name = line.split('"')[1]
            values[name] = float(line.rsplit(" ", 1)[1])
    return values


@unittest.skipIf(hubproc.trackhub_binary() is None, hubproc.SKIP_MESSAGE)
class AckSurvivalTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="trackhub-acks-")
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.redis = RedisServer(os.path.join(tmp.name, "redis"))
        self.addCleanup(self.redis.kill)
        self.redis.start()  # appendonly yes, appendfsync everysec (Redis's default)

    def start_hub(self, *extra):
        hub = HubProcess("--cluster", self.redis.url, "--cluster-partitions", "4", *extra)
        self.addCleanup(hub.stop, 10)
        hub.start()
        return hub

    def eventually(self, probe, what):
        end = time.monotonic() + DEADLINE_S
        last = None
        while True:
            try:
                ok, last = probe()
            except OSError as e:
                ok, last = False, repr(e)
            if ok:
                return last
            if time.monotonic() > end:
                self.fail(f"{what}: not so within {DEADLINE_S}s; last: {last}")
            time.sleep(POLL_S)

    def create(self, hub, trip):
        return hub.http("POST", "/v1/trips", {"id": trip, "route": ROUTE})

    def fix(self, hub, trip, seq):
        lat, lon = ROUTE[0][1], ROUTE[0][0]
        return hub.http("POST", f"/v1/trips/{trip}/fixes", {"fixes": [{"lat": lat, "lon": lon, "ts": now_ms() - 1000 + seq, "seq": seq}]})

    def test_the_log_line_and_metric_say_what_everysec_survives(self):
        hub = self.start_hub()
        values = self.eventually(lambda: (len(metric_values(hub)) == 4, metric_values(hub)), "the metric")
        self.assertEqual(values, {"hub_crash": 1, "redis_crash": 0, "power_loss": 0, "redis_machine_loss": 0})
        self.eventually(lambda: ("an ack survives hub_crash; not redis_crash" in hub.stderr_text(), hub.stderr_text()[-500:]), "the log line")
        self.assertIn("appendfsync everysec", hub.stderr_text())
        status, _, raw = self.create(hub, "plain")
        self.assertEqual(status, 201, raw)

    def test_replicas_1_without_a_replica_refuses_to_ack(self):
        hub = self.start_hub("--cluster-replicas", "1")
        status, body, raw = self.create(hub, "no-replica")
        self.assertEqual(status, 503, raw)
        self.assertIn("replicas", body["error"]["message"])
        # Never acked: no ack in a fix's answer either.
        status, body, raw = self.fix(hub, "no-replica", 1)
        self.assertIn(status, (404, 503), raw)

    def test_replicas_1_with_a_replica_acks_and_survives_a_machine(self):
        replica = Replica(os.path.join(self.tmp, "replica"), self.redis.port)
        self.addCleanup(replica.kill)

        def connected():
            with Resp(self.redis.port) as r:
                info = r.call("INFO", "replication")
            info = info.decode() if isinstance(info, bytes) else info
            return "connected_slaves:1" in info and "state=online" in info, info
        self.eventually(connected, "the replica connected and in sync")
        hub = self.start_hub("--cluster-replicas", "1")
        values = self.eventually(lambda: (metric_values(hub).get("redis_machine_loss") == 1, metric_values(hub)), "the metric")
        self.assertEqual(values, {"hub_crash": 1, "redis_crash": 0, "power_loss": 1, "redis_machine_loss": 1})
        status, _, raw = self.create(hub, "replicated")
        self.assertEqual(status, 201, raw)
        status, body, raw = self.fix(hub, "replicated", 1)
        self.assertEqual(status, 200, raw)
        self.assertEqual(body["acks"], [{"trip": "replicated", "seq": 1, "applied": True}])
        # The replica has the entries the acks promised.
        with Resp(replica.port) as r:
            keys = r.call("KEYS", "trackhub:{p*}:log")
        self.assertTrue(keys, "the replica holds the log")

    def test_nothing_is_shown_before_the_replicas_confirm_it(self):
        """Readers do not run ahead of WAIT: an entry in the log that the replica has not
        confirmed is not applied (not in the trail), also after the owner tried to confirm it
        itself; once the replica is back the owner's rescue confirms it and it takes effect."""
        replica = Replica(os.path.join(self.tmp, "replica"), self.redis.port)
        self.addCleanup(replica.kill)
        self.eventually(lambda: (self.replica_online(), None), "the replica connected and in sync")
        hub = self.start_hub("--cluster-replicas", "1")
        self.eventually(lambda: (self.create(hub, "gated")[0] == 201, None), "the trip created")
        lat, lon = ROUTE[0][1], ROUTE[0][0]
        first, second = now_ms() - 2000, now_ms() - 1000
        status, body, raw = hub.http("POST", "/v1/trips/gated/fixes", {"fixes": [{"lat": lat, "lon": lon, "ts": first, "seq": 1}]})
        self.assertEqual(status, 200, raw)
        self.assertEqual(trail_ts(hub, "gated"), [first])

        os.kill(replica.proc.pid, signal.SIGSTOP)  # the replica stops confirming
        self.addCleanup(lambda: replica.proc.poll() is None and os.kill(replica.proc.pid, signal.SIGCONT))
        status, body, raw = hub.http("POST", "/v1/trips/gated/fixes", {"fixes": [{"lat": lat, "lon": lon, "ts": second, "seq": 2}]})
        self.assertEqual(status, 503, raw)
        self.assertIn("replicas confirmed", raw.decode())
        with Resp(self.redis.port) as r:
            entries = sum(r.call("XLEN", k) for k in r.call("KEYS", "trackhub:{p*}:log"))
        self.assertEqual(entries, 3, "the refused fix is in the log all the same (create, fix, fix)")
        self.assertEqual(trail_ts(hub, "gated"), [first], "an entry the replica has not confirmed is not applied")
        self.eventually(lambda: (metric(hub, "trackhub_cluster_confirm_rescues_total") >= 2, None), "the owner tried to confirm it")
        self.assertEqual(trail_ts(hub, "gated"), [first], "nor after the owner's own WAIT fell short")

        os.kill(replica.proc.pid, signal.SIGCONT)
        self.eventually(lambda: (trail_ts(hub, "gated") == [first, second], trail_ts(hub, "gated")),
                        "the entry confirmed by the owner's rescue and applied")

    def replica_online(self):
        with Resp(self.redis.port) as r:
            info = r.call("INFO", "replication")
        info = info.decode() if isinstance(info, bytes) else info
        return "connected_slaves:1" in info and "state=online" in info

    def test_sync_full_refuses_on_everysec_and_takes_commands_on_always(self):
        hub = self.start_hub("--sync", "full")
        status, body, raw = self.create(hub, "durable")
        self.assertEqual(status, 503, raw)
        self.assertIn("appendfsync always", body["error"]["message"])
        self.eventually(lambda: (hub.http("GET", "/healthz")[0] == 503, None), "/healthz 503")
        self.eventually(lambda: ("--sync full: an ack would not survive a power loss" in hub.stderr_text(), hub.stderr_text()[-400:]), "the log line")
        with Resp(self.redis.port) as r:
            self.assertEqual(r.call("CONFIG", "SET", "appendfsync", "always"), "OK")
        self.eventually(lambda: (self.create(hub, "durable")[0] == 201, None), "a command taken on appendfsync always")
        self.assertEqual(metric_values(hub), {"hub_crash": 1, "redis_crash": 1, "power_loss": 1, "redis_machine_loss": 0})


if __name__ == "__main__":
    unittest.main()
