#!/usr/bin/env python3
"""Webhook deliveries per second from the release hub to a local receiver (issue 19).

    swift build -c release
    python3 bench/webhooks/webhook_throughput.py --trips 2000 --reroutes 3

1. Starts a receiver (tests-py/webhook_receiver.py: Python's ThreadingHTTPServer on
   loopback, HTTP/1.1 keep-alive) answering 503, and the hub with --webhook pointing at it.
2. Makes the events: per trip trip_created, `--reroutes` rerouted, ended (HTTP API), and
   waits until /metrics shows them all pending.
3. Stops the hub (SIGTERM), switches the receiver to 200, starts the hub again on the same
   data directory, and times from its `listening on` line until /metrics counts every event
   delivered: the backlog read back from SQLite and posted, signed, 16 requests at once.

Prints one line: events, seconds, deliveries/s. The receiver is Python on the same machine,
so the figure is a floor for the hub. No test asserts on it.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests-py"))
os.environ.setdefault("TRACKHUB_BIN", os.path.join(ROOT, ".build", "release"))

import hubproc  # noqa: E402
from webhook_receiver import Receiver  # noqa: E402

ROUTE = [[-9.1420, 38.7158], [-9.1360, 38.7180], [-9.1300, 38.7200]]
ROUTE2 = [[-9.1420, 38.7158], [-9.1380, 38.7190], [-9.1300, 38.7200]]
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def metric(hub, name, url):
    _, _, raw = hub.http("GET", "/metrics")
    for line in raw.decode().splitlines():
        if line.startswith(f'{name}{{url="{url}"'):
            return float(line.rsplit(" ", 1)[1])
    return None


def delivered(hub, url):
    _, _, raw = hub.http("GET", "/metrics")
    for line in raw.decode().splitlines():
        if line.startswith(f'trackhub_webhook_deliveries_total{{url="{url}",result="ok"}}'):
            return float(line.rsplit(" ", 1)[1])
    return 0


def cpu_seconds(pid):
    """User + system CPU time of a process so far (from /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trips", type=int, default=2000)
    ap.add_argument("--reroutes", type=int, default=3)
    args = ap.parse_args()
    mode = {"status": 503}
    receiver = Receiver(lambda req: mode["status"])
    tmp = tempfile.mkdtemp(prefix="trackhub-bench-webhooks-")
    data = os.path.join(tmp, "data")
    flags = ["--data", data, "--webhook", receiver.url, "--webhook-secret", SECRET, "--max-trips", "1000000"]
    try:
        hub = hubproc.HubProcess(*flags).start()
        for i in range(args.trips):
            trip = f"b{i}"
            hub.create_trip(id=trip, route=ROUTE)
            for k in range(args.reroutes):
                hub.http("PUT", f"/v1/trips/{trip}/route", {"route": ROUTE2 if k % 2 == 0 else ROUTE})
            hub.http("DELETE", f"/v1/trips/{trip}")
        total = args.trips * (args.reroutes + 2)
        deadline = time.monotonic() + 120
        while (metric(hub, "trackhub_webhook_pending", receiver.url) or 0) < total:
            if time.monotonic() > deadline:
                raise SystemExit("the events did not all become pending")
            time.sleep(0.1)
        hub.proc.send_signal(15)
        hub.proc.wait(timeout=30)
        mode["status"] = 200
        before = len(receiver.requests)
        start = time.monotonic()
        hub = hubproc.HubProcess(*flags).start()
        deadline = start + 600
        while delivered(hub, receiver.url) < total:
            if time.monotonic() > deadline:
                raise SystemExit("not every event was delivered within 10 minutes")
            time.sleep(0.02)
        seconds = time.monotonic() - start
        hub_cpu = cpu_seconds(hub.proc.pid)
        posted = len(receiver.requests) - before
        hub.stop()
        print(f"webhooks: {total} events ({args.trips} trips x {args.reroutes + 2}) delivered in {seconds:.2f} s after a restart: "
              f"{total / seconds:.0f} deliveries/s ({posted} requests, 16 in flight, Python receiver on loopback); "
              f"hub CPU {hub_cpu:.2f} s ({100 * hub_cpu / seconds:.0f} % of a core, start-up included)")
    finally:
        receiver.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
