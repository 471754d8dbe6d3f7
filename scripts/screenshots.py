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
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BIN = subprocess.check_output(["swift", "build", "-c", "release", "--show-bin-path"], cwd=REPO, text=True).strip()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "const b = window.trackhubBasemap; return !!b && b.state === 'vector' && b.linesDrawn > 0;"))


def main():
    port = free_port()
    data = tempfile.mkdtemp(prefix="trackhub-shots-")
    hub = subprocess.Popen([f"{BIN}/trackhub", "serve", "--listen", f"127.0.0.1:{port}", "--data", data],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    assert "listening on" in hub.stdout.readline()
    sim = subprocess.Popen([f"{BIN}/trackhub", "simulate", "--hub", f"ws://127.0.0.1:{port}", "--riders", "40",
                            "--speedup", "4", "--seed", "7"], stderr=subprocess.DEVNULL, cwd=REPO)
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800",
                 "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
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
