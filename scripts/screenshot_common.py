"""What the screenshot scripts (screenshots.py, share_screenshots.py, stale_screenshots.py,
stop_screenshots.py) share: where the repository and the release build are, a throw-away
secret and tokens signed with it, metres along a [lon, lat] line, the longest street of the
sample roads (central Helsinki, where the offline vector basemap has streets), the release hub
on a free port, a JSON request to it, and headless Chromium kept offline (every host name but
127.0.0.1 fails to resolve, so the map tiles fail and the streets are the vector basemap),
a page's screenshot once it is drawn, and a courier's fixes along a route.
"""
import contextlib
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
from selenium.webdriver.support.ui import WebDriverWait
from websockets.sync.client import connect

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BIN = subprocess.check_output(["swift", "build", "-c", "release", "--show-bin-path"], cwd=REPO, text=True).strip()
SECRET = "screenshot-secret-at-least-32-bytes-long"


sys.path.insert(0, os.path.join(REPO, "tests-py", "browser"))
from line_geometry import line_length, point_along  # noqa: E402,F401  (the screenshot scripts use them)


def helsinki_route():
    """The longest street of the sample roads (web-client/basemap.json), [lon, lat] points."""
    with open(os.path.join(REPO, "web-client", "basemap.json"), encoding="utf-8") as f:
        streets = [line for feat in json.load(f)["features"] if feat["properties"]["class"] == "street"
                   for line in feat["geometry"]["coordinates"]]
    return max(streets, key=line_length)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def token(scope):
    return subprocess.check_output([f"{BIN}/trackhub", "token", "--secret", SECRET, "--scope", scope, "--trip", "*"], text=True).strip()


def http(base, method, path, bearer, body=None):
    """A JSON request to the hub at `base` with a bearer token; the JSON answer."""
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {bearer}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def post(base, path, body, bearer):
    return http(base, "POST", path, bearer, body)


def start_hub(port, data_prefix, *serve_args):
    """`trackhub serve` of the release build on 127.0.0.1:`port` with a temporary data directory
    (named `data_prefix`…) and `serve_args`, once it says it is listening."""
    data = tempfile.mkdtemp(prefix=data_prefix)
    hub = subprocess.Popen([f"{BIN}/trackhub", "serve", "--listen", f"127.0.0.1:{port}", "--data", data, *serve_args],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    assert "listening on" in hub.stdout.readline()
    return hub


def start_chromium():
    """Headless Chromium at 1280 x 800, offline."""
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800",
                 "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


@contextlib.contextmanager
def hub_and_browser(data_prefix, *serve_args):
    """The release hub on a free port (`start_hub`) and Chromium (`start_chromium`), both ended
    afterwards: (port, the hub's base URL, the driver)."""
    port = free_port()
    hub = start_hub(port, data_prefix, *serve_args)
    driver = start_chromium()
    try:
        yield port, f"http://127.0.0.1:{port}", driver
    finally:
        driver.quit()
        hub.terminate()
        hub.wait(timeout=20)


def size_to(driver, size):
    """The window's content (not the window) is `size`, (width, height)."""
    driver.set_window_size(*size)
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight];")
    driver.set_window_size(2 * size[0] - inner[0], 2 * size[1] - inner[1])


BASEMAP_DRAWN = "const b = window.trackhubBasemap; return !!b && b.state === 'vector' && b.linesDrawn > 0;"
MARKER_AND_BASEMAP_DRAWN = ("const m = document.querySelector(\"[data-testid='rider-marker']\");"
                            "const b = window.trackhubBasemap; return !!m && !!b && b.state === 'vector' && b.linesDrawn > 0;")


def wait_script(driver, js_condition, timeout=30):
    """Until the page's script `js_condition` returns true."""
    WebDriverWait(driver, timeout).until(lambda d: d.execute_script(js_condition))


def shoot(driver, url, size, path, ready, drawn=MARKER_AND_BASEMAP_DRAWN, timeout=30):
    """Opens `url` with the content at `size`; once `drawn` (30 s) and then `ready` (`timeout`)
    say so in the page, writes its screenshot to `path`."""
    size_to(driver, size)
    driver.get(url)
    wait_script(driver, drawn)
    wait_script(driver, ready, timeout)
    time.sleep(2)  # let the marker settle and the basemap finish drawing, for the picture only
    driver.save_screenshot(path)


def send_fixes(port, trip, route, alongs, step_ms, **fields):
    """A courier's `fix` ops at `alongs` metres along `route`, `step_ms` apart in its time
    (ending ten minutes ago's start), each with `fields`, each ack awaited; the courier's
    WebSocket, open."""
    ws = connect(f"ws://127.0.0.1:{port}/v1/ws?token={token('courier')}", subprotocols=["trackhub.v1"])
    t0 = int(time.time() * 1000) - 10 * 60 * 1000
    for seq, along in enumerate(alongs, start=1):
        p = point_along(route, along)
        ws.send(json.dumps({"op": "fix", "trip": trip, "lat": p[1], "lon": p[0], **fields,
                            "ts": t0 + seq * step_ms, "seq": seq, "duration_ms": 1000, "id": seq}))
        while json.loads(ws.recv(timeout=10)).get("re") != seq:
            pass
    return ws
