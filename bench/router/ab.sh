#!/usr/bin/env bash
# bench/router/ab.sh [runs]: the medium load scenario (100 couriers, 1 000 viewers, 10 fleet
# viewers, 30 s) on a hub with --router (the Helsinki database), A without and B with riders
# being rerouted all along (router_bench.py reroutes: 20 riders leaving their route again and
# again), alternated A B A B. Run it under `flock /work/bench.lock`.
source "$(dirname "$0")/../load/lib.sh"
runs="${1:-2}"
build
tmp="$(mktemp -d)"
trap 'stop_hub; rm -rf "$tmp"' EXIT
python3 "$ROOT/scripts/geojson_to_osm.py" "$ROOT/data/samples/roads_helsinki.geojson" "$tmp/h.osm" >/dev/null
"$BIN/trackhub" router build "$tmp/h.osm" "$tmp/db" >/dev/null
for i in $(seq "$runs"); do
    for variant in A B; do
        start_hub "router-$variant$i" --router "routino:$tmp/db"
        driver=""
        if [[ "$variant" == B ]]; then
            python3 "$ROOT/bench/router/router_bench.py" reroutes --port "$HUB_PORT" --riders 20 --duration 38 \
                >"$OUT/router-$variant$i/reroutes.txt" 2>&1 &
            driver=$!
        fi
        load "router-$variant$i" --couriers 100 --viewers 1000 --fleet-viewers 10 --segments-share 0.1 --ramp 5s --duration 30s
        [[ -n "$driver" ]] && wait "$driver"
        curl -s "http://127.0.0.1:$HUB_PORT/metrics" | grep -E '^trackhub_router_searches_total|^trackhub_tick_duration_seconds_(sum|count|max)' \
            >"$OUT/router-$variant$i/metrics.txt" || true
        stop_hub
    done
done
