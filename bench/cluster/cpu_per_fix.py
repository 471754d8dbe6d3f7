#!/usr/bin/env python3
"""CPU seconds per 1 000 fixes per hub with 1, 2 and 3 hubs sharing the log (PROTOCOL 15).

    swift build -c release
    flock /work/bench.lock python3 bench/cluster/cpu_per_fix.py [--trips 200] [--per-trip 100]
        [--rounds 2] [--batch 10] [--threads 8] [--idle 5] [--redis-cluster] [--hubs 1,2,3]
    # every setting in one run set, interleaved:
    flock /work/bench.lock python3 bench/cluster/cpu_per_fix.py --log redis,redis-cluster \
        --batch 10,1 --per-trip 500,50 --idle 3
    # what an ack that survives costs (issue 39): replicas and fsync on one Redis, one hub
    flock /work/bench.lock python3 bench/cluster/cpu_per_fix.py --hubs 1 --replicas 0,1 \
        --appendfsync everysec,always --batch 1 --per-trip 50 --rounds 3

`--log`, `--batch` and `--per-trip` take comma-separated lists (`--per-trip` one value, or one
per batch size): each round runs every log, every batch size and every K in turn, so that
all settings share the machine's state of the moment (1 2 3 1 2 3 ... within each). For
each run: a fresh log (one `redis-server`, or `redis-cluster`: three masters made on loopback
by bench/cluster/redis_cluster.py; both AOF `everysec`) and K hubs (`--cluster`, the
defaults: 16 partitions). Once the
partitions are spread, `--trips` trips are created and each gets `--per-trip` fixes over HTTP
(`POST /v1/trips/{id}/fixes`, `--batch` fixes a request, `--threads` client threads, one
keep-alive connection per thread and hub), each trip's requests sent to the hub that owns its
partition, as a partition-aware load balancer would. Each hub's CPU time (utime + stime from
/proc) is read before and after the fixes.

`--replicas` and `--appendfsync` (one Redis only) take lists too: `--replicas 1` starts a
replica `redis-server` beside the Redis (waiting until it is in sync) and the hubs with
`--cluster-replicas 1` (an ack waits for `WAIT`, readers for the confirmed position);
`--appendfsync` is set on the Redis with `CONFIG SET`. Each POST's round trip is timed: the
ack latency (`ack_p50_ms`, `ack_p99_ms`; with `--batch 1` one fix per ack).

Per run, one JSON line: CPU seconds per 1 000 fixes sent, per hub (the mean over the hubs) and
for the whole cluster; each hub's `trackhub_cluster_entries_applied_total` growth; Redis's CPU
(all masters); with `--idle S`, each hub's CPU per second over S quiet seconds before the fixes
(what reading every partition costs when nothing happens), and the per-hub figure less that
idle rate over the measured window (`net_...`). At the end, JSON lines fitting the per-hub
figures to a / K + b (least squares over the runs): `a` is the work that divides, `b`
what every hub pays whatever K is, one fit per log and batch size, and the mean per K.
"""

import argparse
import concurrent.futures
import http.client
import json
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests-py"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hubproc  # noqa: E402
from test_cluster import PARTITIONS, RedisServer, Resp, fnv1a64  # noqa: E402
from redis_cluster import RedisCluster, wait  # noqa: E402
from test_cluster_acks import Replica  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def machine_busy_seconds():
    """CPU seconds the whole machine spent not idle (all cores), from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / TICKS  # less idle and iowait


def own_cpu_seconds():
    """This client's CPU (every thread)."""
    t = os.times()
    return t.user + t.system


def metric(hub, name):
    text = hub.http("GET", "/metrics", timeout=5)[2].decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


