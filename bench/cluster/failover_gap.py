#!/usr/bin/env python3
"""The failover's gap in acks, over several runs (issue 39, PROTOCOL 15 "Failover").

    swift build -c release
    TRACKHUB_BIN=$(swift build -c release --show-bin-path) \\
        flock /work/bench.lock python3 bench/cluster/failover_gap.py [--runs 5] [--single] [--variants]

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
                          r"gap last ack before the kill to first after ([\d., ]+) s; (\d+) acked fixes lost")
SINGLE_LINE = re.compile(r"SIGKILL \+ restart: (\d+) acked fixes, (\d+) lost, gap per trip ([\d., ]+) s")


def numbers(text):
    return [float(x) for x in text.split(",")]


def run_case(name, variants=False):
    env = dict(os.environ, TRACKHUB_FAILOVER_VARIANTS="1" if variants else "0")
    out = subprocess.run([sys.executable, "-m", "unittest", f"test_cluster_failover.{name}"], cwd=TESTS,
                         capture_output=True, text=True, timeout=600, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{name} failed:\n{out.stderr[-3000:]}")
    return out.stderr + out.stdout


def summary(values):
    return {"median": round(statistics.median(values), 2), "worst": round(max(values), 2), "n": len(values)}


# (label, test class, whether it is a Redis Cluster case, needs TRACKHUB_FAILOVER_VARIANTS)
CASES = {
    "cluster": ("redis-cluster, --cluster-replicas 1", "TestRedisClusterFailover", True, False),
    "single": ("single redis, appendfsync always", "TestSingleRedisRestart", False, False),
    "cluster-nowait": ("redis-cluster, --cluster-replicas 0", "TestRedisClusterFailoverWithoutWait", True, True),
    "single-everysec": ("single redis, appendfsync everysec", "TestSingleRedisEverysecRestart", False, True),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--single", action="store_true", help="also the one-Redis case, SIGKILL and restart")
    ap.add_argument("--variants", action="store_true",
                    help="also the settings that promise less: replicas without --cluster-replicas, and appendfsync everysec")
    args = ap.parse_args()
    chosen = ["cluster"] + (["single"] if args.single else []) + (["cluster-nowait", "single-everysec"] if args.variants else [])
    figures = {case: {"promotion_s": [], "first_ack_after_promotion_s": [], "gap_s": [], "lost": []} for case in chosen}
    for i in range(args.runs):
        for case in chosen:
            label, test, cluster, variant = CASES[case]
            text = run_case(test, variant)
            m = (CLUSTER_LINE if cluster else SINGLE_LINE).search(text)
            if not m:
                raise SystemExit(f"{test} printed no figures")
            if cluster:
                run = {"run": i + 1, "case": label, "promotion_s": float(m.group(1)),
                       "first_ack_after_promotion_s": numbers(m.group(2)), "gap_s": numbers(m.group(3)),
                       "acked_fixes_lost": int(m.group(4))}
                figures[case]["promotion_s"].append(run["promotion_s"])
                figures[case]["first_ack_after_promotion_s"] += run["first_ack_after_promotion_s"]
            else:
                run = {"run": i + 1, "case": label, "acked": int(m.group(1)), "acked_fixes_lost": int(m.group(2)),
                       "gap_s": numbers(m.group(3))}
            figures[case]["gap_s"] += run["gap_s"]
            figures[case]["lost"].append(run["acked_fixes_lost"])
            print(json.dumps(run), flush=True)
    for case in chosen:
        f = figures[case]
        result = {"summary": f"{args.runs} runs", "case": CASES[case][0], "gap_s": summary(f["gap_s"]),
                  "acked_fixes_lost": {"total": sum(f["lost"]), "worst_run": max(f["lost"])}}
        if f["promotion_s"]:
            result["promotion_s"] = summary(f["promotion_s"])
            result["first_ack_after_promotion_s"] = summary(f["first_ack_after_promotion_s"])
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
