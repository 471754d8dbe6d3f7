#!/usr/bin/env python3
"""Takes docs/share-links.md's screenshots of a link for one stop (PROTOCOL 17) and of the
dispatcher's list of stops.

Starts the release hub secured with a throw-away secret, creates a trip along the longest
street of the sample roads (central Helsinki, where the offline vector basemap has streets)
with two stops on the way (each with a planned dwell of 2 minutes) and a rider named Alex,
issues a link for the destination's customer with `visible_within_stops` 1, drives the trip
with `fix` ops at a cyclist's 4 m/s (holding at each stop, then `proceed`), and writes from
headless Chromium, offline like scripts/share_screenshots.py:

  docs/stop-link-hidden.png, -shown.png, -arrived.png        (1280 x 800)
  docs/stop-link-hidden-phone.png, -shown-phone.png, -arrived-phone.png   (390 x 844)
  docs/trip-view-stops.png                                    (1280 x 800, b's link made)

Run after `swift build -c release`:

    python3 scripts/stop_screenshots.py
"""
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait
from websockets.sync.client import connect

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BIN = subprocess.check_output(["swift", "build", "-c", "release", "--show-bin-path"], cwd=REPO, text=True).strip()
SECRET = "screenshot-secret-at-least-32-bytes-long"
TRIP = "round-7"
SPEED_MPS = 4.0
STEP_M = 50
# Along the street: two customers' stops, then the destination (the third customer) at its end.
STOPS = {"order-1041": 250, "order-1042": 550}
DESKTOP, PHONE = (1280, 800), (390, 844)


def dist_m(a, b):
    lon1, lat1, lon2, lat2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    s = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371008.8 * math.asin(min(1.0, math.sqrt(s)))


def line_length(line):
    return sum(dist_m(line[i], line[i + 1]) for i in range(len(line) - 1))


def point_along(line, d):
    for i in range(len(line) - 1):
        seg = dist_m(line[i], line[i + 1])
        if d <= seg or i == len(line) - 2:
            f = 0 if seg == 0 else min(1.0, d / seg)
            return [line[i][0] + (line[i + 1][0] - line[i][0]) * f, line[i][1] + (line[i + 1][1] - line[i][1]) * f]
        d -= seg
    return list(line[-1])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def token(scope):
    return subprocess.check_output([f"{BIN}/trackhub", "token", "--secret", SECRET, "--scope", scope, "--trip", "*"], text=True).strip()


def http(base, method, path, bearer, body=None):
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {bearer}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def until(what, check, timeout=30):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.1)  # polling a condition with a deadline


class Courier:
    def __init__(self, port, route, base, admin):
        self.ws = connect(f"ws://127.0.0.1:{port}/v1/ws?token={token('courier')}", subprotocols=["trackhub.v1"])
        self.route, self.base, self.admin = route, base, admin
        self.seq = 0
        self.t0 = int(time.time() * 1000) - 10 * 60 * 1000
        self.at = None

    def request(self, msg):
        self.seq += 1
        self.ws.send(json.dumps(dict(msg, id=self.seq)))
        while True:
            reply = json.loads(self.ws.recv(timeout=10))
            if reply.get("re") == self.seq:
                return reply

    def drive_to(self, end_m):
        """Fixes every 50 m up to `end_m`; at a stop, holding there and then `proceed`."""
        start = 0 if self.at is None else self.at + STEP_M
        for along in range(start, int(end_m) + 1, STEP_M):
            p = point_along(self.route, along)
            ts = self.t0 + int(along / SPEED_MPS * 1000)
            self.request({"op": "fix", "trip": TRIP, "lat": p[1], "lon": p[0], "ts": ts, "duration_ms": 600})
            self.at = along
            if along in STOPS.values():
                until("holding", lambda: http(self.base, "GET", f"/v1/trips/{TRIP}", self.admin)["status"] == "holding")
                self.request({"op": "proceed", "trip": TRIP})


def size_to(driver, size):
    driver.set_window_size(*size)
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight];")
    driver.set_window_size(2 * size[0] - inner[0], 2 * size[1] - inner[1])


def page_ready(driver, js_condition):
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "const b = window.trackhubBasemap; return !!b && b.state === 'vector' && b.linesDrawn > 0;"))
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(js_condition))


