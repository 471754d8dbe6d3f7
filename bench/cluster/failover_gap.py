#!/usr/bin/env python3
"""The failover's gap in acks, over several runs (issue 39, PROTOCOL 15 "Failover").

    swift build -c release
    TRACKHUB_BIN=$(swift build -c release --show-bin-path) \\
        flock /work/bench.lock python3 bench/cluster/failover_gap.py [--runs 5] [--single]

Each run is `tests-py/test_cluster_failover.py`'s Redis Cluster case (three masters with two
replicas each, `cluster-node-timeout` 2000, two hubs on `--cluster-replicas 1`, four trips
sending a fix every 100 ms each, the master serving most of them killed with SIGKILL) in a
process of its own; `--single` adds its one-Redis case (`appendfsync always`, SIGKILL and a
restart on the same files). The test asserts what must hold (every acked fix once in every
trail, every event once); this reads the line it prints and reports, per run and as the
median and worst over the runs: the promotion after the kill (Redis's part), the first ack
after the promotion (the hubs' part: PROTOCOL 15 says within 5 s) and the gap from the last
ack before the kill to the first after it, per trip on the killed master. One JSON line per
run, then one summary line.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys

TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests-py")
CLUSTER_LINE = re.compile(r"promoted after ([\d.]+) s; first ack after the promotion ([\d., ]+) s; "
                          r"gap last ack before the kill to first after ([\d., ]+) s")
SINGLE_LINE = re.compile(r"SIGKILL \+ restart: (\d+) acked fixes, gap per trip ([\d., ]+) s")


def numbers(text):
    return [float(x) for x in text.split(",")]


def run_case(name):
    out = subprocess.run([sys.executable, "-m", "unittest", f"test_cluster_failover.{name}"], cwd=TESTS,
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise SystemExit(f"{name} failed:\n{out.stderr[-3000:]}")
    return out.stderr + out.stdout


def summary(values):
    return {"median": round(statistics.median(values), 2), "worst": round(max(values), 2), "n": len(values)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--single", action="store_true", help="also the one-Redis case, SIGKILL and restart")
    args = ap.parse_args()
    promotions, follows, gaps, single_gaps = [], [], [], []
    for i in range(args.runs):
        m = CLUSTER_LINE.search(run_case("TestRedisClusterFailover"))
        if not m:
            raise SystemExit("the cluster case printed no figures")
        run = {"run": i + 1, "case": "redis-cluster", "promotion_s": float(m.group(1)),
               "first_ack_after_promotion_s": numbers(m.group(2)), "gap_s": numbers(m.group(3))}
        promotions.append(run["promotion_s"])
        follows += run["first_ack_after_promotion_s"]
        gaps += run["gap_s"]
        print(json.dumps(run), flush=True)
        if args.single:
            m = SINGLE_LINE.search(run_case("TestSingleRedisRestart"))
            if not m:
                raise SystemExit("the single-Redis case printed no figures")
            run = {"run": i + 1, "case": "single-redis", "acked": int(m.group(1)), "gap_s": numbers(m.group(2))}
            single_gaps += run["gap_s"]
            print(json.dumps(run), flush=True)
    result = {"summary": f"{args.runs} runs", "promotion_s": summary(promotions),
              "first_ack_after_promotion_s": summary(follows), "gap_s": summary(gaps)}
    if single_gaps:
        result["single_redis_gap_s"] = summary(single_gaps)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
