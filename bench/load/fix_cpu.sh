#!/usr/bin/env bash
# bench/load/fix_cpu.sh [COURIERS] [DURATION]: the hub's CPU per 1 000 fixes with no viewers.
# A hub (release build, libev) and COURIERS couriers (default 2000) sending one fix a second at
# a fixed rate (no cadence, no courier subscriptions), for DURATION (default 60s). Prints the
# hub's CPU share and CPU milliseconds per 1 000 fixes received over the window (the hub's
# /proc figures, read by the generator). TRACKHUB_BIN / TRACKHUB_LOAD_BIN pick the builds, so
# two hubs can be compared under the same generator (BENCHMARKS.md, "The courier's signal").
# PROCESSES=N spreads the couriers over N generator processes (one process opens at most
# ~19 000 connections here; 10 000 couriers at 1 fix/s want 2).
source "$(dirname "$0")/lib.sh"
couriers="${1:-2000}"
duration="${2:-60s}"
name="fix-cpu-$couriers"
build
trap stop_hub EXIT
start_hub "$name"
load "$name" --couriers "$couriers" --viewers 0 --courier-subscribe false --fix-interval 1s \
    --ramp 10s --warmup 5s --duration "$duration" --live false ${PROCESSES:+--processes "$PROCESSES"} >/dev/null
python3 - "$OUT/$name/summary.json" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
cpu = d["hub"]["cpu_pct"]
fixes_per_s = d["fixes_per_s"]
print(f"couriers {d['couriers']}: {fixes_per_s:.0f} fixes/s, hub CPU {cpu:.1f} %, "
      f"{cpu / 100 * 1000 / fixes_per_s * 1000:.1f} CPU-ms per 1 000 fixes, ack p99 {d['ack_latency_ms']['p99']} ms, errors {d['errors']}")
PY