def shoot(driver, url, size, js_condition, name):
    size_to(driver, size)
    driver.get(url)
    page_ready(driver, js_condition)
    time.sleep(2)  # let the marker settle and the basemap finish drawing, for the picture only
    driver.save_screenshot(os.path.join(REPO, "docs", name))
    print("wrote docs/" + name)


CARD = "document.querySelector(\"[data-testid='share-card']\")"
HIDDEN = f"return {CARD}.dataset.visible === 'false' && /stops? before yours/.test(document.querySelector(\"[data-testid='eta']\").textContent);"
SHOWN = (f"return {CARD}.dataset.visible === 'true' && !!document.querySelector(\"[data-testid='rider-marker']\")"
         " && parseFloat(document.querySelector(\"[data-testid='route-left']\").dataset.lengthM) > 0;")
ARRIVED = "return document.querySelector(\"[data-testid='eta']\").textContent === 'Your order is here';"


def main():
    with open(os.path.join(REPO, "web-client", "basemap.json"), encoding="utf-8") as f:
        streets = [line for feat in json.load(f)["features"] if feat["properties"]["class"] == "street"
                   for line in feat["geometry"]["coordinates"]]
    route = max(streets, key=line_length)
    length = line_length(route)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    data = tempfile.mkdtemp(prefix="trackhub-stop-shots-")
    hub = subprocess.Popen([f"{BIN}/trackhub", "serve", "--listen", f"127.0.0.1:{port}", "--data", data, "--jwt-secret", SECRET],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    assert "listening on" in hub.stdout.readline()
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800",
                 "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        admin = token("admin")
        waypoints = []
        for sid, along in STOPS.items():
            p = point_along(route, along)
            waypoints.append({"lat": p[1], "lon": p[0], "id": sid, "name": f"Order {sid.split('-')[1]}", "dwell_s": 120})
        http(base, "POST", "/v1/trips", admin, {"id": TRIP, "route": route, "waypoints": waypoints, "rider": {"id": "rider-7", "name": "Alex"}})
        link = http(base, "POST", f"/v1/trips/{TRIP}/share", admin, {"stop": "destination", "visible_within_stops": 1})
        url = base + link["url"]
        courier = Courier(port, route, base, admin)

        # Two stops before the customer's: hidden, "2 stops before yours · about 8 min".
        courier.drive_to(100)
        shoot(driver, url, DESKTOP, HIDDEN, "stop-link-hidden.png")
        shoot(driver, url, PHONE, HIDDEN, "stop-link-hidden-phone.png")

        # The dispatcher's list: the first stop visited, the second's link made.
        courier.drive_to(400)
        size_to(driver, DESKTOP)
        driver.get(f"{base}/trips/{TRIP}?token={admin}")
        page_ready(driver, "return document.querySelectorAll(\"[data-testid='stop-row'][data-visited='true']\").length === 1;")
        driver.execute_script("document.querySelector(\"[data-stop='order-1042'] [data-testid='stop-share']\").click();")
        WebDriverWait(driver, 10).until(lambda d: d.execute_script("return !!document.querySelector(\"[data-stop='order-1042'] [data-testid='stop-link']\");"))
        time.sleep(2)  # for the picture only
        driver.save_screenshot(os.path.join(REPO, "docs", "trip-view-stops.png"))
        print("wrote docs/trip-view-stops.png")

        # Past both stops, 250 m from the second: shown, the route to the door.
        courier.drive_to(800)
        shoot(driver, url, DESKTOP, SHOWN, "stop-link-shown.png")
        shoot(driver, url, PHONE, SHOWN, "stop-link-shown-phone.png")

        # At the door.
        courier.drive_to(length - length % STEP_M)
        courier.request({"op": "fix", "trip": TRIP, "lat": route[-1][1], "lon": route[-1][0],
                         "ts": courier.t0 + int(length / SPEED_MPS * 1000), "duration_ms": 600})
        shoot(driver, url, DESKTOP, ARRIVED, "stop-link-arrived.png")
        shoot(driver, url, PHONE, ARRIVED, "stop-link-arrived-phone.png")
        courier.ws.close()
    finally:
        driver.quit()
        hub.terminate()
        hub.wait(timeout=20)


if __name__ == "__main__":
    sys.exit(main())
