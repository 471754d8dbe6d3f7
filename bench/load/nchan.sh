#!/usr/bin/env bash
# bench/load/nchan.sh [TRIPS] [VIEWERS] [DURATION]     (SHAPE=frames, the default, or SHAPE=segments)
# The same fan-out through TrackHub and through nginx + Nchan, driven by the same generator,
# in one run, reported as ratios. Both servers single-threaded: TrackHub's one service thread,
# nginx with one worker process. Installs nginx and libnginx-mod-nchan from Debian if missing.
#   SHAPE=frames (defaults: 1 000 trips/channels, 10 000 viewers): 10 messages per second per
#     trip of ~200 B (TrackHub: frames at --tick-hz 10 driven by 1 fix/s per trip; Nchan: a
#     publisher WebSocket per channel sending 10 msg/s of 200 B), 60 s.
#   SHAPE=segments: one message per fix on both sides (TrackHub: every viewer in segments
#     mode, 1 fix/s per trip, each fix stored before its segment goes out; Nchan: 1 publish/s
#     per channel of ~300 B, the size of a segment). "fix/publish -> viewer" is then the
#     whole path of a fix, its durable commit included, against a relay's.
source "$(dirname "$0")/lib.sh"
TRIPS="${1:-1000}"; VIEWERS="${2:-10000}"; DURATION="${3:-60s}"
build
if ! [[ -e /usr/share/nginx/modules-available/mod-nchan.conf || -e /usr/lib/nginx/modules/ngx_nchan_module.so ]]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx libnginx-mod-nchan >/dev/null
fi
NCHAN_SO="$(ls /usr/lib/nginx/modules/ngx_nchan_module.so)"

common=(--couriers "$TRIPS" --viewers "$VIEWERS" --ramp "${RAMP:-15s}" --warmup "${WARMUP:-5s}" --duration "$DURATION")
case "${SHAPE:-frames}" in
    frames)   hub_shape=(); nchan_shape=(--publish-rate 10 --message-size 200) ;;
    segments) hub_shape=(--segments-share 1 --fix-interval 1s); nchan_shape=(--publish-rate 1 --message-size 300) ;;
    *) echo "SHAPE must be frames or segments" >&2; exit 2 ;;
esac

# 1. TrackHub.
trap 'stop_hub; stop_nginx' EXIT
start_hub nchan-side-trackhub
load nchan-side-trackhub "${common[@]}" "${hub_shape[@]}" --max-errors 1000000000 || true
stop_hub

# 2. nginx + Nchan on a free loopback port, config in a temp dir.
NDIR="$OUT/nchan-side-nginx"; rm -rf "$NDIR"; mkdir -p "$NDIR/logs" "$NDIR/tmp"
NPORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
cat >"$NDIR/nginx.conf" <<CONF
load_module $NCHAN_SO;
worker_processes 1;
worker_rlimit_nofile 20000;
pid $NDIR/nginx.pid;
error_log $NDIR/logs/error.log warn;
events { worker_connections 19500; }
http {
    access_log off;
    client_body_temp_path $NDIR/tmp;
    nchan_shared_memory_size 256M;
    server {
        listen 127.0.0.1:$NPORT;
        location ~ ^/pub/(\w+)$ {
            nchan_publisher websocket http;
            nchan_channel_id \$1;
            nchan_message_buffer_length 4;
            nchan_message_timeout 30s;
        }
        location ~ ^/sub/(\w+)$ {
            nchan_subscriber websocket;
            nchan_channel_id \$1;
            nchan_subscriber_first_message newest;
        }
    }
}
CONF
nginx -c "$NDIR/nginx.conf" -p "$NDIR" -g 'daemon off;' 2>"$NDIR/nginx.err" &
NGINX_PID=$!
stop_nginx() { if [[ -n "${NGINX_PID:-}" ]] && kill -0 "$NGINX_PID" 2>/dev/null; then kill -QUIT "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null || true; fi; NGINX_PID=""; }
for _ in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$NPORT),1)" 2>/dev/null && break; sleep 0.1; done
WORKER_PID="$(pgrep -P "$NGINX_PID" | head -1)"
HUB_URL="ws://127.0.0.1:$NPORT"; HUB_PID="$WORKER_PID"
load nchan-side-nginx --target nchan "${common[@]}" "${nchan_shape[@]}" --max-errors 1000000000 || true
HUB_PID=""
stop_nginx

# 3. Side by side.
python3 - "$OUT/nchan-side-trackhub/summary.json" "$OUT/nchan-side-nginx/summary.json" "${SHAPE:-frames}" <<'PY' | tee "$OUT/nchan-side-${SHAPE:-frames}.txt"
import json, sys
t = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
n = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
if sys.argv[3] == "segments":
    # TrackHub's viewers get segments: their count and fix -> segment latency are the messages.
    t["viewer_frames_per_s"] = t["segments_per_s"]
    t["latency_ms"] = t["segment_latency_ms"]
def ratio(a, b): return f"{a / b:.2f}" if a and b else "–"
rows = [
    ("viewer messages delivered /s", t["viewer_frames_per_s"], n["viewer_frames_per_s"]),
    ("all messages delivered /s", t["frames_per_s"], n["frames_per_s"]),
    ("frame t → received p50 ms", t["delivery_ms"]["p50"], n["delivery_ms"]["p50"]),
    ("frame t → received p99 ms", t["delivery_ms"]["p99"], n["delivery_ms"]["p99"]),
    ("fix/publish → viewer p99 ms", t["latency_ms"]["p99"], n["latency_ms"]["p99"]),
    ("ack p99 ms (TrackHub: fix stored)", t.get("ack_latency_ms", {}).get("p99"), None),
    ("server cpu %", t["hub"].get("cpu_pct"), n["hub"].get("cpu_pct")),
    ("server rss MB", t["hub"].get("rss_mb"), n["hub"].get("rss_mb")),
    ("errors", t["errors"], n["errors"]),
]
print(f"{'':32}{'TrackHub':>12}{'Nchan':>12}{'TrackHub/Nchan':>16}")
for name, a, b in rows:
    print(f"{name:32}{a!s:>12}{b!s:>12}{ratio(a, b):>16}")
print(json.dumps({"trackhub": {"viewer_frames_per_s": t["viewer_frames_per_s"], "delivery_p99_ms": t["delivery_ms"]["p99"], "latency_p99_ms": t["latency_ms"]["p99"]},
                  "nchan": {"viewer_frames_per_s": n["viewer_frames_per_s"], "delivery_p99_ms": n["delivery_ms"]["p99"], "latency_p99_ms": n["latency_ms"]["p99"]},
                  "ratio_delivered": round(t["viewer_frames_per_s"] / n["viewer_frames_per_s"], 3) if n["viewer_frames_per_s"] else None,
                  "ratio_delivery_p99": round(t["delivery_ms"]["p99"] / n["delivery_ms"]["p99"], 3) if n["delivery_ms"]["p99"] else None}))
PY
