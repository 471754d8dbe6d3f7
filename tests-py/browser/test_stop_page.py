"""Browser tests of links for one stop (PROTOCOL 17): the customer's page of such a link while
the courier is hidden ("2 stops before yours · about 4 min", no marker, `data-stops-before`),
shown (the marker and the route to the stop) and at the stop ("Your order is here"), at
desktop (1280 x 800) and phone (390 x 844) size; and the dispatcher's trip view listing the
stops with their names and ETAs, with the control that makes a stop's link.

The hub is the real release binary (hubs.py), secured; a courier drives a 3 km street due
north with stops a, b and c at 800, 1 650 and 2 400 m, a fix every 100 m (none exactly 200 m
from a stop: the rule's own boundary), and holds at each (`proceed`). The link follows c with
`visible_within_stops` 1, so the courier is hidden while two stops lie before c, shown
between a and b (at 1 200 m: 400 and 450 m from them), hidden again within 200 m of b, shown
from 1 900 m.
Privacy is checked on the page too: every WebSocket message the page receives and every
position its marker is drawn at is kept, and none may lie within 200 m of stop a or b.
With Reduce Motion emulated (`prefers-reduced-motion: reduce`) the page's marker jumps to
each position instead of sliding, and its progress bar has no transition; the same steps
without the setting are the control.
Conditions are awaited with deadlines (WebDriverWait), never with sleeps. Screenshots go to
test-artifacts/ (scripts/stop_screenshots.py takes the ones in docs/).

Run:  cd tests-py && TRACKHUB_BIN=... python3 -m unittest browser.test_stop_page -v
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import sys
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import test_web_client as base  # noqa: E402  (a module, so its test class is not collected here)
from hubs import Courier, hub_under_test  # noqa: E402
import hubproc  # noqa: E402  (on the path once hubs is imported)

if base.HAVE_SELENIUM:
    from selenium.webdriver.common.by import By

DESKTOP = (1280, 800)
PHONE = (390, 844)
LAT0, LON0 = 38.7000, -9.1400
LENGTH_M = 3000
STOPS = {"a": 800, "b": 1650, "c": 2400}
RADIUS_M = 200
STEP_M = 100

# Kept from before the page's own scripts run: every WebSocket message the page receives and
# every position its rider marker is drawn at (the page's hooks, data-lat / data-lon).
RECORDER = """
window.__wsSeen = [];
window.__markerSeen = [];
const NativeWebSocket = window.WebSocket;
window.WebSocket = class extends NativeWebSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', (e) => { if (typeof e.data === 'string') window.__wsSeen.push(e.data); });
  }
};
new MutationObserver((changes) => {
  for (const c of changes) {
    const el = c.target;
    if (el.getAttribute && el.getAttribute('data-testid') === 'rider-marker' && el.hasAttribute('data-lat')) {
      window.__markerSeen.push([parseFloat(el.getAttribute('data-lon')), parseFloat(el.getAttribute('data-lat'))]);
    }
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-lat', 'data-lon'] });
"""


def point(along_m):
    """[lon, lat] of the point `along_m` up the street."""
    lat, lon = hubproc.offset(LAT0, LON0, north_m=along_m)
    return [lon, lat]


ROUTE = [point(d) for d in range(0, LENGTH_M + 1, 100)]


def about_eta(eta_s):
    """web-client/stop-follow.js's aboutEta."""
    if eta_s < 60:
        return "arriving now"
    minutes = eta_s / 60
    if minutes < 15:
        return f"about {max(1, math.floor(minutes + 0.5))} min"
    rounded = math.floor(minutes / 5 + 0.5) * 5
    if rounded < 60:
        return f"about {rounded} min"
    hrs, rest = divmod(rounded, 60)
    return f"about {hrs} h" + (f" {rest} min" if rest else "")


def stops_before_text(n):
    return "Next stop is yours" if n == 0 else "1 stop before yours" if n == 1 else f"{n} stops before yours"


def coordinates(value):
    """Every coordinate in a JSON value: {lat, lon} objects and [lon, lat] pairs, as [lon, lat]."""
    found = []
    if isinstance(value, dict):
        if isinstance(value.get("lat"), (int, float)) and isinstance(value.get("lon"), (int, float)):
            found.append([value["lon"], value["lat"]])
        for v in value.values():
            found += coordinates(v)
    elif isinstance(value, list):
        if len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
            found.append(list(value))
        else:
            for v in value:
                found += coordinates(v)
    return found


def jwt_payload(token):
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


@unittest.skipIf(base.SKIP_REASON is not None, base.SKIP_REASON or "")
class StopPageTest(base.PageTestHelpers, unittest.TestCase):
    SHOT_PREFIX = "stop"
    WAIT_S = 20
    PROGRESS = "[data-testid='share-card'] [role='progressbar']"

    @classmethod
    def setUpClass(cls):
        cls.driver = base.start_chromium(*DESKTOP, browser_logs=True)
        cls.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})

    def setUp(self):
        self.hub = hub_under_test(base.SECRET)
        self.couriers = []
        self.size = DESKTOP
        self.seq = 0
        self.at = None
        self.t0 = int(time.time() * 1000) - 600_000

    def tearDown(self):
        if self.failed():
            self.report_failure()
        for c in self.couriers:
            c.close()
        self.hub.close()
        self.driver.set_window_size(*DESKTOP)

    # ---- helpers (and base.PageTestHelpers') -----------------------------------------------
    def visible_text(self, testid):
        """The element's text if it is shown (not `hidden`, not display: none), else None."""
        return self.js("""const e = document.querySelector(`[data-testid='${arguments[0]}']`);
                          return e && e.offsetParent !== null ? e.textContent.trim() : null;""", testid)

    def route_left_m(self):
        v = self.attr("route-left", "data-length-m")
        return float(v) if v is not None else 0.0

    def call(self, method, path, body=None, token=None):
        req = urllib.request.Request(f"{self.hub.base_url}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {token or self.hub.admin_token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def create_trip(self):
        trip = base.unique("stops")
        waypoints = [{"lat": point(m)[1], "lon": point(m)[0], "id": sid, "name": f"Order {sid}"} for sid, m in STOPS.items()]
        self.hub.create_trip(trip, route=ROUTE, waypoints=waypoints, rider={"id": "rider-secret-id", "name": "Alex"})
        self.trip = trip
        self.courier = Courier(self.hub.ws_url, token=self.hub.courier_token)
        self.couriers.append(self.courier)
        return trip

    def status(self):
        return self.call("GET", f"/v1/trips/{self.trip}")["status"]

    def drive(self, along_m):
        """The courier's fix `along_m` up the street (10 m/s), and at a stop: holding there,
        then `proceed` (the order handed over)."""
        self.seq += 1
        p = point(along_m)
        ack = self.courier.fix(self.trip, p[0], p[1], self.t0 + self.seq * 10_000, seq=self.seq, duration_ms=200)
        self.assertEqual(ack.get("type"), "ack", ack)
        self.at = along_m
        return p

    def hand_over(self):
        self.wait(lambda: self.status() == "holding", message="holding at the stop")
        self.assertEqual(self.courier.proceed(self.trip).get("type"), "ack")

    def drive_to(self, start_m, end_m, hand_over_at=("a", "b")):
        """Fixes every 100 m; the first fix at or past a stop in `hand_over_at` holds the
        trip there (the hub keeps the marker at the stop), and the courier hands over."""
        for along in range(start_m, end_m + 1, STEP_M):
            before = self.at
            self.drive(along)
            if any(before is not None and before < STOPS[s] <= along for s in hand_over_at):
                self.hand_over()

    def assert_nothing_near_other_stops(self):
        """No coordinate the page received, and no position it drew its marker at, lies within
        200 m of stop a or b."""
        seen = [json.loads(m) for m in self.js("return window.__wsSeen;")]
        self.assertTrue(any(m.get("type") == "stop" for m in seen), "the page got stop messages")
        drawn = self.js("return window.__markerSeen;")
        for where, points in (("messages", coordinates(seen)), ("the marker", drawn)):
            for q in points:
                for other in ("a", "b"):
                    d = base.dist_m(q, point(STOPS[other]))
                    self.assertGreater(d, RADIUS_M, f"{where}: {q} is {d:.0f} m from stop {other}")

    def assert_hidden(self, stops_before):
        """The card says the stops and the ETA, the map has no courier and no route."""
        def says_it():
            eta = self.attr("eta", "data-eta-s")
            wanted = stops_before_text(stops_before) + (f" · {about_eta(int(eta))}" if eta else "")
            return (self.attr("share-card", "data-stops-before") == str(stops_before)
                    and self.attr("share-card", "data-visible") == "false" and self.text("eta") == wanted)
        self.wait(says_it, message=lambda: f"hidden, {stops_before} before: {self.text('eta')!r} "
                  f"(stops-before {self.attr('share-card', 'data-stops-before')}, eta-s {self.attr('eta', 'data-eta-s')})")
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='rider-marker']") == [], message="no marker")
        self.assertEqual(self.route_left_m(), 0.0)
        self.assertIsNone(self.visible_text("stops-before"))
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='destination']")), 1)

    def assert_shown_at(self, along_m, stops_before):
        """The marker where the courier is, the route to the stop, the stops line, the ETA and
        the progress to the stop."""
        p = point(along_m)
        self.wait(lambda: self.attr("share-card", "data-visible") == "true", message="shown")
        self.wait(lambda: self.marker() is not None and base.dist_m(self.marker(), p) < 5,
                  message=lambda: f"marker at {p} (at {self.marker()})")
        self.wait(lambda: self.route_left_m() > 0, message="the route to the stop drawn")
        self.wait(lambda: self.attr("share-card", "data-stops-before") == str(stops_before), message=f"{stops_before} before")
        self.assertEqual(self.visible_text("stops-before"), stops_before_text(stops_before))
        self.wait(lambda: re.fullmatch(r"Arriving (in \d+ min|now)", self.text("eta") or "") is not None,
                  message=lambda: f"ETA headline (got {self.text('eta')!r})")
        # The route ends at the stop: its last stretch is no longer than the way there.
        self.assertLessEqual(self.route_left_m(), base.dist_m(p, point(STOPS["c"])) + 15)
        wanted = 100 * along_m / STOPS["c"]
        self.wait(lambda: abs((self.progress() or 0) - wanted) <= 3, message=lambda: f"progress to c {wanted:.0f} % (got {self.progress()})")

    def assert_readable(self):
        box = self.js("const r = document.querySelector(\"[data-testid='share-card']\").getBoundingClientRect();"
                      "return [r.left, r.top, r.right, r.bottom, window.innerWidth, window.innerHeight];")
        self.assertTrue(0 <= box[0] and box[2] <= box[4] and 0 <= box[1] and box[3] <= box[5], box)
        self.assertFalse(self.js("const e = document.querySelector(\"[data-testid='eta']\"); return e.scrollWidth > e.clientWidth;"))

    # ---- the customer's page of a link for stop c ---------------------------------------------
    def follow_stop_c(self, size):
        self.use_size(size)
        self.create_trip()
        link = self.call("POST", f"/v1/trips/{self.trip}/share", {"stop": "c", "visible_within_stops": 1})
        self.drive(0)
        self.drive(STEP_M)  # two fixes: a speed, so an ETA
        self.driver.get(self.hub.base_url + link["url"])

        # Two stops before c: hidden, "2 stops before yours · about 4 min".
        self.assert_hidden(2)
        self.assertTrue(self.attr("eta", "data-eta-s"), "an ETA while hidden")
        self.assertIn(" · about ", self.text("eta"))
        self.assertEqual(self.text("rider-name"), "Alex is bringing your order")
        self.assert_readable()
        for secret in ("rider-secret-id", "Order a", "Order b"):
            self.assertNotIn(secret, self.driver.page_source)
        self.shot("hidden")

        # Past a, 400 m from a and 450 m from b, one stop before c: shown.
        self.drive_to(2 * STEP_M, 1200)
        self.assert_shown_at(1200, 1)
        # The camera shows the courier and the door.
        self.assertTrue(self.js("""const m = document.querySelector('.map').getBoundingClientRect();
            return ["rider-marker", "destination"].every((id) => {
              const r = document.querySelector(`[data-testid='${id}']`).getBoundingClientRect();
              return r.left >= m.left && r.right <= m.right && r.top >= m.top && r.bottom <= m.bottom; });"""),
            "the marker and the door both in view")
        self.assert_readable()
        self.shot("shown")

        # Within 200 m of b: hidden again; past b by 250 m: shown, "Next stop is yours".
        self.drive_to(1300, 1500)
        self.assert_hidden(1)
        self.drive_to(1600, 1900)
        self.assert_shown_at(1900, 0)

        # At c: "Your order is here", and then no courier.
        self.drive_to(2000, STOPS["c"])
        self.wait(lambda: self.text("eta") == "Your order is here", message=lambda: f"Your order is here (got {self.text('eta')!r})")
        self.assertEqual(self.attr("share-card", "data-status"), "arrived")
        self.assertIsNone(self.visible_text("stops-before"))
        self.assert_readable()
        self.shot("arrived")
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='rider-marker']") == [], message="marker gone")
        self.assert_nothing_near_other_stops()
        self.assertEqual(self.js("return window.__csp || [];"), [], "CSP violations")

        # Later, and after a reload: still there, no courier, even as the trip goes on.
        self.hand_over()
        self.drive(2500)
        self.driver.refresh()
        self.wait(lambda: self.text("eta") == "Your order is here", message="arrived after a reload")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='rider-marker']"), [])
        self.assertEqual(self.js("return window.__csp || [];"), [], "CSP violations")

    def test_desktop_stop_link_hidden_shown_arrived(self):
        self.follow_stop_c(DESKTOP)

    def test_phone_stop_link_hidden_shown_arrived(self):
        self.follow_stop_c(PHONE)

    def test_link_for_the_destination_waits_for_arrival(self):
        """A "destination" link: hidden behind three stops, "Your order is here" on `arrived`."""
        self.use_size(PHONE)
        self.create_trip()
        link = self.call("POST", f"/v1/trips/{self.trip}/share", {"stop": "destination"})
        self.drive(0)
        self.driver.get(self.hub.base_url + link["url"])
        self.assert_hidden(3)
        self.drive_to(STEP_M, LENGTH_M, hand_over_at=("a", "b", "c"))
        self.wait(lambda: self.text("eta") == "Your order is here", message="Your order is here at the destination")
        self.assert_nothing_near_other_stops()

    # ---- Reduce Motion ---------------------------------------------------------------------------
    def slide(self, reduce):
        """A link for a (shown: no stop before it, 700 m from b) with the courier at 100 m,
        then one fix 200 m on animated over 6 s; with `prefers-reduced-motion: reduce`
        emulated when `reduce`. Returns every position the marker was drawn at after that fix,
        and the progress bar's CSS transition duration."""
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-reduced-motion", "value": "reduce" if reduce else "no-preference"}]})
        self.create_trip()
        link = self.call("POST", f"/v1/trips/{self.trip}/share", {"stop": "a"})
        self.drive(0)
        self.drive(STEP_M)
        self.driver.get(self.hub.base_url + link["url"])
        self.assertEqual(self.js("return matchMedia('(prefers-reduced-motion: reduce)').matches;"), reduce)
        self.wait(lambda: self.attr("share-card", "data-visible") == "true", message="shown")
        start, end = point(STEP_M), point(3 * STEP_M)
        self.wait(lambda: self.marker() is not None and base.dist_m(self.marker(), start) < 5, message="the marker at 100 m")
        self.js("window.__markerSeen = [];")
        self.seq += 1
        ack = self.courier.fix(self.trip, end[0], end[1], self.t0 + self.seq * 10_000, seq=self.seq, duration_ms=6000)
        self.assertEqual(ack.get("type"), "ack", ack)
        self.wait(lambda: self.marker() is not None and base.dist_m(self.marker(), end) < 5,
                  message=lambda: f"the marker at 300 m (at {self.marker()})")
        drawn = self.js("return window.__markerSeen;")
        transition = self.js("""const e = document.querySelector("[data-testid='share-card'] .bar-fill");
                                return e ? getComputedStyle(e).transitionDuration : null;""")
        return drawn, start, end, transition

    def test_reduce_motion_makes_the_marker_jump_on_a_stop_link(self):
        """With Reduce Motion the stop page draws the marker only where the hub put it (the
        courier at 100 m, then at 300 m), never on the way between, and the progress bar has no
        transition; without it (the control) the same 6 s animation is drawn at points between."""
        self.use_size(PHONE)
        # The class shares one Chromium: the next test gets the machine's own setting back.
        self.addCleanup(self.driver.execute_cdp_cmd, "Emulation.setEmulatedMedia", {"features": []})
        drawn, start, end, transition = self.slide(reduce=True)
        self.assertTrue(drawn, "the marker was drawn after the fix")
        between = [q for q in drawn if base.dist_m(q, start) > 5 and base.dist_m(q, end) > 5]
        self.assertEqual(between, [], "drawn on the way: it slid")
        self.assertEqual(transition, "0s")
        self.assertEqual(self.js("return window.__csp || [];"), [], "CSP violations")

        drawn, start, end, transition = self.slide(reduce=False)  # the control, on a new trip
        between = [q for q in drawn if base.dist_m(q, start) > 5 and base.dist_m(q, end) > 5]
        self.assertTrue(between, f"without Reduce Motion the marker slides: drawn at {drawn}")
        self.assertNotEqual(transition, "0s")

    # ---- the dispatcher's list of stops ---------------------------------------------------------
    def stop_rows(self):
        return self.js("""return [...document.querySelectorAll("[data-testid='stop-row']")].map(li => ({
            stop: li.dataset.stop, visited: li.dataset.visited,
            name: li.querySelector('.stop-name').textContent,
            eta: li.querySelector("[data-testid='stop-eta']").textContent,
            etaS: li.querySelector("[data-testid='stop-eta']").dataset.etaS,
            struck: getComputedStyle(li).textDecorationLine,
            control: !!li.querySelector("[data-testid='stop-share']")}));""")

    def test_trip_view_lists_the_stops_and_opens_a_stops_link(self):
        self.use_size(DESKTOP)
        self.create_trip()
        self.drive(0)
        self.drive(STEP_M)
        self.driver.get(f"{self.hub.base_url}/trips/{self.trip}?token={self.hub.admin_token}")
        self.wait(lambda: len(self.stop_rows()) == 4 and self.stop_rows()[0]["etaS"], message="four stops with ETAs")
        rows = self.stop_rows()
        self.assertEqual([r["stop"] for r in rows], ["a", "b", "c", "destination"])
        self.assertEqual([r["name"] for r in rows], ["Order a", "Order b", "Order c", "Destination"])
        etas = [int(r["etaS"]) for r in rows]
        self.assertEqual(etas, sorted(etas), "each stop later than the one before")
        self.assertTrue(all(re.fullmatch(r"\d+ min · [\d.]+ k?m", r["eta"]) for r in rows), rows)
        self.assertTrue(all(r["control"] for r in rows))
        first_b = etas[1]

        # Past a: struck through, no link control; b's ETA comes down without a reload.
        self.drive_to(200, 900)
        self.wait(lambda: self.stop_rows()[0]["visited"] == "true", message="a visited")
        self.wait(lambda: (self.stop_rows()[1]["etaS"] or "0") != "0" and int(self.stop_rows()[1]["etaS"]) < first_b,
                  timeout=30, message=lambda: f"b's ETA refreshed below {first_b} (rows {self.stop_rows()})")
        a = self.stop_rows()[0]
        self.assertEqual((a["eta"], a["struck"], a["control"]), ("visited", "line-through", False))
        self.shot("trip-view-stops")

        # b's link: made with visible_within_stops 1, shown on the card, and it opens b's page.
        self.driver.find_element(By.CSS_SELECTOR, "[data-testid='stop-row'][data-stop='b'] [data-testid='stop-share']").click()
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "[data-stop='b'] [data-testid='stop-link']"), message="b's link shown")
        self.assertEqual(self.js("return document.activeElement.dataset.testid;"), "stop-link", "the keyboard is on the new link")
        href = self.driver.find_element(By.CSS_SELECTOR, "[data-stop='b'] [data-testid='stop-link']").get_attribute("href")
        self.assertTrue(href.startswith(f"{self.hub.base_url}/t/"), href)
        claims = jwt_payload(href.rsplit("/", 1)[1])
        self.assertEqual((claims["stop"], claims["visible_within_stops"], claims["trips"]), ("b", 1, [self.trip]))
        self.assertEqual(self.js("return window.__csp || [];"), [], "CSP violations")
        self.driver.get(href)
        # The courier is 100 m past a: hidden, and b is next.
        self.wait(lambda: self.attr("share-card", "data-stops-before") == "0", message="b's page: next stop is b")
        self.wait(lambda: (self.text("eta") or "").startswith("Next stop is yours"), message=lambda: f"b's page says so (got {self.text('eta')!r})")

    def test_trip_view_says_why_an_open_hub_makes_no_link(self):
        """An open hub refuses share links (409): the control says why, and no link appears."""
        self.hub.close()
        self.hub = hub_under_test()
        trip = base.unique("open")
        self.hub.create_trip(trip, route=ROUTE, waypoints=[{"lat": point(800)[1], "lon": point(800)[0], "id": "a"}])
        self.driver.get(f"{self.hub.base_url}/trips/{trip}")
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "[data-stop='a'] [data-testid='stop-share']"), message="a's control")
        self.assertEqual(self.stop_rows()[0]["name"], "a", "a stop without a name is called by its id")
        self.driver.find_element(By.CSS_SELECTOR, "[data-stop='a'] [data-testid='stop-share']").click()
        self.wait(lambda: "secured hub" in (self.js("const e = document.querySelector(\"[data-stop='a'] .stop-link-error\"); return e ? e.textContent : '';") or ""),
                  message="the refusal shown")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='stop-link']"), [])

    def test_wording_module(self):
        """stop-follow.js in the browser: the words and the state from the wire."""
        self.driver.get(self.hub.base_url + "/t/not-a-token")
        r = self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            import('/stop-follow.js').then((m) => {
              const words = [[2, 1500], [1, null], [0, 30], [0, 89], [3, 14 * 60 + 20], [2, 25 * 60 + 10], [5, 3600 + 14 * 60], [null, 60]]
                .map(([n, e]) => m.hiddenHeadline(n, e));
              const f = new m.StopFollow('c');
              const claimed = f.active;
              f.fromSnapshot({ stop: { id: 'c', stops_before: 2, eta_s: 600, reached: false }, position: null });
              const shown = f.fromStopMessage({ stop: 'c', stops_before: 1, eta_s: 300, visible: true });
              const other = f.fromEvent({ name: 'waypoint_reached', stop: 'b' });
              const mine = f.fromEvent({ name: 'waypoint_reached', stop: 'c' });
              const whole = new m.StopFollow('c');
              whole.fromSnapshot({ position: null });
              done({ words, claimed, shown, other, mine, reached: f.reached, whole: whole.active });
            }).catch((e) => done({ error: String(e) }));
        """)
        self.assertNotIn("error", r, r)
        self.assertEqual(r["words"], ["2 stops before yours · about 25 min", "1 stop before yours", "Next stop is yours · arriving now",
                                      "Next stop is yours · about 1 min", "3 stops before yours · about 14 min",
                                      "2 stops before yours · about 25 min", "5 stops before yours · about 1 h 15 min",
                                      "Your order is on its way"])
        self.assertEqual([about_eta(s) for s in (1500, 30, 89, 14 * 60 + 20, 3600 + 14 * 60)],
                         ["about 25 min", "arriving now", "about 1 min", "about 14 min", "about 1 h 15 min"])
        self.assertEqual((r["claimed"], r["shown"], r["other"], r["mine"], r["reached"]), (True, True, False, True, True))
        self.assertFalse(r["whole"], "a snapshot without `stop` says the link follows the whole trip")


if __name__ == "__main__":
    unittest.main()
