"""Browser tests of the web client (headless Chromium through Selenium).

The hub under test is the real release binary that TRACKHUB_BIN names (see hubs.py):
one `trackhub serve` per test on an ephemeral loopback port with a temporary `--data`.
Trips are created with POST /v1/trips and driven with `fix`/`proceed` ops. The hub
animates in real time, so conditions are awaited with deadlines (WebDriverWait), never
with sleeps. Screenshots go to test-artifacts/ at the repository root.

Run:  TRACKHUB_BIN=$(swift build -c release --show-bin-path) python3 -m unittest discover -s tests-py -p 'test_*.py' -v
  or  cd tests-py && TRACKHUB_BIN=... python3 -m unittest browser.test_web_client -v
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
ARTIFACTS = os.path.join(REPO, "test-artifacts")

from hubs import SKIP_MESSAGE, Courier, hub_under_test, trackhub_binary  # noqa: E402

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
    HAVE_SELENIUM = True
except ImportError:  # pragma: no cover
    HAVE_SELENIUM = False


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


CHROMIUM = find_chromium()
CHROMEDRIVER = shutil.which("chromedriver")
SKIP_REASON = None
if not HAVE_SELENIUM:
    SKIP_REASON = "selenium is not installed (pip install selenium==4.25.0)"
elif not CHROMIUM or not CHROMEDRIVER:
    SKIP_REASON = "chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
elif trackhub_binary() is None:
    SKIP_REASON = SKIP_MESSAGE
elif not os.path.isfile("/usr/share/javascript/leaflet/leaflet.js"):
    SKIP_REASON = "libjs-leaflet is not installed (apt-get install libjs-leaflet)"

# The secret of the hubs that tests marked @secured run with.
SECRET = "browser-test-secret-at-least-32-bytes"


def secured(test):
    """Runs the test against a hub started with `--jwt-secret SECRET` (PROTOCOL 2)."""
    test.jwt_secret = SECRET
    return test


# ---- geometry helpers (metres along a [lon, lat] line) ---------------------------------
from line_geometry import dist_m, line_length, point_along  # noqa: E402,F401  (the pages' tests use them as base.*)


# A ~1.6 km route through Lisbon, a stop near its middle.
ROUTE = [[-9.1500, 38.7100], [-9.1440, 38.7130], [-9.1390, 38.7170], [-9.1330, 38.7190], [-9.1290, 38.7230]]
ROUTE_LEN = line_length(ROUTE)
STOP_ALONG = 800.0
STOP = point_along(ROUTE, STOP_ALONG)


# The vector basemap (web-client/basemap.json, from data/samples/ by scripts/make_basemap.py).
BASEMAP_FILE = os.path.join(REPO, "web-client", "basemap.json")


def basemap_lines(cls):
    with open(BASEMAP_FILE, encoding="utf-8") as f:
        features = json.load(f)["features"]
    return [line for feat in features if feat["properties"]["class"] == cls for line in feat["geometry"]["coordinates"]]


HELSINKI_STREETS = basemap_lines("street")
# A trip along the longest street of the sample roads (central Helsinki).
HELSINKI_ROUTE = max(HELSINKI_STREETS, key=line_length)


def tile_png(rgb=(170, 211, 223)):
    """A 256 x 256 PNG of one colour."""
    raw = b"".join(b"\x00" + bytes(rgb) * 256 for _ in range(256))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 256, 256, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


class TileServer:
    """A tile server on a loopback port: HTTPS (the page's CSP takes images from https: only)
    with a throw-away self-signed certificate; every /{z}/{x}/{y}.png is the same PNG."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="trackhub-tiles-")
        cert, key = os.path.join(self.dir, "cert.pem"), os.path.join(self.dir, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                        "-days", "1", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True, timeout=60)
        png = tile_png()
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append(self.path)
                ok = re.fullmatch(r"/\d+/\d+/\d+\.png", self.path) is not None
                self.send_response(200 if ok else 404)
                self.send_header("Content-Type", "image/png" if ok else "text/plain")
                body = png if ok else b"not found"
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.template = f"https://127.0.0.1:{self.httpd.server_address[1]}/{{z}}/{{x}}/{{y}}.png"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        shutil.rmtree(self.dir, ignore_errors=True)


# Reads the basemap's canvas tiles (of the zoom shown) where the given roads are: `road`, the
# alpha at a road's vertex in view, and `clear`, the alpha at a point of the map at least
# 14 px from every road, both null when there is no such point.
BASEMAP_PROBE = """
const lines = arguments[0];
const b = window.trackhubBasemap;
const mapEl = document.querySelector('.map');
const rect = mapEl.getBoundingClientRect();
const z = String(b.zoom());
const canvases = [...mapEl.querySelectorAll("canvas[data-testid='basemap-tile']")].filter(c => c.dataset.z === z);
function alphaAt(x, y) {
  for (const c of canvases) {
    const r = c.getBoundingClientRect();
    if (x >= r.left && x < r.right && y >= r.top && y < r.bottom) {
      const px = Math.floor((x - r.left) * c.width / r.width), py = Math.floor((y - r.top) * c.height / r.height);
      return c.getContext('2d').getImageData(px, py, 1, 1).data[3];
    }
  }
  return null;
}
const inside = ([x, y]) => x >= rect.left + 2 && x < rect.right - 2 && y >= rect.top + 2 && y < rect.bottom - 2;
const screen = lines.map(l => l.map(p => b.toScreen(p[0], p[1])));
let road = null;
for (const l of screen) { for (const q of l) if (road === null && inside(q)) road = alphaAt(q[0], q[1]); }
function distToSeg(p, a, c) {
  const dx = c[0] - a[0], dy = c[1] - a[1];
  const t = dx || dy ? Math.max(0, Math.min(1, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / (dx * dx + dy * dy))) : 0;
  return Math.hypot(p[0] - a[0] - t * dx, p[1] - a[1] - t * dy);
}
let clear = null;
outer: for (let y = rect.top + 8; y < rect.bottom - 8; y += 16) {
  for (let x = rect.left + 8; x < rect.right - 8; x += 16) {
    let near = false;
    for (const l of screen) { for (let i = 1; i < l.length && !near; i++) near = distToSeg([x, y], l[i - 1], l[i]) < 14; if (near) break; }
    if (!near && alphaAt(x, y) !== null) { clear = alphaAt(x, y); break outer; }
  }
}
const perTile = canvases.map(c => parseInt(c.dataset.lines));
return { road, clear, perTile, tiles: canvases.length, lines: b.lines };
"""


def unique(prefix):
    return f"{prefix}-{int(time.time() * 1000) % 10_000_000}"


def start_chromium(width=1280, height=900, browser_logs=False):
    """Headless Chromium for the page tests (every browser suite here starts it this way), with
    the artifacts folder made. A Chromium that cannot start skips the suite. Records what the
    pages' Content-Security-Policy refuses (the script runs before the page's own and is not
    subject to it) in `window.__csp`: each test ends with none."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--no-first-run", "--no-default-browser-check",
                # no internet here: make tile requests fail at once instead of waiting on DNS
                "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
        opts.add_argument(arg)
    if browser_logs:
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    except WebDriverException as e:
        raise unittest.SkipTest(f"cannot start headless chromium: {e.msg}")
    driver.set_page_load_timeout(30)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.__csp = [];
        document.addEventListener('securitypolicyviolation', (e) => {
          window.__csp.push(`${e.effectiveDirective} ${e.blockedURI}`);
        });"""})
    return driver


