#!/usr/bin/env python3
"""Takes the README's screenshots of the customer's page of a share link (/t/{token}).

Starts the release hub secured with a throw-away secret, creates a trip along the longest
street of the sample roads (central Helsinki, where the offline vector basemap has streets)
with a rider named Alex, issues a share link (POST /v1/trips/{id}/share), drives the trip
part of the way with `fix` ops, and writes docs/share-page.png (1280 x 800) and
docs/share-page-phone.png (390 x 844) from headless Chromium, kept offline like
scripts/screenshots.py (the tiles fail, so the streets are the vector basemap). Run after
`swift build -c release`:

    python3 scripts/share_screenshots.py
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


def post(base, path, body, bearer):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {bearer}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def shoot(driver, url, size, path):
    driver.set_window_size(*size)
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight];")
    driver.set_window_size(2 * size[0] - inner[0], 2 * size[1] - inner[1])
    driver.get(url)
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "const m = document.querySelector(\"[data-testid='rider-marker']\");"
        "const b = window.trackhubBasemap; return !!m && !!b && b.state === 'vector' && b.linesDrawn > 0;"))
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
        "return /Arriving in/.test(document.querySelector(\"[data-testid='eta']\").textContent);"))
    time.sleep(2)  # let the marker settle and the basemap finish drawing, for the picture only
    driver.save_screenshot(path)


def main():
    with open(os.path.join(REPO, "web-client", "basemap.json"), encoding="utf-8") as f:
        streets = [line for feat in json.load(f)["features"] if feat["properties"]["class"] == "street"
                   for line in feat["geometry"]["coordinates"]]
    route = max(streets, key=line_length)
    length = line_length(route)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    data = tempfile.mkdtemp(prefix="trackhub-share-shots-")
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
        post(base, "/v1/trips", {"id": "order-1042", "route": route, "rider": {"id": "rider-7", "name": "Alex"}}, admin)
        link = post(base, "/v1/trips/order-1042/share", {}, admin)
        ws = connect(f"ws://127.0.0.1:{port}/v1/ws?token={token('courier')}", subprotocols=["trackhub.v1"])
        t0 = int(time.time() * 1000) - 10 * 60 * 1000
        # A rider at 5 m/s, 40 % of the way: the ETA is minutes away.
        for seq, along in enumerate([0, length * 0.2, length * 0.4], start=1):
            p = point_along(route, along)
            ws.send(json.dumps({"op": "fix", "trip": "order-1042", "lat": p[1], "lon": p[0],
                                "ts": t0 + seq * int(length * 0.2 / 5 * 1000), "seq": seq, "duration_ms": 1000, "id": seq}))
            while json.loads(ws.recv(timeout=10)).get("re") != seq:
                pass
        shoot(driver, base + link["url"], (1280, 800), os.path.join(REPO, "docs", "share-page.png"))
        shoot(driver, base + link["url"], (390, 844), os.path.join(REPO, "docs", "share-page-phone.png"))
        ws.close()
    finally:
        driver.quit()
        hub.terminate()
        hub.wait(timeout=20)
    print("wrote docs/share-page.png and docs/share-page-phone.png")


if __name__ == "__main__":
    sys.exit(main())
