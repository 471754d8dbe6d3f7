#!/usr/bin/env bash
# bench/load/scenario.sh small|medium|large|idle [extra trackhub-load flags]
# Starts a hub (release build, libev loop), drives one standard scenario, stops the hub.
#   small   10 couriers,    100 viewers, 2 fleet viewers, 20 s
#   medium 100 couriers,  1 000 viewers, 10 fleet viewers, 30 s
#   large 1 000 couriers, 10 000 viewers (10 per trip), 1 fix/s, 10 frames/s per trip, 60 s
#   idle  19 000 idle connections held 20 s: the hub's memory per connection
# Results: .build/bench-load/<scenario>/summary.json (the generator's JSON line) and live.txt.
# With --stop-link-share X the hub runs secured (see below) and X of the viewers follow one stop.
source "$(dirname "$0")/lib.sh"
scenario="${1:?usage: scenario.sh small|medium|large|idle [flags]}"; shift
build
trap stop_hub EXIT
# --stop-link-share (PROTOCOL 17 links for one stop) needs a secured hub: share links exist only
# with --jwt-secret. Then the hub runs secured with a secret made for this run, and the generator
# gets an admin token; compare with the same scenario and --stop-link-share 0 (secured too).
if [[ " $* " == *" --stop-link-share"* ]]; then
    secret="bench-$scenario-$(date +%s)-$RANDOM-stop-links-secret"
    start_hub "$scenario" --jwt-secret "$secret"
    set -- "$@" --token "$("$BIN/trackhub" token --secret "$secret" --scope admin --ttl 2h)"
else
    start_hub "$scenario"
fi
case "$scenario" in
    small)  load small  --couriers 10   --viewers 100   --fleet-viewers 2  --segments-share 0.1 --ramp 2s  --duration 20s "$@" ;;
    medium) load medium --couriers 100  --viewers 1000  --fleet-viewers 10 --segments-share 0.1 --ramp 5s  --duration 30s "$@" ;;
    large)  load large  --couriers 1000 --viewers 10000 --ramp 15s --warmup 5s --duration 60s "$@" ;;
    idle)   load idle   --couriers 0 --viewers 0 --idle-connections 19000 --ramp 20s --warmup 5s --duration 20s "$@" ;;
    *) echo "unknown scenario $scenario" >&2; exit 2 ;;
esac
