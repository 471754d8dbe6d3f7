#!/usr/bin/env bash
# The run command: installs what is missing, builds in release mode, starts the hub with
# its embedded defaults and a fleet of simulated couriers, and prints the URL to open.
# The hub finds routes (PROTOCOL 16) with a Routino database of the sample Helsinki roads,
# built here in a moment: some demo trips are created from their stops alone, and riders
# who stray are rerouted. Ctrl-C stops both.
#
# The terminal shows the URL and one status line (the simulator's: riders, fixes per
# second, viewers), refreshed in place, with a line above it for each customer whose stop
# the courier reached (how "stops before yours" counted down); the hub's own log (a line per HTTP request) goes to
# hub.log in the data directory, named on screen, so that nothing scrolls.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

scripts/install-deps.sh
swift build -c release
bin="$(swift build -c release --show-bin-path)"

listen="${TRACKHUB_LISTEN:-127.0.0.1:8080}"
riders="${TRACKHUB_DEMO_RIDERS:-40}"
speedup="${TRACKHUB_DEMO_SPEEDUP:-4}"
# Delivery rounds (PROTOCOL 17): each synthetic trip has this many stops, and a customer
# follows each stop, printing one line when the courier gets there; 0: plain via points.
stops="${TRACKHUB_DEMO_STOPS:-3}"
stop_flags=()
[ "$stops" != "0" ] && stop_flags=(--stops "$stops")

data="${TRACKHUB_DATA:-./trackhub-data}"
# Made here as serve would make it (0750), so that the log can go in it from the start.
mkdir -p -m 0750 "$data"
log="$(cd "$data" && pwd)/hub.log"

out="$(mktemp)"
routing="$(mktemp -d)"
python3 scripts/geojson_to_osm.py data/samples/roads_helsinki.geojson "$routing/helsinki.osm" >/dev/null
"$bin/trackhub" router build "$routing/helsinki.osm" "$routing/db" >/dev/null
# The hub and the simulator run in sessions of their own (setsid), out of reach of the
# terminal's Ctrl-C: this script stops them in order, the simulator first (it ends its trips
# on a running hub), then the hub. Both at once, the hub would drain under the simulator and
# every rider would report its connection closed.
setsid "$bin/trackhub" serve --listen "$listen" --data "$data" --router "routino:$routing/db" >"$out" 2>"$log" &
hub_pid=$!
sim_pid=""
cleanup() {
  # A second Ctrl-C (or the terminal closing) must not cut this short: the hub and the
  # simulator, in sessions of their own, would be left running.
  trap '' INT TERM HUP
  [ -n "$sim_pid" ] && kill -TERM "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
  kill -TERM "$hub_pid" 2>/dev/null && wait "$hub_pid" 2>/dev/null
  rm -f "$out"
  rm -rf "$routing"
}
trap cleanup EXIT
trap 'exit 0' INT TERM HUP

# The hub's stderr is its log: when it does not start, its one-line error (PROTOCOL 14) is there.
for _ in $(seq 1 100); do
  grep -q '^listening on ' "$out" && break
  kill -0 "$hub_pid" 2>/dev/null || { echo "the hub did not start:"; tail -n 5 "$log"; exit 1; }
  sleep 0.1
done
grep -q '^listening on ' "$out" || { echo "the hub did not start within 10 s; its log: $log"; exit 1; }
url="$(grep -m1 '^listening on ' "$out" | sed 's/^listening on //')"
echo
echo "  TrackHub is running:  $url/"
echo "  fleet view:           $url/fleet"
echo "  hub log:              $log"
echo "  Ctrl-C stops the hub and the simulated couriers."
echo

# Its status line goes to the terminal (stderr): in place on a terminal, a line a second
# otherwise.
setsid "$bin/trackhub" simulate --hub "ws://${url#http://}" --riders "$riders" --speedup "$speedup" --from-stops 0.3 "${stop_flags[@]}" --show-viewers &
sim_pid=$!
wait "$hub_pid" || true
# Only a hub that stopped by itself gets here (Ctrl-C exits through the trap).
echo
echo "the hub stopped; the end of its log ($log):"
tail -n 5 "$log"
exit 1
