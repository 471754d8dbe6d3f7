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
import os
import sys
import time

from selenium.webdriver.support.ui import WebDriverWait
from websockets.sync.client import connect

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from screenshot_common import (BASEMAP_DRAWN, REPO, SECRET, helsinki_route, http, hub_and_browser,  # noqa: E402
                               line_length, point_along, shoot as shoot_page, size_to, token, wait_script)

TRIP = "round-7"
SPEED_MPS = 4.0
STEP_M = 50
# Along the street: two customers' stops, then the destination (the third customer) at its end.
STOPS = {"order-1041": 250, "order-1042": 550}
DESKTOP, PHONE = (1280, 800), (390, 844)


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


def page_ready(driver, js_condition):
    wait_script(driver, BASEMAP_DRAWN)
    wait_script(driver, js_condition)


def shoot(driver, url, size, js_condition, name):
    shoot_page(driver, url, size, os.path.join(REPO, "docs", name), js_condition, drawn=BASEMAP_DRAWN)
    print("wrote docs/" + name)


CARD = "document.querySelector(\"[data-testid='share-card']\")"
HIDDEN = f"return {CARD}.dataset.visible === 'false' && /stops? before yours/.test(document.querySelector(\"[data-testid='eta']\").textContent);"
SHOWN = (f"return {CARD}.dataset.visible === 'true' && !!document.querySelector(\"[data-testid='rider-marker']\")"
         " && parseFloat(document.querySelector(\"[data-testid='route-left']\").dataset.lengthM) > 0;")
ARRIVED = "return document.querySelector(\"[data-testid='eta']\").textContent === 'Your order is here';"


def main():
    route = helsinki_route()
    length = line_length(route)
    with hub_and_browser("trackhub-stop-shots-", "--jwt-secret", SECRET) as (port, base, driver):
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


if __name__ == "__main__":
    sys.exit(main())
