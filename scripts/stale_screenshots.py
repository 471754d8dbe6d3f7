#!/usr/bin/env python3
"""Takes the screenshots of a stale trip (PROTOCOL 18) for docs/devices.md.

Starts the release hub secured with a throw-away secret and a short `--stale-after`,
creates a trip along the longest street of the sample roads (central Helsinki, where the
offline vector basemap has streets) with a rider named Alex, drives it part of the way with
`fix` ops reporting a battery of 23 %, then stops sending. Once the pages say "Last update
1 min ago" it writes, from headless Chromium kept offline like scripts/screenshots.py:

    docs/trip-view-stale.png         the dispatcher's trip view, 1280 x 800
    docs/trip-view-stale-phone.png   the same at 390 x 844
    docs/share-page-stale.png        the customer's page of a share link, 1280 x 800
    docs/share-page-stale-phone.png  the same at 390 x 844

It takes a little over a minute (the silence is real). Run after `swift build -c release`:

    python3 scripts/stale_screenshots.py
"""
import json
import os
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait
from websockets.sync.client import connect

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from share_screenshots import BIN, REPO, SECRET, free_port, line_length, point_along, post, token  # noqa: E402

TRIP = "order-1042"
# What the pages must say before the pictures: a silence that reads like a real one.
LAST_UPDATE_IN_MINUTES = "const e = document.querySelector(\"[data-testid='last-update']\");" \
                         "return !!e && !e.hidden && / min ago$/.test(e.textContent);"


def shoot(driver, url, size, path, ready):
    driver.set_window_size(*size)
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight];")
    driver.set_window_size(2 * size[0] - inner[0], 2 * size[1] - inner[1])
    driver.get(url)
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "const m = document.querySelector(\"[data-testid='rider-marker']\");"
        "const b = window.trackhubBasemap; return !!m && !!b && b.state === 'vector' && b.linesDrawn > 0;"))
    WebDriverWait(driver, 120).until(lambda d: d.execute_script(ready))
    time.sleep(2)  # let the basemap finish drawing, for the picture only
    driver.save_screenshot(path)


def main():
    with open(os.path.join(REPO, "web-client", "basemap.json"), encoding="utf-8") as f:
        streets = [line for feat in json.load(f)["features"] if feat["properties"]["class"] == "street"
                   for line in feat["geometry"]["coordinates"]]
    route = max(streets, key=line_length)
    length = line_length(route)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    data = tempfile.mkdtemp(prefix="trackhub-stale-shots-")
    hub = subprocess.Popen([f"{BIN}/trackhub", "serve", "--listen", f"127.0.0.1:{port}", "--data", data,
                            "--jwt-secret", SECRET, "--stale-after", "5s"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    assert "listening on" in hub.stdout.readline()
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800",
                 "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        admin = token("admin")
        post(base, "/v1/trips", {"id": TRIP, "route": route, "rider": {"id": "rider-7", "name": "Alex"}}, admin)
        link = post(base, f"/v1/trips/{TRIP}/share", {}, admin)
        ws = connect(f"ws://127.0.0.1:{port}/v1/ws?token={token('courier')}", subprotocols=["trackhub.v1"])
        t0 = int(time.time() * 1000) - 10 * 60 * 1000
        # A rider at 5 m/s, 40 % of the way, whose phone then goes quiet.
        for seq, along in enumerate([0, length * 0.1, length * 0.2, length * 0.3, length * 0.4], start=1):
            p = point_along(route, along)
            ws.send(json.dumps({"op": "fix", "trip": TRIP, "lat": p[1], "lon": p[0], "battery": 23,
                                "ts": t0 + seq * int(length * 0.1 / 5 * 1000), "seq": seq, "duration_ms": 1000, "id": seq}))
            while json.loads(ws.recv(timeout=10)).get("re") != seq:
                pass
        trip_view = f"{base}/trips/{TRIP}?token={token('admin')}"
        shoot(driver, trip_view, (1280, 800), os.path.join(REPO, "docs", "trip-view-stale.png"), LAST_UPDATE_IN_MINUTES)
        shoot(driver, trip_view, (390, 844), os.path.join(REPO, "docs", "trip-view-stale-phone.png"), LAST_UPDATE_IN_MINUTES)
        shoot(driver, base + link["url"], (1280, 800), os.path.join(REPO, "docs", "share-page-stale.png"), LAST_UPDATE_IN_MINUTES)
        shoot(driver, base + link["url"], (390, 844), os.path.join(REPO, "docs", "share-page-stale-phone.png"), LAST_UPDATE_IN_MINUTES)
        ws.close()
    finally:
        driver.quit()
        hub.terminate()
        hub.wait(timeout=20)
    print("wrote docs/trip-view-stale.png, docs/trip-view-stale-phone.png, docs/share-page-stale.png and docs/share-page-stale-phone.png")


if __name__ == "__main__":
    sys.exit(main())
