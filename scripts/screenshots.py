#!/usr/bin/env python3
"""Takes the README's screenshots of the trip view and the fleet view.

Starts the release hub and the courier simulator on a free port, opens both views in
headless Chromium (Selenium + chromium-driver), and writes docs/trip-view.png and
docs/fleet-view.png. The browser is kept offline (every host name but 127.0.0.1 fails to
resolve), as on a first run without internet: the map tiles fail, so the streets are the
web client's vector basemap (the sample roads, web-client/basemap.js). Both views look at
central Helsinki, where those roads are. Run after `swift build -c release`:

    python3 scripts/screenshots.py
"""
import json
import os
import subprocess
import sys
import time
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from screenshot_common import BASEMAP_DRAWN, BIN, REPO, free_port, start_chromium, start_hub, wait_script  # noqa: E402

# The fleet view's centre: a little west and south of the sample roads' middle, which leaves
# them clear of the card on the left and shows their denser southern half.
HELSINKI = (24.9395, 60.1702)
HELSINKI_BBOX = (24.935, 60.164, 24.954, 60.180)


def in_helsinki(port, trip):
    """Whether the trip's route lies in the sample roads' area (the basemap's streets)."""
    t = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/trips/{trip}"))
    w, s, e, n = HELSINKI_BBOX
    return all(w <= p[0] <= e and s <= p[1] <= n for p in t.get("route") or [[0, 0]])


def wait_for_basemap(driver):
    """Until the vector basemap has drawn road lines (the tiles failed, as offline)."""
    wait_script(driver, BASEMAP_DRAWN)


def main():
    port = free_port()
    hub = start_hub(port, "trackhub-shots-")
    sim = subprocess.Popen([f"{BIN}/trackhub", "simulate", "--hub", f"ws://127.0.0.1:{port}", "--riders", "40",
                            "--speedup", "4", "--seed", "7"], stderr=subprocess.DEVNULL, cwd=REPO)
    driver = start_chromium()
    try:
        deadline = time.monotonic() + 60
        trips = []
        while time.monotonic() < deadline and len(trips) < 20:
            trips = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/trips?status=moving"))["trips"]
            time.sleep(1)
        routed = [t for t in trips if t.get("waypoints") and in_helsinki(port, t["trip"])] or trips
        driver.get(f"http://127.0.0.1:{port}/trips/{routed[0]['trip']}")
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid='rider-marker']"))
        wait_for_basemap(driver)
        time.sleep(3)  # let the marker travel a little along the route for the picture
        driver.save_screenshot(os.path.join(REPO, "docs", "trip-view.png"))
        driver.get(f"http://127.0.0.1:{port}/fleet?lat={HELSINKI[1]}&lon={HELSINKI[0]}&zoom=15")
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid='cluster'],[data-testid='fleet-rider']"))
        wait_for_basemap(driver)
        time.sleep(3)
        driver.save_screenshot(os.path.join(REPO, "docs", "fleet-view.png"))
    finally:
        driver.quit()
        sim.terminate()
        sim.wait(timeout=20)
        hub.terminate()
        hub.wait(timeout=20)
    print("wrote docs/trip-view.png and docs/fleet-view.png")


if __name__ == "__main__":
    sys.exit(main())
