#!/usr/bin/env bash
# bench/cluster/run.sh [couriers] [viewers] [duration] [extra trackhub-load flags]
# Cluster mode end to end: a redis-server (AOF on) and three hubs (--cluster) on loopback;
# couriers push fixes to hub A, trip viewers are spread over hubs B and C. Then the same
# shape against one hub on its own, for comparison. Everything is started and stopped here.
# Fix → first frame latency therefore crosses: XADD to Redis, every node's read of the log,
# the shared tick grid and the watermark, and the fan-out on another hub.
# Results: .build/bench-load/cluster-*/summary.json.
source "$(dirname "$0")/../load/lib.sh"
couriers="${1:-100}"; viewers="${2:-1000}"; duration="${3:-30s}"; shift $(( $# < 3 ? $# : 3 ))
build

redis_dir="$OUT/cluster-redis"
rm -rf "$redis_dir" && mkdir -p "$redis_dir"
redis_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec \
    --dir "$redis_dir" >"$redis_dir/redis.log" 2>&1 &
REDIS_PID=$!
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    stop_hub
    kill -TERM "$REDIS_PID" 2>/dev/null || true; wait "$REDIS_PID" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done

urls=()
for node in a b c; do
    start_hub "cluster-node-$node" --cluster "redis://127.0.0.1:$redis_port"
    PIDS+=("$HUB_PID"); urls+=("$HUB_URL")
    HUB_PID=""
done
HUB_URL="${urls[0]}"; HUB_PID="${PIDS[0]}"
# Each process's CPU (utime + stime, in clock ticks) and each hub's applied entries, before
# and after the run: $OUT/cluster-3-nodes/cpu.txt says how the work was divided.
cpu_ticks() { awk '{ split($0, a, ") "); split(a[2], f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
applied() { curl -s "${1/ws:/http:}/metrics" | awk '$1 == "trackhub_cluster_entries_applied_total" { print $2 }'; }
cpu_before=(); applied_before=()
for i in 0 1 2; do cpu_before+=("$(cpu_ticks "${PIDS[$i]}")"); applied_before+=("$(applied "${urls[$i]}")"); done
redis_before="$(cpu_ticks "$REDIS_PID")"; started="$(date +%s.%N)"
load cluster-3-nodes --couriers "$couriers" --viewers "$viewers" --ramp 5s --warmup 3s --duration "$duration" \
    --viewer-url "${urls[1]},${urls[2]}" "$@" || true
elapsed="$(echo "$(date +%s.%N) - $started" | bc)"; hz="$(getconf CLK_TCK)"
{
    echo "over ${elapsed} s (ramp, warm-up, window and the trips' end):"
    for i in 0 1 2; do
        echo "hub $i: $(echo "scale=3; ($(cpu_ticks "${PIDS[$i]}") - ${cpu_before[$i]}) / $hz / $elapsed" | bc) cores, entries applied $(echo "$(applied "${urls[$i]}") - ${applied_before[$i]}" | bc)"
    done
    echo "redis: $(echo "scale=3; ($(cpu_ticks "$REDIS_PID") - $redis_before) / $hz / $elapsed" | bc) cores"
} | tee "$OUT/cluster-3-nodes/cpu.txt" >&2
HUB_PID=""

start_hub cluster-single
load cluster-single --couriers "$couriers" --viewers "$viewers" --ramp 5s --warmup 3s --duration "$duration" "$@" || true
