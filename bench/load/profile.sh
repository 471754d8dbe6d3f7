#!/usr/bin/env bash
# bench/load/profile.sh [TRIPS] [VIEWERS] [DURATION]
# Profiles the hub under the fan-out load. perf cannot count hardware events here
# (`perf stat -e instructions true` says <not supported>), so the hub runs under
# valgrind --tool=callgrind (about 50x slower: use a smaller shape), and, as a cross-check
# at full speed, `perf record -e cpu-clock` (a software timer) when perf is installed.
# Also counts the hub's system calls with strace -c when installed.
# Output: .build/bench-load/profile-*/ (callgrind.out, callgrind.txt, perf.txt, strace.txt).
source "$(dirname "$0")/lib.sh"
TRIPS="${1:-100}"; VIEWERS="${2:-1000}"; DURATION="${3:-15s}"
build
trap stop_hub EXIT

# 1. Full speed, perf cpu-clock sampling (the 1000 x 10000 shape unless told otherwise).
if command -v perf >/dev/null; then
    start_hub profile-perf
    perf record -e cpu-clock -F 999 -g -p "$HUB_PID" -o "$OUT/profile-perf/perf.data" 2>/dev/null &
    PERF_PID=$!
    load profile-perf --couriers "${PERF_TRIPS:-1000}" --viewers "${PERF_VIEWERS:-10000}" --ramp 10s --warmup 3s --duration 20s --live false --max-errors 1000000000 || true
    kill -INT "$PERF_PID"; wait "$PERF_PID" 2>/dev/null || true
    perf report -i "$OUT/profile-perf/perf.data" --no-children --sort symbol --stdio 2>/dev/null | grep -v '^#' | grep '%' | head -40 >"$OUT/profile-perf/perf.txt"
    perf report -i "$OUT/profile-perf/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -v '^#' | grep '%' | head -15 >"$OUT/profile-perf/perf-dso.txt"
    stop_hub
fi

# 2. System calls (strace -c -f on the running hub, 10 s of the window).
if command -v strace >/dev/null; then
    start_hub profile-strace
    ( sleep 14; timeout -s INT 10 strace -c -f -p "$HUB_PID" -o "$OUT/profile-strace/strace.txt" ) &
    load profile-strace --couriers "${PERF_TRIPS:-1000}" --viewers "${PERF_VIEWERS:-10000}" --ramp 10s --warmup 3s --duration 15s --live false --max-errors 1000000000 || true
    wait
    stop_hub
fi

# 3. callgrind on a smaller shape.
DIR="$OUT/profile-callgrind"; rm -rf "$DIR"; mkdir -p "$DIR"
valgrind --tool=callgrind --callgrind-out-file="$DIR/callgrind.out" \
    "$BIN/trackhub" serve --listen 127.0.0.1:0 --data "$DIR/data" --log-level warn >"$DIR/hub.out" 2>"$DIR/valgrind.err" &
HUB_PID=$!
for _ in $(seq 300); do grep -q '^listening on' "$DIR/hub.out" 2>/dev/null && break; sleep 0.1; done
HUB_PORT="$(sed -n 's/^listening on http:\/\/[^:]*:\([0-9]*\)$/\1/p' "$DIR/hub.out")"; HUB_URL="ws://127.0.0.1:$HUB_PORT"
load profile-callgrind --couriers "$TRIPS" --viewers "$VIEWERS" --ramp 5s --warmup 2s --duration "$DURATION" --live false --max-errors 1000000000 || true
stop_hub
callgrind_annotate --inclusive=no "$DIR/callgrind.out" 2>/dev/null | head -60 >"$DIR/callgrind.txt"
echo "profiles in $OUT/profile-*" >&2
