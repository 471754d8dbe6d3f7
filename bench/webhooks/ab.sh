#!/usr/bin/env bash
# bench/webhooks/ab.sh [medium|small]: the same trackhub-load scenario twice, without and with
# --webhook (a local receiver answering 200), so frames and acks can be compared (issue 19).
# Results: .build/bench-load/webhooks-off/ and webhooks-on/ (summary.json), and the number of
# webhook requests the receiver got.
source "$(dirname "$0")/../load/lib.sh"
scenario="${1:-medium}"
case "$scenario" in
    small)  flags=(--couriers 10  --viewers 100  --fleet-viewers 2  --segments-share 0.1 --ramp 2s --duration 20s) ;;
    medium) flags=(--couriers 100 --viewers 1000 --fleet-viewers 10 --segments-share 0.1 --ramp 5s --duration 30s) ;;
    *) echo "unknown scenario $scenario" >&2; exit 2 ;;
esac
build
count="$OUT/webhooks-received.txt"
python3 "$(dirname "$0")/receiver.py" "$count" > "$OUT/receiver.url" &
RECEIVER_PID=$!
trap 'stop_hub; kill -TERM $RECEIVER_PID 2>/dev/null || true' EXIT
for _ in $(seq 100); do [[ -s "$OUT/receiver.url" ]] && break; sleep 0.1; done
url="$(cat "$OUT/receiver.url")"

start_hub webhooks-off
load webhooks-off "${flags[@]}"
stop_hub

start_hub webhooks-on --webhook "$url" --webhook-secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
load webhooks-on "${flags[@]}"
curl -s "http://127.0.0.1:$HUB_PORT/metrics" | grep '^trackhub_webhook' >&2
stop_hub
kill -TERM "$RECEIVER_PID"; wait "$RECEIVER_PID" 2>/dev/null || true
echo "webhook requests received: $(cat "$count")" >&2
