#!/usr/bin/env python3
"""CPU seconds per 1 000 fixes per hub with 1, 2 and 3 hubs sharing one Redis (PROTOCOL 15).

    swift build -c release
    flock /work/bench.lock python3 bench/cluster/cpu_per_fix.py [trips] [fixes-per-trip] [rounds]

For each K in 1, 2, 3 (in turn, `rounds` times: 1 2 3 1 2 3 ...): a fresh `redis-server` and
K hubs (`--cluster`, the defaults: 16 partitions); once the partitions are spread, `trips`
trips are created and each gets `fixes-per-trip` fixes over HTTP (`POST /v1/trips/{id}/fixes`,
10 fixes a request, 8 client threads), each trip's requests sent to the hub that owns its
partition, as a partition-aware load balancer would. Each hub's CPU time (utime + stime from
/proc) is read before and after the fixes; the result is CPU seconds per 1 000 fixes sent,
per hub (mean over the hubs) and for the whole cluster. Redis's own CPU is reported apart.
"""

import concurrent.futures
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests-py"))
import hubproc  # noqa: E402
from test_cluster import PARTITIONS, RedisServer, fnv1a64  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def metric(hub, name):
    text = hub.http("GET", "/metrics", timeout=5)[2].decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def wait(condition, what, deadline=60):
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise SystemExit(f"timed out: {what}")
        time.sleep(0.1)


def run(k, trips, per_trip, tmp):
    redis = RedisServer(os.path.join(tmp, f"redis-{k}-{time.monotonic_ns()}")).start()
    hubs = []
    try:
        for _ in range(k):
            hubs.append(hubproc.HubProcess("--cluster", redis.url).start())
        wait(lambda: all(hub.http("GET", "/healthz")[0] == 200 for hub in hubs), "healthz")
        wait(lambda: sum(metric(h, "trackhub_cluster_partitions_owned") or 0 for h in hubs) == PARTITIONS
             and max(metric(h, "trackhub_cluster_partitions_owned") for h in hubs) <= -(-PARTITIONS // k), "spread")
        with redis.client() as r:
            owner = {}
            for p in range(PARTITIONS):
                holder = r.call("GET", "trackhub:{p%d}:lease" % p).decode()
                owner[p] = next(h for h in hubs if f"-{h.proc.pid}-" in holder)
        ids = [f"bench-{i}" for i in range(trips)]
        home = {t: owner[fnv1a64(t) % PARTITIONS] for t in ids}
        for t in ids:
            home[t].create_trip(id=t)
        redis_pid = redis.proc.pid
        before = [cpu_seconds(h.proc.pid) for h in hubs]
        redis_before = cpu_seconds(redis_pid)
        applied_before = [metric(h, "trackhub_cluster_entries_applied_total") for h in hubs]
        base = int(time.time() * 1000) - per_trip * 1000 - 60_000

        def drive(t):
            hub = home[t]
            for start in range(0, per_trip, 10):
                fixes = [{"lat": 48.0 + (i * 0.0001), "lon": 11.0, "ts": base + i * 1000, "seq": i + 1}
                         for i in range(start, min(per_trip, start + 10))]
                status, _, raw = hub.http("POST", f"/v1/trips/{t}/fixes", {"fixes": fixes})
                if status != 200:
                    raise RuntimeError(f"{status} {raw[:200]!r}")
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(drive, ids))
        wall = time.monotonic() - started
        time.sleep(1)  # the readers' last polls
        used = [cpu_seconds(h.proc.pid) - b for h, b in zip(hubs, before)]
        applied = [metric(h, "trackhub_cluster_entries_applied_total") - a for h, a in zip(hubs, applied_before)]
        fixes = trips * per_trip
        return {"hubs": k, "fixes": fixes, "wall_s": round(wall, 2),
                "cpu_s_per_1000_fixes_per_hub": round(sum(used) / k / fixes * 1000, 4),
                "cpu_s_per_1000_fixes_cluster": round(sum(used) / fixes * 1000, 4),
                "cpu_s_per_hub": [round(u, 2) for u in used],
                "entries_applied_per_hub": [int(a) for a in applied],
                "redis_cpu_s_per_1000_fixes": round((cpu_seconds(redis_pid) - redis_before) / fixes * 1000, 4)}
    finally:
        for hub in hubs:
            hub.stop(10)
        redis.terminate()


def main():
    hubproc.require_binary()
    trips = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    per_trip = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    with tempfile.TemporaryDirectory(prefix="trackhub-cpu-per-fix-") as tmp:
        for _ in range(rounds):
            for k in (1, 2, 3):
                print(json.dumps(run(k, trips, per_trip, tmp)), flush=True)


if __name__ == "__main__":
    main()
