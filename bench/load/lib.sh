#!/usr/bin/env bash
# Shared by the bench/load scenarios: start a hub on a free port, stop it, find the data.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${TRACKHUB_BIN:-$ROOT/.build/release}"
# The generator: the hub's build by default; TRACKHUB_LOAD_BIN pins one generator for an A/B
# of two hub builds, so only the hub differs between the runs.
LOAD_BIN="${TRACKHUB_LOAD_BIN:-$BIN}"
OUT="${TRACKHUB_BENCH_OUT:-$ROOT/.build/bench-load}"
mkdir -p "$OUT"

# The five I-95 routes shipped in the repository (data/samples/README.md): the same LineStrings,
# in the same order, as the shared dataset's planned_routes.geojson that runs before used, so
# every clone drives the same roads. TRACKHUB_LOAD_ROUTES (what trackhub-load reads for --routes)
# names another GeoJSON file.
ROUTES="${TRACKHUB_LOAD_ROUTES:-$ROOT/data/samples/routes_i95.geojson}"
ROUTES_FLAG=(--routes "$ROUTES")

build() {
    if [[ -z "${TRACKHUB_BIN:-}" ]]; then (cd "$ROOT" && swift build -c release >/dev/null); fi
}

# start_hub NAME [serve flags...]: sets HUB_PID, HUB_PORT, HUB_URL.
start_hub() {
    local name="$1"; shift
    local dir="$OUT/$name"
    rm -rf "$dir" && mkdir -p "$dir"
    "$BIN/trackhub" serve --listen 127.0.0.1:0 --data "$dir/data" --log-level warn "$@" >"$dir/hub.out" 2>"$dir/hub.err" &
    HUB_PID=$!
    for _ in $(seq 100); do
        grep -q '^listening on' "$dir/hub.out" 2>/dev/null && break
        kill -0 "$HUB_PID" 2>/dev/null || { cat "$dir/hub.err" >&2; return 1; }
        sleep 0.1
    done
    HUB_PORT="$(sed -n 's/^listening on http:\/\/[^:]*:\([0-9]*\)$/\1/p' "$dir/hub.out")"
    HUB_URL="ws://127.0.0.1:$HUB_PORT"
    echo "hub pid $HUB_PID on $HUB_URL ($dir)" >&2
}

stop_hub() {
    if [[ -n "${HUB_PID:-}" ]] && kill -0 "$HUB_PID" 2>/dev/null; then
        kill -TERM "$HUB_PID"; wait "$HUB_PID" 2>/dev/null || true
    fi
    HUB_PID=""
}

# load NAME [trackhub-load flags...]: runs the generator against $HUB_URL, keeps its JSON line.
# Couriers send at the fixed --fix-interval, as every scenario was measured: they ignore the
# hub's cadence (PROTOCOL 18) unless the flags given say --follow-cadence true (the last wins).
load() {
    local name="$1"; shift
    local dir="$OUT/$name"
    mkdir -p "$dir"
    echo "+ trackhub-load --url $HUB_URL --hub-pid $HUB_PID ${ROUTES_FLAG[*]} --follow-cadence false $*" | tee "$dir/command.txt" >&2
    set +e
    "$LOAD_BIN/trackhub-load" --url "$HUB_URL" --hub-pid "$HUB_PID" "${ROUTES_FLAG[@]}" --follow-cadence false "$@" >"$dir/summary.json" 2> >(tee "$dir/live.txt" >&2)
    local status=$?
    set -e
    echo "$name: exit $status; summary in $dir/summary.json" >&2
    tail -n 1 "$dir/summary.json"
    return $status
}