class Log:
    """The log under the hubs: one Redis, or a three-master Redis Cluster."""

    def __init__(self, directory, cluster, replicas=0, appendfsync="everysec"):
        self.cluster = cluster
        self.servers = RedisCluster(directory).start() if cluster else RedisServer(directory).start()
        self.replicas = []
        if cluster:
            return
        with Resp(self.servers.port, timeout=2.0) as r:
            r.call("CONFIG", "SET", "appendfsync", appendfsync)
        for i in range(replicas):
            self.replicas.append(Replica(os.path.join(directory, f"replica-{i}"), self.servers.port))

        def online():
            with Resp(self.servers.port, timeout=2.0) as r:
                info = r.call("INFO", "replication")
            info = info.decode() if isinstance(info, bytes) else info
            return info.count("state=online") == replicas
        wait(online, "replicas in sync", 60)

    @property
    def url(self):
        return self.servers.url

    @property
    def pids(self):
        return self.servers.pids if self.cluster else [self.servers.proc.pid] + [r.proc.pid for r in self.replicas]

    def get(self, key):
        if self.cluster:
            return self.servers.get(key)
        with Resp(self.servers.port, timeout=2.0) as r:
            return r.call("GET", key)

    def stop(self):
        for replica in self.replicas:
            replica.kill()
        if self.cluster:
            self.servers.stop()
        else:
            self.servers.terminate()


class KeepAlive:
    """One keep-alive HTTP connection per client thread and hub (a new connection per request
    would add the hub's accept and TLS-free handshake work to every fix)."""

    def __init__(self):
        self.local = threading.local()

    def post(self, hub, path, body):
        conns = self.local.__dict__.setdefault("conns", {})
        for attempt in range(2):
            conn = conns.get(hub.port)
            if conn is None:
                conn = conns[hub.port] = http.client.HTTPConnection("127.0.0.1", hub.port, timeout=60)
            try:
                conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
                response = conn.getresponse()
                raw = response.read()
                return response.status, raw
            except (ConnectionError, http.client.HTTPException):
                conn.close()
                conns.pop(hub.port, None)
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")