class PageTestHelpers:
    """What the browser suites' test classes share (mixed in before unittest.TestCase): the
    class's Chromium in `driver` (quit after the class), the test's hub in `hub` and its
    couriers in `couriers`, and helpers to size the window, take screenshots, await conditions
    and read the page's hooks (data-testid). Class settings:
      SHOT_PREFIX   screenshots are test-artifacts/{SHOT_PREFIX}-{w}x{h}-{name}.png at the size
                    `use_size` set (`self.size`); None: {test method}-{name}.png
      WAIT_S        the default deadline of `wait`
      PROGRESS      the progress bar `progress` reads"""

    driver = None
    SHOT_PREFIX = None
    WAIT_S = 15
    PROGRESS = "[role='progressbar']"

    @classmethod
    def tearDownClass(cls):
        if cls.driver:
            cls.driver.quit()

    def failed(self):
        """Whether this test has failed or erred (for tearDown)."""
        outcome = getattr(self, "_outcome", None)
        result = getattr(outcome, "result", None) if outcome is not None else None
        return result is not None and any(t is self for t, _ in (result.failures + result.errors)[-2:])

    def report_failure(self):
        """A screenshot and the browser's last log lines, for a failed test."""
        self.shot("FAILED")
        try:
            for entry in self.driver.get_log("browser")[-30:]:
                print("browser:", entry.get("level"), entry.get("message"), file=sys.stderr)
        except Exception:
            pass

    def courier(self):
        c = Courier(self.hub.ws_url, token=self.hub.courier_token)
        self.couriers.append(c)
        return c

    def use_size(self, size):
        """The window's content is the size asked for (a phone's viewport at 390 x 844)."""
        self.size = size
        self.driver.set_window_size(*size)
        inner = self.driver.execute_script("return [window.innerWidth, window.innerHeight];")
        if inner != list(size):
            self.driver.set_window_size(2 * size[0] - inner[0], 2 * size[1] - inner[1])

    def shot(self, name):
        if self.SHOT_PREFIX is None:
            file = f"{self.id().split('.')[-1]}-{name}.png"
        else:
            file = f"{self.SHOT_PREFIX}-{self.size[0]}x{self.size[1]}-{name}.png"
        try:
            self.driver.save_screenshot(os.path.join(ARTIFACTS, file))
        except Exception:
            pass

    def wait(self, cond, timeout=None, message=""):
        """`cond()` truthy within `timeout` seconds (WAIT_S), else a failure naming `message`
        (a string, or a function giving it at the time)."""
        timeout = self.WAIT_S if timeout is None else timeout
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(lambda d: cond())
        except TimeoutException:
            self.shot("timeout")
            raise AssertionError(f"timed out after {timeout}s waiting for: {message() if callable(message) else message}")

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def attr(self, testid, name):
        return self.js("const e = document.querySelector(`[data-testid='${arguments[0]}']`); return e ? e.getAttribute(arguments[1]) : null;",
                       testid, name)

    def text(self, testid):
        return self.js("const e = document.querySelector(`[data-testid='${arguments[0]}']`); return e ? e.textContent.trim() : null;", testid)

    def marker(self):
        """[lon, lat] of the rider marker, or None while there is none."""
        return self.js("""const e = document.querySelector("[data-testid='rider-marker']");
                          if (!e || !e.hasAttribute('data-lat')) return null;
                          return [parseFloat(e.getAttribute('data-lon')), parseFloat(e.getAttribute('data-lat'))];""")

    def progress(self):
        return self.js("""const e = document.querySelector(arguments[0]);
                          return e && e.hasAttribute('aria-valuenow') ? parseInt(e.getAttribute('aria-valuenow')) : null;""",
                       self.PROGRESS)


