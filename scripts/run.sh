#!/usr/bin/env bash
# The run command: installs what is missing, builds in release mode, starts the hub with
# its embedded defaults and a fleet of simulated couriers, and prints the URL to open.
# The hub finds routes (PROTOCOL 16) with a Routino database of the sample Helsinki roads,
# built here in a moment: some demo trips are created from their stops alone, and riders
# who stray are rerouted. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

scripts/install-deps.sh
swift build -c release
bin="$(swift build -c release --show-bin-path)"

listen="${TRACKHUB_LISTEN:-127.0.0.1:8080}"
riders="${TRACKHUB_DEMO_RIDERS:-40}"
speedup="${TRACKHUB_DEMO_SPEEDUP:-4}"

out="$(mktemp)"
routing="$(mktemp -d)"
python3 scripts/geojson_to_osm.py data/samples/roads_helsinki.geojson "$routing/helsinki.osm" >/dev/null
"$bin/trackhub" router build "$routing/helsinki.osm" "$routing/db" >/dev/null
"$bin/trackhub" serve --listen "$listen" --data "${TRACKHUB_DATA:-./trackhub-data}" --router "routino:$routing/db" >"$out" &
hub_pid=$!
sim_pid=""
cleanup() {
  [ -n "$sim_pid" ] && kill -TERM "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
  kill -TERM "$hub_pid" 2>/dev/null && wait "$hub_pid" 2>/dev/null
  rm -f "$out"
  rm -rf "$routing"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

for _ in $(seq 1 100); do
  grep -q '^listening on ' "$out" && break
  kill -0 "$hub_pid" 2>/dev/null || { echo "the hub did not start"; exit 1; }
  sleep 0.1
done
url="$(grep -m1 '^listening on ' "$out" | sed 's/^listening on //')"
echo
echo "  TrackHub is running:  $url/"
echo "  fleet view:           $url/fleet"
echo "  Ctrl-C stops the hub and the simulated couriers."
echo

"$bin/trackhub" simulate --hub "ws://${url#http://}" --riders "$riders" --speedup "$speedup" --from-stops 0.3 &
sim_pid=$!
wait "$hub_pid"