def run(k, log_kind, batch, per_trip, args, tmp, replicas=0, appendfsync="everysec"):
    log = Log(os.path.join(tmp, f"log-{k}-{time.monotonic_ns()}"), log_kind == "redis-cluster", replicas, appendfsync)
    hubs = []
    try:
        extra = ("--cluster-replicas", str(replicas)) if replicas else ()
        for _ in range(k):
            hubs.append(hubproc.HubProcess("--cluster", log.url, *extra).start())
        wait(lambda: all(hub.http("GET", "/healthz")[0] == 200 for hub in hubs), "healthz", 90)
        wait(lambda: sum(metric(h, "trackhub_cluster_partitions_owned") or 0 for h in hubs) == PARTITIONS
             and max(metric(h, "trackhub_cluster_partitions_owned") for h in hubs) <= -(-PARTITIONS // k), "spread", 90)
        owner = {}
        for p in range(PARTITIONS):
            holder = log.get("trackhub:{p%d}:lease" % p).decode()
            owner[p] = next(h for h in hubs if f"-{h.proc.pid}-" in holder)
        ids = [f"bench-{i}" for i in range(args.trips)]
        home = {t: owner[fnv1a64(t) % PARTITIONS] for t in ids}
        for t in ids:
            home[t].create_trip(id=t)
        idle_cpu = None
        if args.idle > 0:
            time.sleep(1)  # the creates' snapshots and webhooks settle; then S quiet seconds
            start = [cpu_seconds(h.proc.pid) for h in hubs]
            time.sleep(args.idle)  # measuring an idle interval: nothing to wait for
            idle_cpu = [round((cpu_seconds(h.proc.pid) - s) / args.idle, 4) for h, s in zip(hubs, start)]
        window_start = time.monotonic()
        before = [cpu_seconds(h.proc.pid) for h in hubs]
        redis_before = sum(cpu_seconds(pid) for pid in log.pids)
        applied_before = [metric(h, "trackhub_cluster_entries_applied_total") for h in hubs]
        machine_before, client_before = machine_busy_seconds(), own_cpu_seconds()
        base = int(time.time() * 1000) - per_trip * 1000 - 60_000
        client = KeepAlive()
        latencies = []  # appended from the client threads (list.append is atomic)

        def drive(t):
            hub = home[t]
            for start in range(0, per_trip, batch):
                fixes = [{"lat": 48.0 + (i * 0.0001), "lon": 11.0, "ts": base + i * 1000, "seq": i + 1}
                         for i in range(start, min(per_trip, start + batch))]
                sent = time.monotonic()
                status, raw = client.post(hub, f"/v1/trips/{t}/fixes", {"fixes": fixes})
                latencies.append(time.monotonic() - sent)
                if status != 200:
                    raise RuntimeError(f"{status} {raw[:200]!r}")
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(args.threads) as pool:
            list(pool.map(drive, ids))
        wall = time.monotonic() - started
        # The readers' last polls and the appliers' last batches: until every hub's applied
        # count stops moving (a bounded wait, not a measurement).
        last = None
        for _ in range(50):
            now_applied = [metric(h, "trackhub_cluster_entries_applied_total") for h in hubs]
            if now_applied == last:
                break
            last = now_applied
            time.sleep(0.2)
        used = [cpu_seconds(h.proc.pid) - b for h, b in zip(hubs, before)]
        redis_used = sum(cpu_seconds(pid) for pid in log.pids) - redis_before
        client_used = own_cpu_seconds() - client_before
        machine_used = machine_busy_seconds() - machine_before
        window = time.monotonic() - window_start
        applied = [metric(h, "trackhub_cluster_entries_applied_total") - a for h, a in zip(hubs, applied_before)]
        fixes = args.trips * per_trip
        latencies.sort()
        return {"hubs": k, "log": "redis-cluster-3" if log_kind == "redis-cluster" else "redis", "batch": batch,
                "replicas": replicas, "appendfsync": appendfsync,
                "fixes": fixes, "wall_s": round(wall, 2), "fixes_per_s": round(fixes / wall),
                "ack_p50_ms": round(latencies[len(latencies) // 2] * 1000, 2),
                "ack_p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000, 2),
                "cpu_s_per_1000_fixes_per_hub": round(sum(used) / k / fixes * 1000, 4),
                "cpu_s_per_1000_fixes_cluster": round(sum(used) / fixes * 1000, 4),
                "cpu_s_per_hub": [round(u, 2) for u in used],
                "entries_applied_per_hub": [int(a) for a in applied],
                "requests": -(-per_trip // batch) * args.trips,
                "idle_cpu_per_s_per_hub": idle_cpu,
                "window_s": round(window, 2),
                # The same less what the hub would have spent idle over the window (its polls).
                "net_cpu_s_per_1000_fixes_per_hub": None if idle_cpu is None else round(
                    (sum(used) - sum(idle_cpu) * window) / k / fixes * 1000, 4),
                "redis_cpu_s_per_1000_fixes": round(redis_used / fixes * 1000, 4),
                "client_cpu_s": round(client_used, 2),
                # What else ran on the machine meanwhile (the lead's tests, say), in cores:
                # the whole machine's busy time less the hubs', Redis's and this client's.
                "other_cores": round((machine_used - sum(used) - redis_used - client_used) / window, 2)}
    finally:
        for hub in hubs:
            hub.stop(10)
        log.stop()


def fit(results, field="cpu_s_per_1000_fixes_per_hub"):
    """Least squares of y = a / K + b over the runs (of one log and batch size)."""
    results = [r for r in results if r.get(field) is not None]
    if not results:
        return None
    xs = [1 / r["hubs"] for r in results]
    ys = [r[field] for r in results]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    a = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    b = my - a * mx
    # How far the runs sit from the curve: the largest residual, against the mean figure.
    worst = max(abs(y - (a * x + b)) for x, y in zip(xs, ys))
    return {"fit": f"{field} = a / K + b", "a": round(a, 4), "b": round(b, 4),
            "max_residual": round(worst, 4), "runs": n,
            "log": results[0]["log"], "batch": results[0]["batch"]}


def means(results):
    """Per K, the mean of the per-hub figures and of the other costs over the rounds."""
    out = {"summary": "mean per K", "log": results[0]["log"], "batch": results[0]["batch"],
           "replicas": results[0].get("replicas", 0), "appendfsync": results[0].get("appendfsync")}
    for k in sorted({r["hubs"] for r in results}):
        runs = [r for r in results if r["hubs"] == k]

        def mean(field, runs=runs):
            values = [r[field] for r in runs if r.get(field) is not None]
            return round(sum(values) / len(values), 4) if values else None
        idle = [x for r in runs for x in (r["idle_cpu_per_s_per_hub"] or [])]
        out[f"K={k}"] = {"cpu_s_per_1000_fixes_per_hub": mean("cpu_s_per_1000_fixes_per_hub"),
                         "net": mean("net_cpu_s_per_1000_fixes_per_hub"),
                         "redis_cpu_s_per_1000_fixes": mean("redis_cpu_s_per_1000_fixes"),
                         "fixes_per_s": mean("fixes_per_s"),
                         "ack_p50_ms": mean("ack_p50_ms"), "ack_p99_ms": mean("ack_p99_ms"),
                         "idle_cpu_per_s_per_hub": round(sum(idle) / len(idle), 4) if idle else None}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trips", type=int, default=200)
    ap.add_argument("--per-trip", default="100", help="fixes per trip: one value, or one per --batch value")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batch", default="10", help="fixes per POST (a comma-separated list: each in turn)")
    ap.add_argument("--threads", type=int, default=8, help="client threads, each with a keep-alive connection per hub")
    ap.add_argument("--idle", type=float, default=0, help="seconds of idle CPU measured per run (0: none)")
    ap.add_argument("--log", default="redis", help="redis, redis-cluster, or both comma-separated (each in turn)")
    ap.add_argument("--redis-cluster", action="store_true", help="the same as --log redis-cluster")
    ap.add_argument("--hubs", default="1,2,3")
    ap.add_argument("--replicas", default="0", help="replica redis-servers (one Redis only), a comma-separated list")
    ap.add_argument("--appendfsync", default="everysec", help="everysec, always, or both comma-separated")
    args = ap.parse_args()
    logs = ["redis-cluster"] if args.redis_cluster else args.log.split(",")
    if any(kind not in ("redis", "redis-cluster") for kind in logs):
        ap.error("--log: redis or redis-cluster")
    batches = [int(x) for x in args.batch.split(",")]
    per_trip = [int(x) for x in args.per_trip.split(",")]
    if len(per_trip) == 1:
        per_trip *= len(batches)
    if len(per_trip) != len(batches):
        ap.error("--per-trip: one value, or one per --batch value")
    hubproc.require_binary()
    results = []
    replica_counts = [int(x) for x in args.replicas.split(",")]
    fsyncs = args.appendfsync.split(",")
    if any(r > 0 for r in replica_counts) and "redis-cluster" in logs:
        ap.error("--replicas: one Redis only (--log redis)")
    settings = [(kind, batch, n, r, f) for kind in logs for batch, n in zip(batches, per_trip)
                for r in replica_counts for f in fsyncs]
    with tempfile.TemporaryDirectory(prefix="trackhub-cpu-per-fix-") as tmp:
        for _ in range(args.rounds):
            for kind, batch, n, r, f in settings:
                for k in (int(x) for x in args.hubs.split(",")):
                    result = run(k, kind, batch, n, args, tmp, r, f)
                    results.append(result)
                    print(json.dumps(result), flush=True)
    for kind, batch, _, reps, fsync in settings:
        name = "redis-cluster-3" if kind == "redis-cluster" else "redis"
        group = [r for r in results if r["batch"] == batch and r["log"] == name
                 and r["replicas"] == reps and r["appendfsync"] == fsync]
        print(json.dumps(means(group)), flush=True)
        for field in ("cpu_s_per_1000_fixes_per_hub", "net_cpu_s_per_1000_fixes_per_hub"):
            summary = fit(group, field)
            if summary:
                print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
