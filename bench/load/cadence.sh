#!/usr/bin/env bash
# bench/load/cadence.sh [DURATION]: cadence on against cadence off (PROTOCOL 18), one run set.
# Two hubs side by side (release build, libev), each driven by its own generator for DURATION
# (default 10m): 200 couriers, one trip each, and 20 trip viewers on 20 of the trips, so 10 % of
# the trips are watched.
#   off: hub --cadence-idle 0 (no cadence); couriers send every 2 s, fixed
#   on:  hub defaults (--cadence-watched 2s, --cadence-idle 30s); couriers follow `cadence`
# Both start at the same fixed 2 s (the watched interval), so a watched trip sees the same
# fixes either way. Results: .build/bench-load/cadence-{off,on}/summary.json and a table
# (fixes per courier-hour, hub CPU, viewer frames/s and fix -> frame p99) on stdout. CPU is
# the hub's over the generator's window (/proc); run nothing else meanwhile.
source "$(dirname "$0")/lib.sh"
duration="${1:-10m}"
build
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait' EXIT

run_side() {  # run_side NAME FOLLOW [serve flags...]: a hub and its generator, in the background
    local name="$1" follow="$2"; shift 2
    start_hub "$name" "$@"
    pids+=("$HUB_PID")
    local dir="$OUT/$name" hub_pid="$HUB_PID" url="$HUB_URL"
    (
        "$LOAD_BIN/trackhub-load" --url "$url" --hub-pid "$hub_pid" "${ROUTES_FLAG[@]}" \
            --couriers 200 --viewers 20 --fix-interval 2s --follow-cadence "$follow" \
            --ramp 10s --warmup 5s --duration "$duration" --live false >"$dir/summary.json" 2>"$dir/live.txt"
        echo "$name: generator exit $?" >&2
        kill -TERM "$hub_pid"
    ) &
}

run_side cadence-off false --cadence-idle 0
run_side cadence-on true
wait

python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
print("| cadence | fixes sent | fixes per courier-hour | hub CPU | viewer frames/s | fix → frame p99 | cadence messages | errors |")
print("|---|---|---|---|---|---|---|---|")
for name in ("cadence-off", "cadence-on"):
    d = json.loads(open(f"{out}/{name}/summary.json").read().strip().splitlines()[-1])
    # A courier sends from its connection on (the ramp spreads them over 10 s), through the 5 s
    # warm-up and the window: on average 5 + 5 s more than the window.
    hours = (d["duration_s"] + 10) / 3600
    per_hour = d["fixes_sent"] / d["couriers"] / hours
    print(f"| {name[8:]} | {d['fixes_sent']} | {per_hour:.0f} | {d['hub']['cpu_pct']:.1f} % | "
          f"{d['viewer_frames_per_s']:.1f} | {d['latency_ms']['p99']} ms | {d.get('cadence_received', '–')} | {d['errors']} |")
PY
