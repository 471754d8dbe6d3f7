#!/usr/bin/env python3
"""A three-master Redis Cluster on loopback for the cluster benchmarks.

    python3 bench/cluster/redis_cluster.py DIR     # prints "URL PID,PID,PID"; the masters keep running

Three `redis-server --cluster-enabled yes` joined by `redis-cli --cluster create`, with AOF
on (`appendfsync everysec`) like the one Redis of the benchmarks, so that the two logs keep
the same durability and Redis's CPU compares (the tests' RedisClusterServers runs without
AOF: it checks behaviour, not cost). From the command line it starts the masters in their
own sessions and exits, for a shell script to use and stop by pid (bench/cluster/run.sh
with REDIS_CLUSTER=1); `cpu_per_fix.py` imports `RedisCluster`.
"""

import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests-py"))
from test_cluster import Resp, RespError  # noqa: E402
from test_cluster_partitions import port_with_bus  # noqa: E402


def call(port, *args):
    try:
        with Resp(port, timeout=2.0) as r:
            return r.call(*args)
    except (OSError, ConnectionError, RespError):
        return None


def wait(condition, what, deadline_s=30):
    end = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > end:
            raise RuntimeError(f"{what}: not within {deadline_s} s")
        time.sleep(0.05)


class RedisCluster:
    def __init__(self, directory, masters=3):
        self.dir = directory
        self.ports = []
        while len(self.ports) < masters:
            port = port_with_bus()
            if port not in self.ports:
                self.ports.append(port)
        self.procs = []

    @property
    def url(self):
        """Every master: the hubs' --cluster seeds."""
        return ",".join(f"redis://127.0.0.1:{p}" for p in self.ports)

    @property
    def pids(self):
        return [p.pid for p in self.procs]

    def start(self):
        for port in self.ports:
            d = os.path.join(self.dir, str(port))
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "redis.log"), "ab") as log:
                self.procs.append(subprocess.Popen(
                    [shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port), "--bind", "127.0.0.1",
                     "--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--dir", d,
                     "--cluster-enabled", "yes", "--cluster-config-file", os.path.join(d, "nodes.conf"),
                     "--cluster-node-timeout", "2000"],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        for port in self.ports:
            wait(lambda: call(port, "PING") == "PONG", f"redis-server {port} answers PING")
        subprocess.run(["redis-cli", "--cluster", "create", *[f"127.0.0.1:{p}" for p in self.ports],
                        "--cluster-replicas", "0", "--cluster-yes"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60)
        wait(lambda: all(b"cluster_state:ok" in (call(p, "CLUSTER", "INFO") or b"") for p in self.ports),
             "every master says cluster_state:ok")
        return self

    def get(self, key):
        """GET from the master that serves the key (the others answer MOVED)."""
        for port in self.ports:
            try:
                with Resp(port, timeout=2.0) as r:
                    return r.call("GET", key)
            except RespError:
                continue
        return None

    def stop(self):
        for proc in self.procs:
            proc.kill()
        for proc in self.procs:
            proc.wait()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[1].strip())
    cluster = RedisCluster(sys.argv[1]).start()
    print(cluster.url, ",".join(str(pid) for pid in cluster.pids))