@unittest.skipIf(SKIP_REASON is not None, SKIP_REASON or "")
class WebClientTest(PageTestHelpers, unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.driver = start_chromium(browser_logs=True)

    def setUp(self):
        self.hub = hub_under_test(getattr(getattr(self, self._testMethodName), "jwt_secret", None))
        self.couriers = []

    def tearDown(self):
        failed = self.failed()
        if failed:
            self.report_failure()
        for c in self.couriers:
            c.close()
        self.hub.close()
        if not failed:
            # The pages work under the CSP the hub serves them with: nothing was refused.
            self.assertEqual(self.js("return window.__csp || [];"), [], "CSP violations")

    # ---- helpers ------------------------------------------------------------------------
    def open(self, path):
        self.driver.get(self.hub.base_url + path)

    def lengths(self):
        d = self.attr("route-done", "data-length-m")
        left = self.attr("route-left", "data-length-m")
        return (float(d) if d is not None else None, float(left) if left is not None else None)

    # ---- tests -----------------------------------------------------------------------------
    def test_trip_view_follows_the_courier(self):
        trip = unique("trip")
        self.hub.create_trip(trip, route=ROUTE, waypoints=[{"lat": STOP[1], "lon": STOP[0]}],
                             rider={"id": "r-ana", "name": "Ana Courier"})
        courier = self.courier()
        self.open(f"/trips/{trip}")
        self.wait(lambda: self.attr("connection", "data-state") == "open", message="connection open")
        self.wait(lambda: self.attr("trip-status", "data-status") == "pending", message="status pending")
        self.assertEqual(self.text("eta"), "—")
        self.assertIsNone(self.progress(), "no aria-valuenow while progress is null")
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='waypoint']")), 1)
        wp = self.driver.find_element(By.CSS_SELECTOR, "[data-testid='waypoint']")
        self.assertEqual(wp.get_attribute("data-index"), "0")
        self.assertEqual(wp.get_attribute("data-visited"), "false")
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='destination']")), 1)
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='rider-marker']"), [])
        follow = self.driver.find_element(By.CSS_SELECTOR, "[data-testid='follow']")
        self.assertEqual(follow.get_attribute("aria-pressed"), "true")
        self.shot("pending")

        t0 = int(time.time() * 1000) - 15 * 60 * 1000
        step_ms = 20_000  # 200 m per 20 s: 10 m/s
        seq = 0

        def send(along, duration_ms=1200):
            nonlocal seq
            seq += 1
            p = point_along(ROUTE, along)
            ack = courier.fix(trip, p[0], p[1], t0 + seq * step_ms, seq=seq, duration_ms=duration_ms)
            self.assertEqual(ack.get("type"), "ack", ack)
            return p, ack

        # First fix: the marker appears there at once.
        p, ack = send(0)
        self.assertTrue(ack["applied"], ack)
        self.wait(lambda: self.marker() is not None and dist_m(self.marker(), p) < 3, message="marker at first fix")
        self.wait(lambda: self.attr("trip-status", "data-status") == "moving", message="status moving")
        label = self.attr("rider-marker", "aria-label")
        self.assertIn("Ana Courier", label)

        # Along the route: the marker glides toward each fix; done grows, left shrinks.
        prev_done = -1.0
        for along in (200, 400, 600):
            before = self.marker()
            p, ack = send(along, duration_ms=1500)
            self.assertTrue(ack["applied"], ack)
            # It is drawn between the two fixes while animating...
            self.wait(lambda: self.marker() is not None and 5 < dist_m(self.marker(), before) and dist_m(self.marker(), p) > 5,
                      timeout=5, message=f"marker moving toward fix at {along} m")
            # ...and reaches the fix.
            self.wait(lambda: dist_m(self.marker(), p) < 5, timeout=10, message=f"marker at fix {along} m")
            self.wait(lambda: self.lengths()[0] is not None and abs(self.lengths()[0] - along) < 15,
                      message=f"route-done ≈ {along} m (got {self.lengths()})")
            done, left = self.lengths()
            self.assertGreater(done, prev_done)
            self.assertAlmostEqual(done + left, ROUTE_LEN, delta=15)
            prev_done = done
        self.wait(lambda: re.fullmatch(r"Arriving in \d+ min", self.text("eta") or "") is not None,
                  message=f"ETA text (got {self.text('eta')!r})")
        pct = self.progress()
        self.assertIsNotNone(pct)
        self.assertAlmostEqual(pct, 100 * 600 / ROUTE_LEN, delta=3)
        self.shot("moving")

        # To the stop: holding there, the waypoint is visited, fixes are held.
        p, ack = send(STOP_ALONG)
        self.wait(lambda: self.attr("trip-status", "data-status") == "holding", message="holding at the stop")
        self.assertIn("Holding at stop 1", self.text("trip-status"))
        self.wait(lambda: self.driver.find_element(By.CSS_SELECTOR, "[data-testid='waypoint']").get_attribute("data-visited") == "true",
                  message="waypoint visited")
        _, ack = send(STOP_ALONG + 150)
        self.assertFalse(ack["applied"])
        self.assertEqual(ack.get("reason"), "holding")
        self.shot("holding")

        # Proceed, then to the end: arrived.
        self.assertEqual(courier.proceed(trip).get("type"), "ack")
        self.wait(lambda: self.attr("trip-status", "data-status") == "moving", message="moving again after proceed")
        for along in (1000, 1200, 1400, ROUTE_LEN):
            p, ack = send(along, duration_ms=800)
            self.assertTrue(ack["applied"], ack)
        self.wait(lambda: self.attr("trip-status", "data-status") == "arrived", message="arrived")
        self.wait(lambda: self.text("eta") == "Arrived", message="Arrived text")
        self.wait(lambda: self.progress() == 100, message="progress 100")
        self.wait(lambda: dist_m(self.marker(), ROUTE[-1]) < 5, message="marker at destination")
        done, left = self.lengths()
        self.assertAlmostEqual(done, ROUTE_LEN, delta=15)
        self.assertLess(left, 15)

        # Toggles.
        follow.click()
        self.assertEqual(follow.get_attribute("aria-pressed"), "false")
        trail = self.driver.find_element(By.CSS_SELECTOR, "[data-testid='trail-toggle']")
        trail.click()
        self.wait(lambda: len(self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='trail-fix']")) >= 9,
                  message="trail breadcrumbs")
        refused = self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='trail-fix'][data-reason='holding']")
        self.assertEqual(len(refused), 1)
        self.shot("arrived")

    def test_jump_is_placed_without_sliding(self):
        trip = unique("jump")
        self.hub.create_trip(trip, route=ROUTE)
        courier = self.courier()
        self.open(f"/trips/{trip}")
        self.wait(lambda: self.attr("connection", "data-state") == "open", message="connection open")
        t0 = int(time.time() * 1000) - 15 * 60 * 1000
        start = point_along(ROUTE, 100)
        # speed_mps 0: the catch-up limit is its floor (5 m/s), so 1 100 m asked for in 200 ms
        # would take 220 s: the hub jumps instead.
        self.assertTrue(courier.fix(trip, start[0], start[1], t0, seq=1, speed_mps=0)["applied"])
        self.wait(lambda: self.marker() is not None and dist_m(self.marker(), start) < 3, message="marker at the first fix")
        # Every position the page draws from now on.
        self.js("""const e = document.querySelector("[data-testid='rider-marker']");
                   window.__drawn = [];
                   new MutationObserver(() => window.__drawn.push([parseFloat(e.getAttribute('data-lon')), parseFloat(e.getAttribute('data-lat'))]))
                     .observe(e, { attributes: true, attributeFilter: ['data-lat', 'data-lon'] });""")
        target = point_along(ROUTE, 1200)
        ack = courier.fix(trip, target[0], target[1], t0 + 30_000, seq=2, duration_ms=200, speed_mps=0)
        self.assertTrue(ack["applied"], ack)
        self.wait(lambda: dist_m(self.marker(), target) < 3, timeout=5, message="marker at the jump's target")
        self.assertEqual(self.attr("rider-marker", "data-jumps"), "1")
        drawn = self.js("return window.__drawn")
        between = [p for p in drawn if dist_m(p, start) > 3 and dist_m(p, target) > 3]
        self.assertEqual(between, [], "the marker slid through intermediate positions")
        self.shot("jumped")

    def test_arrived_short_of_the_door_says_arrived_at_100(self):
        trip = unique("door")
        self.hub.create_trip(trip, route=ROUTE)
        courier = self.courier()
        self.open(f"/trips/{trip}")
        self.wait(lambda: self.attr("connection", "data-state") == "open", message="connection open")
        t0 = int(time.time() * 1000) - 15 * 60 * 1000
        for seq, along in enumerate((ROUTE_LEN - 400, ROUTE_LEN - 200, ROUTE_LEN - 30), start=1):
            p = point_along(ROUTE, along)
            self.assertTrue(courier.fix(trip, p[0], p[1], t0 + seq * 20_000, seq=seq, duration_ms=800)["applied"])
        # The last fix is 30 m short: within arrival_buffer_m, so the trip arrives there.
        self.wait(lambda: self.attr("trip-status", "data-status") == "arrived", message="arrived")
        self.wait(lambda: self.text("eta") == "Arrived", message="Arrived text")
        self.wait(lambda: self.progress() == 100, message="progress 100 on the trip view")
        # PROTOCOL 6.7: the marker goes on to the destination.
        self.wait(lambda: dist_m(self.marker(), ROUTE[-1]) < 1, message="marker at the destination")
        self.shot("arrived")
        self.open("/")
        row = f"[data-testid='trip-row'][data-trip='{trip}']"
        self.wait(lambda: self.js(f"return document.querySelector(`{row}`)?.getAttribute('data-status') ?? null") == "arrived",
                  message="arrived in the list")
        self.assertEqual(self.js(f"return document.querySelector(`{row} [role='progressbar']`).getAttribute('aria-valuenow')"), "100")
        self.assertEqual(self.js(f"return document.querySelector(`{row} .trip-eta`).textContent.trim()"), "Arrived")

    def test_a_new_route_says_rerouted_for_a_moment(self):
        trip = unique("rerouted")
        self.hub.create_trip(trip, route=ROUTE)
        self.open(f"/trips/{trip}")
        self.wait(lambda: self.attr("connection", "data-state") == "open", message="connection open")
        new_route = [ROUTE[0], [-9.1450, 38.7160], ROUTE[-1]]
        req = urllib.request.Request(self.hub.base_url + f"/v1/trips/{trip}/route", method="PUT",
                                     data=json.dumps({"route": new_route}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            self.assertEqual(r.status, 200)
        note = "const e = document.getElementById('rerouted-note'); return e && !e.hidden ? e.textContent : null;"
        self.wait(lambda: (self.js(note) or "").startswith("Rerouted"), message="the Rerouted note")
        self.assertEqual(self.js("return document.getElementById('rerouted-note').dataset.reason"), "client")
        self.wait(lambda: self.js(note) is None, message="the note goes away")

    def test_trips_list(self):
        a, b = unique("list-a"), unique("list-b")
        self.hub.create_trip(a, route=ROUTE, rider={"id": "r1", "name": "Bea"})
        self.hub.create_trip(b, route=ROUTE)
        self.open("/")
        row = lambda tid: self.js("return document.querySelector(`[data-testid='trip-row'][data-trip='${arguments[0]}']`)?.getAttribute('data-status') ?? null", tid)  # noqa: E731
        self.wait(lambda: row(a) == "pending" and row(b) == "pending", message="both trips listed as pending")
        courier = self.courier()
        p = point_along(ROUTE, 0)
        courier.fix(a, p[0], p[1], int(time.time() * 1000) - 60_000, seq=1)
        self.wait(lambda: row(a) == "moving", timeout=10, message="list polls the new status")
        href = self.js("return document.querySelector(`[data-testid='trip-row'][data-trip='${arguments[0]}'] a`).getAttribute('href')", a)
        self.assertEqual(href, f"/trips/{a}")
        self.shot("list")
        self.driver.find_element(By.CSS_SELECTOR, f"[data-testid='trip-row'][data-trip='{a}'] a").click()
        self.wait(lambda: self.attr("trip-status", "data-status") == "moving", message="trip page from the list")

    @secured
    def test_pages_carry_the_token_to_a_secured_hub(self):
        """?token= goes on the list's GET /v1/trips (as Bearer), on its links, and on the
        trip page's WebSocket: a secured hub (PROTOCOL 2) refuses each without it, so the
        pages working at all is the proof."""
        a, b, other = unique("tok-a"), unique("tok-b"), unique("tok-other")
        for tid in (a, b, other):
            self.hub.create_trip(tid, route=ROUTE)
        token = self.hub.token(["viewer"], trips=[a, b])
        note = lambda: self.js("return document.querySelector('.list-note')?.textContent ?? ''")  # noqa: E731
        # Without a token the hub answers 401: the page says so and lists nothing.
        self.open("/")
        self.wait(lambda: "Not allowed" in note(), message=f"the list says it is not allowed (got {note()!r})")
        self.assertEqual(self.js("return document.querySelectorAll(\"[data-testid='trip-row']\").length"), 0)
        # With it: the token's trips, and only those.
        self.open(f"/?token={token}")
        row = lambda tid: self.js("return document.querySelector(`[data-testid='trip-row'][data-trip='${arguments[0]}']`)?.getAttribute('data-status') ?? null", tid)  # noqa: E731
        self.wait(lambda: row(a) == "pending" and row(b) == "pending", message="the token's trips listed as pending")
        self.assertIsNone(row(other), "a trip outside the token is listed")
        self.assertNotIn("Not allowed", note())
        courier = self.courier()
        p = point_along(ROUTE, 0)
        courier.fix(a, p[0], p[1], int(time.time() * 1000) - 60_000, seq=1)
        self.wait(lambda: row(a) == "moving", timeout=10, message="list polls the new status")
        href = self.js("return document.querySelector(`[data-testid='trip-row'][data-trip='${arguments[0]}'] a`).getAttribute('href')", a)
        self.assertEqual(href, f"/trips/{a}?token={token}")
        self.shot("list")
        self.driver.find_element(By.CSS_SELECTOR, f"[data-testid='trip-row'][data-trip='{a}'] a").click()
        # The trip page's status comes only over the WebSocket (snapshot of its subscription).
        self.wait(lambda: self.attr("trip-status", "data-status") == "moving", message="trip page from the list, subscribed")
        self.assertEqual(self.attr("connection", "data-state"), "open")
        # The same page without the token: the subscription is refused and the page says so.
        self.open(f"/trips/{a}")
        banner = lambda: self.js("return document.querySelector('.banner')?.textContent ?? ''")  # noqa: E731
        self.wait(lambda: "Not allowed to follow this trip" in banner(), message=f"refused without the token (got {banner()!r})")
        self.assertNotEqual(self.attr("trip-status", "data-status"), "moving")

    def test_fleet_clusters(self):
        courier = self.courier()
        now = int(time.time() * 1000) - 60_000
        lisbon = [[-9.1400 + 0.004 * i, 38.7200 + 0.002 * (i % 2)] for i in range(5)]
        porto = [[-8.6100 + 0.004 * i, 41.1500] for i in range(3)]
        prefix = unique("fleet")
        for i, pt in enumerate(lisbon + porto):
            tid = f"{prefix}-{i}"
            self.hub.create_trip(tid, route=[pt, [pt[0] + 0.01, pt[1] + 0.01]])
            ack = courier.fix(tid, pt[0], pt[1], now, seq=1)
            self.assertTrue(ack.get("applied"), ack)
        total = 8

        self.open("/fleet")
        self.wait(lambda: self.attr("connection", "data-state") == "open", message="connection open")
        self.wait(lambda: self.attr("fleet-total", "data-total") == str(total), message="fleet total")
        self.assertIn(str(total), self.text("fleet-total"))

        def items():
            return self.js("""return [...document.querySelectorAll("[data-testid='cluster'],[data-testid='fleet-rider']")].map(e => ({
                kind: e.dataset.testid, count: e.dataset.testid === 'cluster' ? parseInt(e.dataset.count) : 1,
                trip: e.dataset.trip || null, label: e.getAttribute('aria-label')}));""")

        # The fitted view shows everyone: the counts add up to the total, Lisbon is one bubble.
        self.wait(lambda: sum(i["count"] for i in items()) == total and any(i["count"] == 5 for i in items()),
                  message=f"bubbles adding up to {total} with a Lisbon bubble of 5 (got {items()})")
        for it in items():
            if it["kind"] == "cluster":
                self.assertIn(f"{it['count']} riders", it["label"])
        self.shot("fitted")

        # Enter on the Lisbon bubble zooms in; it splits.
        bubble = self.driver.find_element(By.CSS_SELECTOR, "[data-testid='cluster'][data-count='5']")
        self.assertEqual(bubble.get_attribute("tabindex"), "0")
        bubble.send_keys(Keys.ENTER)
        self.wait(lambda: len(items()) > 1 and sum(i["count"] for i in items()) == 5 and max(i["count"] for i in items()) < 5,
                  message=f"Lisbon bubble split after zooming in (got {items()})")
        self.shot("zoomed")

        # Deep zoom by URL: single riders; Enter on one opens its trip.
        self.open("/fleet?lat=38.7205&lon=-9.132&zoom=15")
        self.wait(lambda: len([i for i in items() if i["kind"] == "fleet-rider"]) == 5, message="5 single riders at zoom 15")
        rider = self.driver.find_element(By.CSS_SELECTOR, "[data-testid='fleet-rider']")
        tid = rider.get_attribute("data-trip")
        self.assertTrue(tid.startswith(prefix))
        rider.send_keys(Keys.ENTER)
        self.wait(lambda: self.driver.current_url.split("?")[0].endswith(f"/trips/{tid}"), message="rider opens its trip")
        self.wait(lambda: self.attr("trip-status", "data-status") == "moving", message="trip view of that rider")

    def test_connection_indicator_across_hub_restart(self):
        trip = unique("restart")
        self.hub.create_trip(trip, route=ROUTE, rider={"id": "r", "name": "Rui"})
        courier = self.courier()
        t0 = int(time.time() * 1000) - 10 * 60 * 1000
        p = point_along(ROUTE, 100)
        courier.fix(trip, p[0], p[1], t0, seq=1)
        self.open(f"/trips/{trip}")
        self.wait(lambda: self.attr("connection", "data-state") == "open", message="open")
        self.wait(lambda: self.marker() is not None and dist_m(self.marker(), p) < 5, message="marker shown")
        self.js("window.__reloadMark = 'same page';")

        # Record every state the indicator shows (the retries can be quick).
        self.js("""const el = document.querySelector("[data-testid='connection']");
                   window.__states = [el.dataset.state];
                   new MutationObserver(() => window.__states.push(el.dataset.state))
                     .observe(el, {attributes: true, attributeFilter: ['data-state']});""")
        states = lambda: self.js("return window.__states")  # noqa: E731

        def seen_in_order(*wanted):
            got, i = states(), 0
            for s in got:
                if i < len(wanted) and s == wanted[i]:
                    i += 1
            return i == len(wanted)

        courier.close()
        self.couriers.remove(courier)
        self.hub.stop()
        self.wait(lambda: seen_in_order("open", "closed"), message="closed after the hub stopped")
        self.shot("closed")
        self.wait(lambda: seen_in_order("open", "closed", "connecting"), timeout=15, message="connecting (retrying)")
        self.hub.start()
        self.wait(lambda: self.attr("connection", "data-state") == "open", timeout=20, message="open again after restart")
        self.assertTrue(seen_in_order("open", "closed", "connecting", "open"), states())
        self.assertEqual(self.js("return window.__reloadMark"), "same page", "the page was not reloaded")

        # The subscription was renewed: the marker follows new fixes.
        courier = self.courier()
        p2 = point_along(ROUTE, 300)
        ack = courier.fix(trip, p2[0], p2[1], t0 + 20_000, seq=2, duration_ms=500)
        self.assertTrue(ack.get("applied"), ack)
        self.wait(lambda: dist_m(self.marker(), p2) < 5, message="marker follows after the reconnect")
        self.shot("reopened")

    def test_client_modules_in_the_browser(self):
        """The standalone modules: SegmentAnimator interpolation, backoff, hub clock."""
        self.open("/")
        r = self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            Promise.all([import('/segment-animator.js'), import('/trackhub-client.js')]).then(([A, C]) => {
              const anim = new A.SegmentAnimator({ now: () => 0 });
              anim.reset({ lat: 0, lon: 0 }, 90);
              const rest = anim.positionAt(5);
              // a path of two equal legs east then north; 1000 ms from t0 = 1000
              anim.push({ path: [[0, 0], [0.01, 0], [0.01, 0.01]], t0: 1000, duration_ms: 1000 });
              const before = anim.positionAt(500), half = anim.positionAt(1500), q = anim.positionAt(1250),
                    end = anim.positionAt(5000);
              anim.push({ path: [[0.01, 0.01]], t0: 6000, duration_ms: 0 });
              const still = anim.positionAt(6001);
              const delays = [0, 1, 2, 3, 10, 20].map(n => C.backoffDelay(n, { base: 500, cap: 10000, random: () => 1 }));
              const lows = [0, 5].map(n => C.backoffDelay(n, { base: 500, cap: 10000, random: () => 0 }));
              const clock = new C.HubClock();
              clock.samplePong(10500, 1000, 1020);   // offset 10500 - 1010
              const off1 = clock.offset;
              clock.observe(20000, 1000);             // a message cannot come from the future
              done({ rest, before, half, q, end, still, delays, lows, off1, off2: clock.offset });
            }).catch(e => done({ error: String(e) }));
        """)
        self.assertNotIn("error", r, r)
        self.assertEqual((r["rest"]["lon"], r["rest"]["lat"], r["rest"]["bearing"]), (0, 0, 90))
        self.assertEqual((r["before"]["lon"], r["before"]["lat"]), (0, 0))
        self.assertAlmostEqual(r["half"]["lon"], 0.01, places=4)
        self.assertAlmostEqual(r["half"]["lat"], 0.0, places=4)
        self.assertAlmostEqual(r["q"]["lon"], 0.005, places=4)
        self.assertAlmostEqual(r["q"]["bearing"], 90, delta=0.5)
        self.assertTrue(r["q"]["moving"])
        self.assertEqual((r["end"]["lon"], r["end"]["lat"]), (0.01, 0.01))
        self.assertAlmostEqual(r["end"]["bearing"], 0, delta=0.5)
        self.assertFalse(r["end"]["moving"])
        self.assertAlmostEqual(r["still"]["bearing"], 0, delta=0.5, msg="a one-point segment keeps the bearing")
        self.assertEqual(r["delays"], [500, 1000, 2000, 4000, 10000, 10000])
        self.assertEqual(r["lows"], [250, 5000])
        self.assertEqual(r["off1"], 9490)
        self.assertEqual(r["off2"], 19000)

    # ---- the vector basemap -------------------------------------------------------------
    def basemap(self):
        return self.js("const b = window.trackhubBasemap; return b ? {state: b.state, reason: b.reason, lines: b.lines, "
                       "tilesDrawn: b.tilesDrawn, linesDrawn: b.linesDrawn, moving: b.moving, "
                       "tiles: b.tiles && {ok: b.tiles.totalOk, failed: b.tiles.totalFailed, settled: b.tiles.settled}} : null;")

    def wait_basemap_drawn(self):
        self.wait(lambda: (self.basemap() or {}).get("state") == "vector" and self.basemap()["linesDrawn"] > 0
                  and not self.basemap()["moving"], message=f"the basemap drew road lines (got {self.basemap()})")

    def credit(self):
        return self.js("const e = document.querySelector(\".leaflet-control-attribution [data-testid='basemap-credit']\");"
                       "return e ? e.textContent : null;")

    def assert_roads_painted(self):
        """The canvas is painted on a road and clear away from the roads, in the map's projection."""
        probe = self.js(BASEMAP_PROBE, HELSINKI_STREETS)
        self.assertIsNotNone(probe["road"], f"no road vertex in view: {probe}")
        self.assertGreater(probe["road"], 0, f"nothing drawn where a road is: {probe}")
        self.assertIsNotNone(probe["clear"], f"no point away from the roads in view: {probe}")
        self.assertEqual(probe["clear"], 0, f"drawn where no road is: {probe}")
        # Each tile draws only the lines that cross it.
        self.assertTrue(any(0 < n < probe["lines"] for n in probe["perTile"]), probe)
        return probe

    def test_basemap_when_tiles_cannot_load(self):
        """The run command offline: the default tiles (OpenStreetMap's) fail, the sample roads are drawn."""
        trip = unique("offline")
        self.hub.create_trip(trip, route=HELSINKI_ROUTE)
        self.open(f"/trips/{trip}")
        self.wait(lambda: float(self.attr("route-left", "data-length-m") or 0) > 0, message="the route drawn")
        self.wait_basemap_drawn()
        b = self.basemap()
        self.assertEqual(b["reason"], "tiles-failing")
        self.assertEqual(self.js("return document.getElementById('trip-map').dataset.basemap"), "vector")
        self.assertGreater(b["tiles"]["failed"], 0)
        self.assertEqual(b["tiles"]["ok"], 0)
        self.assertEqual(b["lines"], len(HELSINKI_STREETS) + len(basemap_lines("major")))
        self.assert_roads_painted()
        self.assertIn("OpenStreetMap contributors", self.credit() or "")
        # Under the route and the markers: in the tile pane, below the overlay and marker panes.
        panes = self.js("""const z = (sel) => parseInt(getComputedStyle(document.querySelector(sel)).zIndex);
            return { basemapInTilePane: [...document.querySelectorAll("canvas[data-testid='basemap-tile']")]
                       .every(c => c.closest('.leaflet-pane').classList.contains('leaflet-tile-pane')),
                     routeInOverlay: !!document.querySelector("[data-testid='route-left']").closest('.leaflet-overlay-pane'),
                     tile: z('.leaflet-tile-pane'), overlay: z('.leaflet-overlay-pane'), marker: z('.leaflet-marker-pane') };""")
        self.assertTrue(panes["basemapInTilePane"] and panes["routeInOverlay"], panes)
        self.assertLess(panes["tile"], panes["overlay"])
        self.assertLess(panes["overlay"], panes["marker"])
        # A still map draws no tile again, however many frames go by.
        before = self.basemap()["tilesDrawn"]
        frames = self.driver.execute_async_script("""const done = arguments[arguments.length - 1];
            let n = 0; const step = () => (++n === 30 ? done(n) : requestAnimationFrame(step)); requestAnimationFrame(step);""")
        self.assertEqual(frames, 30)
        self.assertEqual(self.basemap()["tilesDrawn"], before, "tiles redrawn while the map stood still")
        # Zooming in draws the new zoom's tiles, where the roads are at that zoom.
        zoom = self.js("return window.trackhubBasemap.zoom()")
        self.driver.find_element(By.CSS_SELECTOR, ".leaflet-control-zoom-in").click()
        self.wait(lambda: self.js("return window.trackhubBasemap.zoom()") == zoom + 1 and not self.basemap()["moving"]
                  and self.basemap()["tilesDrawn"] > before, message="tiles drawn at the next zoom")
        self.assert_roads_painted()
        self.shot("basemap")

    def test_basemap_under_the_fleet_with_no_tiles(self):
        """?tiles=none: no tile is asked for, the roads are drawn under the fleet's riders."""
        courier = self.courier()
        now = int(time.time() * 1000) - 60_000
        spots = []
        for line in sorted(HELSINKI_STREETS, key=lambda l: (l[0][0], l[0][1])):
            if all(dist_m(line[0], p) > 250 for p in spots):
                spots.append(line[0])
            if len(spots) == 3:
                break
        prefix = unique("fleet-streets")
        for i, pt in enumerate(spots):
            tid = f"{prefix}-{i}"
            self.hub.create_trip(tid, route=[pt, [pt[0] + 0.002, pt[1] + 0.001]])
            self.assertTrue(courier.fix(tid, pt[0], pt[1], now, seq=1).get("applied"))
        lon = sum(p[0] for p in spots) / 3
        lat = sum(p[1] for p in spots) / 3
        self.open(f"/fleet?lat={lat:.5f}&lon={lon:.5f}&zoom=15&tiles=none")
        self.wait(lambda: len(self.driver.find_elements(By.CSS_SELECTOR, f"[data-testid='fleet-rider'][data-trip^='{prefix}']")) == 3,
                  message="the three riders")
        self.wait_basemap_drawn()
        self.assertEqual(self.basemap()["reason"], "no-tiles")
        self.assertEqual(self.js("return document.querySelectorAll('img.leaflet-tile').length"), 0)
        self.assert_roads_painted()
        self.assertIn("OpenStreetMap contributors", self.credit() or "")
        # The riders are on top: what is at a rider's centre is the rider.
        on_top = self.js("""return [...document.querySelectorAll("[data-testid='fleet-rider']")].map(e => {
            const r = e.getBoundingClientRect();
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return !!hit && hit.closest("[data-testid='fleet-rider']") === e; });""")
        self.assertEqual(on_top, [True, True, True])
        self.shot("fleet-basemap")

    def test_no_basemap_when_tiles_load(self):
        if shutil.which("openssl") is None:
            self.skipTest("openssl is not installed: no certificate for the local tile server")
        tiles = TileServer()
        self.driver.execute_cdp_cmd("Security.setIgnoreCertificateErrors", {"ignore": True})
        try:
            trip = unique("tiles")
            self.hub.create_trip(trip, route=HELSINKI_ROUTE)
            query = urllib.parse.urlencode({"tiles": tiles.template})
            self.open(f"/trips/{trip}?{query}")
            self.wait(lambda: float(self.attr("route-left", "data-length-m") or 0) > 0, message="the route drawn")
            # Every visible tile of the fitted view has loaded: the choice is made.
            self.wait(lambda: ((self.basemap() or {}).get("tiles") or {}).get("settled", 0) > 0
                      and self.basemap()["tiles"]["ok"] > 0 and not self.basemap()["moving"],
                      message=f"the tiles loaded (got {self.basemap()})")
            self.assertGreater(len(tiles.requests), 0)
            b = self.basemap()
            self.assertEqual(b["state"], "off", b)
            self.assertEqual(b["tiles"]["failed"], 0, b)
            self.assertEqual(self.js("return document.getElementById('trip-map').dataset.basemap"), "off")
            self.assertEqual(self.js("return document.querySelectorAll(\"canvas[data-testid='basemap-tile']\").length"), 0)
            self.assertIsNone(self.credit())
            fetched = self.js("return performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)")
            self.assertNotIn("/basemap.json", fetched, "the roads were fetched though the tiles work")
            # ?basemap=vector draws the roads over working tiles too.
            self.open(f"/trips/{trip}?{query}&basemap=vector")
            self.wait_basemap_drawn()
            self.assertEqual(self.basemap()["reason"], "forced")
            self.wait(lambda: self.js("return document.querySelectorAll('img.leaflet-tile-loaded').length") > 0,
                      message="the tiles loaded under the forced basemap")
            self.shot("tiles")
        finally:
            self.driver.execute_cdp_cmd("Security.setIgnoreCertificateErrors", {"ignore": False})
            tiles.close()

    def test_basemap_module_in_the_browser(self):
        """basemap.js alone: the tile-health rule, the GeoJSON reader, the bbox test, ?basemap=."""
        self.open("/")
        r = self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            import('/basemap.js').then((B) => {
              const seq = (events) => { const h = new B.TileHealth(); return events.map((e) => h.event(e)); };
              const lines = B.parseBasemap({ type: 'FeatureCollection', features: [
                { type: 'Feature', properties: { class: 'major' }, geometry: { type: 'LineString', coordinates: [[0, 0], [2, 1]] } },
                { type: 'Feature', properties: { highway: 'residential' }, geometry: { type: 'MultiLineString', coordinates: [[[10, 10], [11, 12]], [[5, 5]]] } },
                { type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [1, 1] } },
                { type: 'Feature', properties: {}, geometry: { type: 'LineString', coordinates: [[-1, -1], [-2, -3]] } }] });
              done({
                failFirst: seq(['loading', 'tileerror', 'tileerror', 'load']),
                allOk: seq(['loading', 'tileload', 'tileload', 'load']),
                okThenFail: seq(['loading', 'tileload', 'tileerror', 'load']),
                recovers: seq(['loading', 'tileerror', 'load', 'loading', 'tileload', 'load']),
                lines: lines.map((l) => [l.cls, l.bbox]),
                hit: B.linesIn(lines, [1.5, 0.5, 3, 3]).map((l) => l.cls),
                miss: B.linesIn(lines, [3, 3, 4, 4]).length,
                modes: ['?basemap=vector', '?basemap=none', '?basemap=VECTOR', '?basemap=x', ''].map((q) => B.basemapMode(new URLSearchParams(q))),
              });
            }).catch((e) => done({ error: String(e) }));
        """)
        self.assertNotIn("error", r, r)
        self.assertEqual(r["failFirst"], [None, "show", "show", "show"], "a failed tile before any loaded shows it at once")
        self.assertEqual(r["allOk"], [None, None, None, "hide"])
        self.assertEqual(r["okThenFail"], [None, None, None, None], "a mixed view keeps the current choice")
        self.assertEqual(r["recovers"], [None, "show", "show", None, None, "hide"])
        self.assertEqual(r["lines"], [["major", [0, 0, 2, 1]], ["residential", [10, 10, 11, 12]], ["street", [-2, -3, -1, -1]]])
        self.assertEqual(r["hit"], ["major"])
        self.assertEqual(r["miss"], 0)
        self.assertEqual(r["modes"], ["vector", "none", "vector", "auto", "auto"])

    def test_unknown_trip(self):
        trip = unique("ghost")
        self.open(f"/trips/{trip}")
        self.wait(lambda: self.attr("trip-status", "data-status") == "unknown", message="unknown trip")
        self.assertEqual(self.text("eta"), "—")
        self.assertIsNone(self.progress())


class BasemapFileTest(unittest.TestCase):
    """web-client/basemap.json is what scripts/make_basemap.py makes of data/samples/."""

    def test_basemap_file_is_up_to_date(self):
        run = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "make_basemap.py"), "--check"],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_basemap_keeps_every_road_and_its_credit(self):
        with open(BASEMAP_FILE, encoding="utf-8") as f:
            basemap = json.load(f)
        self.assertEqual(basemap["attribution"], "© OpenStreetMap contributors, ODbL 1.0")
        self.assertEqual([f["properties"]["class"] for f in basemap["features"]], ["street", "major"])
        with open(os.path.join(REPO, "data", "samples", "roads_helsinki.geojson"), encoding="utf-8") as f:
            roads = json.load(f)["features"]
        # Joined into longer lines, but every street edge is there once (the samples' edges are straight).
        self.assertEqual(sum(len(line) - 1 for line in HELSINKI_STREETS), sum(len(r["geometry"]["coordinates"]) - 1 for r in roads))
        for line in HELSINKI_STREETS + basemap_lines("major"):
            self.assertGreaterEqual(len(line), 2)
            for lon, lat in line:
                self.assertEqual((round(lon, 5), round(lat, 5)), (lon, lat))
        self.assertLess(os.path.getsize(BASEMAP_FILE), 64 * 1024)


if __name__ == "__main__":
    unittest.main()
