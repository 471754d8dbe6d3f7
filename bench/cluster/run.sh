#!/usr/bin/env bash
# bench/cluster/run.sh [couriers] [viewers] [duration] [extra trackhub-load flags]
# Cluster mode end to end, three runs of one shape, each with a fresh log and fresh hubs:
#   cluster-3-nodes:        redis-server (AOF on) and three hubs (--cluster) on loopback;
#                           couriers on hub A, trip viewers spread over hubs B and C;
#   cluster-3-nodes-routed: the same, but each trip's courier and viewers connect to the hub
#                           that owns its partition (trackhub-load --partition-url, from the
#                           leases in Redis), as a partition-aware load balancer would;
#   cluster-single:         the same shape against one hub on its own.
# Fix → first frame latency in the cluster runs crosses: XADD to Redis, the reads of the log,
# the shared tick grid and the watermark, and the fan-out on the viewer's hub.
# REDIS_CLUSTER=1: the cluster runs' log on a three-master Redis Cluster (bench/cluster/redis_cluster.py,
# AOF everysec like the one Redis).
# Results: .build/bench-load/<run>/summary.json; the cluster runs' per-process CPU and each
# hub's applied entries in <run>/cpu.txt. Everything is started and stopped here.
source "$(dirname "$0")/../load/lib.sh"
couriers="${1:-100}"; viewers="${2:-1000}"; duration="${3:-30s}"; shift $(( $# < 3 ? $# : 3 ))
build
PARTITIONS=16  # the hubs' default --cluster-partitions

REDIS_PIDS=(); PIDS=()
stop_cluster() {
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    PIDS=()
    for pid in "${REDIS_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    # The Redis Cluster's masters are not this shell's children: wait for them to be gone.
    for pid in "${REDIS_PIDS[@]}"; do
        wait "$pid" 2>/dev/null || for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    done
    REDIS_PIDS=()
}
cleanup() { stop_cluster; stop_hub; }
trap cleanup EXIT

# Each process's CPU (utime + stime, in clock ticks) and each hub's applied entries.
cpu_ticks() { awk '{ split($0, a, ") "); split(a[2], f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
redis_ticks() { local t=0 pid; for pid in "${REDIS_PIDS[@]}"; do t=$((t + $(cpu_ticks "$pid"))); done; echo "$t"; }
applied() { curl -s "${1/ws:/http:}/metrics" | awk '$1 == "trackhub_cluster_entries_applied_total" { print $2 }'; }
owned() { curl -s "${1/ws:/http:}/metrics" | awk '$1 == "trackhub_cluster_partitions_owned" { print $2 }'; }

# cluster_run NAME ROUTED [trackhub-load flags...]
cluster_run() {
    local name="$1" routed="$2"; shift 2
    local redis_dir="$OUT/$name-redis"
    rm -rf "$redis_dir" && mkdir -p "$redis_dir"
    local redis_port redis_url
    if [[ "${REDIS_CLUSTER:-0}" == 1 ]]; then
        local pids
        read -r redis_url pids < <(python3 "$ROOT/bench/cluster/redis_cluster.py" "$redis_dir")
        IFS=, read -r -a REDIS_PIDS <<< "$pids"
        redis_port="${redis_url%%,*}"; redis_port="${redis_port##*:}"  # any master: redis-cli -c follows MOVED
    else
        redis_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
        redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec \
            --dir "$redis_dir" >"$redis_dir/redis.log" 2>&1 &
        REDIS_PIDS=($!)
        redis_url="redis://127.0.0.1:$redis_port"
        for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    fi
    local urls=() node
    for node in a b c; do
        start_hub "$name-node-$node" --cluster "$redis_url"
        PIDS+=("$HUB_PID"); urls+=("$HUB_URL")
        HUB_PID=""
    done
    # The partitions spread (each hub at most ceil(16 / 3)), before anything is measured.
    for _ in $(seq 300); do
        local a b c
        a="$(owned "${urls[0]}")"; b="$(owned "${urls[1]}")"; c="$(owned "${urls[2]}")"
        [[ -n "$a" && -n "$b" && -n "$c" ]] && (( ${a%.*} + ${b%.*} + ${c%.*} == PARTITIONS && ${a%.*} <= 6 && ${b%.*} <= 6 && ${c%.*} <= 6 )) && break
        sleep 0.1
    done
    local route=(--viewer-url "${urls[1]},${urls[2]}")
    if [[ "$routed" == yes ]]; then
        local owners=() p holder i
        for p in $(seq 0 $((PARTITIONS - 1))); do
            holder="$(redis-cli -c -p "$redis_port" GET "trackhub:{p$p}:lease")"
            for i in 0 1 2; do [[ "$holder" == *"-${PIDS[$i]}-"* ]] && owners+=("${urls[$i]}"); done
        done
        route=(--partition-url "$(IFS=,; echo "${owners[*]}")")
    fi
    HUB_URL="${urls[0]}"; HUB_PID="${PIDS[0]}"
    local cpu_before=() applied_before=() redis_before started
    for i in 0 1 2; do cpu_before+=("$(cpu_ticks "${PIDS[$i]}")"); applied_before+=("$(applied "${urls[$i]}")"); done
    redis_before="$(redis_ticks)"; started="$(date +%s.%N)"
    load "$name" --couriers "$couriers" --viewers "$viewers" --ramp 5s --warmup 3s --duration "$duration" \
        "${route[@]}" "$@" || true
    local elapsed hz
    elapsed="$(echo "$(date +%s.%N) - $started" | bc)"; hz="$(getconf CLK_TCK)"
    {
        echo "over ${elapsed} s (ramp, warm-up, window and the trips' end):"
        for i in 0 1 2; do
            echo "hub $i: $(echo "scale=3; ($(cpu_ticks "${PIDS[$i]}") - ${cpu_before[$i]}) / $hz / $elapsed" | bc) cores, entries applied $(echo "$(applied "${urls[$i]}") - ${applied_before[$i]}" | bc)"
        done
        echo "redis (${#REDIS_PIDS[@]} process(es)): $(echo "scale=3; ($(redis_ticks) - $redis_before) / $hz / $elapsed" | bc) cores"
    } | tee "$OUT/$name/cpu.txt" >&2
    HUB_PID=""
    stop_cluster
}

cluster_run cluster-3-nodes no "$@"
cluster_run cluster-3-nodes-routed yes "$@"

start_hub cluster-single
load cluster-single --couriers "$couriers" --viewers "$viewers" --ramp 5s --warmup 3s --duration "$duration" "$@" || true
