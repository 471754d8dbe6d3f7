"""Browser tests of the courier's signal on the pages (PROTOCOL 18), in headless Chromium at
desktop size and at a phone's 390 x 844.

The hub is the real release binary (hubs.py), secured (share links need it), started with a
short `--stale-after` so that a courier that stops sending is stale within seconds, and with
`--cadence-idle 0` where the binary has it (cadence off: the threshold is then `--stale-after`
alone, not twice an idle cadence). Couriers send a few fixes in quick succession, so their
usual interval is far below the floor. What is checked:

* the trip view and the customer's page: no stale look while pending or moving; once the
  courier goes silent, `data-stale="true"` on `trip-status` (and the share card), the marker
  greyed and "Last update N seconds ago", N matching the time since the last fix and counting
  on without any message; the same after a reload (from the snapshot); the next fix takes it
  all away. The trip view shows the battery (from `signal_lost`, then `battery_low`), the
  customer's page never does;
* the fleet view greys a stale single rider and only that one.

Conditions are awaited with deadlines (WebDriverWait), never with sleeps. Screenshots go to
test-artifacts/.

Run:  cd tests-py && TRACKHUB_BIN=... python3 -m unittest browser.test_courier_signal -v
"""

from __future__ import annotations

import json
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
from hubs import hub_under_test, serve_supports  # noqa: E402

if base.HAVE_SELENIUM:
    from selenium.webdriver.common.by import By

ROUTE = base.ROUTE
DESKTOP = (1280, 900)
PHONE = (390, 844)
# The floor of the stale threshold (PROTOCOL 18); the deadlines below add a wide margin.
STALE_AFTER_S = 2
STALE_DEADLINE_S = STALE_AFTER_S + 15
# The fleet view's riders are judged over fleet ticks (1 Hz): a longer floor leaves a rider
# that just sent a fix fresh for several ticks.
FLEET_STALE_AFTER_S = 5
LAST_UPDATE = re.compile(r"Last update (\d+) seconds? ago")

SKIP_REASON = base.SKIP_REASON
if SKIP_REASON is None and not serve_supports("--stale-after"):
    SKIP_REASON = "this trackhub has no --stale-after (PROTOCOL 18): build the hub with the courier's signal"


def serve_args(stale_after_s):
    args = ["--stale-after", f"{stale_after_s}s"]
    if serve_supports("--cadence-idle"):
        args += ["--cadence-idle", "0"]
    return args


@unittest.skipIf(SKIP_REASON is not None, SKIP_REASON or "")
class CourierSignalPagesTest(base.PageTestHelpers, unittest.TestCase):
    SHOT_PREFIX = "signal"

    @classmethod
    def setUpClass(cls):
        cls.driver = base.start_chromium(*DESKTOP)

    def setUp(self):
        stale_after = FLEET_STALE_AFTER_S if self._testMethodName.startswith("test_fleet") else STALE_AFTER_S
        self.hub = hub_under_test(base.SECRET, serve_args(stale_after))
        self.couriers = []
        self.size = DESKTOP
        self.viewer = self.hub.token(["viewer"], ["*"])

    def tearDown(self):
        for c in self.couriers:
            c.close()
        self.hub.close()
        self.driver.set_window_size(*DESKTOP)

    # ---- helpers (and base.PageTestHelpers') -----------------------------------------------
    def shown_text(self, testid):
        """The element's text if it is there and not hidden, else None."""
        return self.js("const e = document.querySelector(`[data-testid='${arguments[0]}']`);"
                       "return e && !e.closest('[hidden]') ? e.textContent.trim() : null;", testid)

    def marker_stale(self):
        return self.js("const e = document.querySelector(\"[data-testid='rider-marker']\"); return e ? e.classList.contains('stale') : null;")

    def seconds_ago(self):
        """N of "Last update N seconds ago", or None while it is not shown."""
        m = LAST_UPDATE.search(self.shown_text("last-update") or "")
        return int(m.group(1)) if m else None

    def share(self, trip):
        req = urllib.request.Request(f"{self.hub.base_url}/v1/trips/{trip}/share", data=b"{}", method="POST",
                                     headers={"Authorization": f"Bearer {self.hub.admin_token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def drive(self, courier, trip, alongs, first_seq=1, battery=None):
        """Fixes at these distances along the route, each awaited; returns the time of the last ack."""
        t0 = int(time.time() * 1000) - 10 * 60 * 1000
        for i, along in enumerate(alongs):
            seq = first_seq + i
            p = base.point_along(ROUTE, along)
            ack = courier.fix(trip, p[0], p[1], t0 + seq * 20_000, seq=seq, duration_ms=300, battery=battery)
            self.assertEqual(ack.get("type"), "ack", ack)
            self.assertTrue(ack.get("applied"), ack)
        return time.time()

    def assert_counts_on(self, last_fix_at):
        """ "Last update N seconds ago" says the time since the last fix, and rises with no message."""
        self.wait(lambda: self.seconds_ago() is not None, message=f"'Last update N seconds ago' (got {self.shown_text('last-update')!r})")
        first = self.seconds_ago()
        self.assertGreaterEqual(first, STALE_AFTER_S - 1)
        self.assertAlmostEqual(first, time.time() - last_fix_at, delta=2.5)
        self.wait(lambda: (self.seconds_ago() or 0) >= first + 2, message=f"the time since the last update counting on from {first}")

    def assert_no_csp_violations(self):
        self.assertEqual(self.js("return window.__csp || [];"), [], "CSP violations")

    # ---- the trip view ---------------------------------------------------------------------
    def trip_view_goes_stale_and_back(self, size):
        self.use_size(size)
        trip = base.unique("signal-trip")
        self.hub.create_trip(trip, route=ROUTE, rider={"id": "r-ana", "name": "Ana"})
        courier = self.courier()
        self.driver.get(f"{self.hub.base_url}/trips/{trip}?token={self.viewer}")
        self.wait(lambda: self.attr("trip-status", "data-status") == "pending", message="pending")
        self.assertEqual(self.attr("trip-status", "data-stale"), "false")
        self.assertIsNone(self.shown_text("last-update"))
        self.assertIsNone(self.shown_text("battery"), "no battery before a fix reports one")

        last = self.drive(courier, trip, (0, 100, 200), battery=54)
        self.wait(lambda: self.attr("trip-status", "data-status") == "moving", message="moving")
        # Silent for longer than --stale-after: the hub says signal_lost.
        self.wait(lambda: self.attr("trip-status", "data-stale") == "true", timeout=STALE_DEADLINE_S, message="the trip view shows it stale")
        self.assertEqual(self.attr("trip-status", "data-status"), "moving", "stale is a look, not a status")
        self.assertTrue(self.marker_stale(), "the marker is greyed")
        self.assertTrue(self.shown_text("last-update").startswith("No signal"), self.shown_text("last-update"))
        self.assertIn("no signal", self.js("return document.querySelector(\"[data-testid='trip-status']\").textContent"))
        self.wait(lambda: self.shown_text("battery") == "Battery 54 %", message=f"the battery from signal_lost (got {self.shown_text('battery')!r})")
        self.assertEqual(self.attr("battery", "data-battery"), "54")
        self.assert_counts_on(last)
        self.shot("trip-stale")

        # A reload learns all of it from the snapshot.
        self.driver.refresh()
        self.wait(lambda: self.attr("trip-status", "data-stale") == "true" and self.seconds_ago() is not None,
                  message="stale again after a reload, from the snapshot")
        self.assertAlmostEqual(self.seconds_ago(), time.time() - last, delta=2.5)
        self.assertEqual(self.shown_text("battery"), "Battery 54 %")
        if size == PHONE:
            # The bottom sheet shows the line (scrolled to if need be) inside the screen.
            box = self.js("const e = document.querySelector(\"[data-testid='last-update']\"); e.scrollIntoView({block: 'nearest'});"
                          "const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom, window.innerWidth, window.innerHeight];")
            self.assertTrue(0 <= box[0] and box[2] <= box[4] and 0 <= box[1] and box[3] <= box[5], box)

        # The next fix ends the silence (signal_back) and reports a low battery (battery_low).
        self.drive(courier, trip, (300,), first_seq=4, battery=12)
        self.wait(lambda: self.attr("trip-status", "data-stale") == "false", timeout=10, message="the stale look goes with the next fix")
        self.assertIsNone(self.shown_text("last-update"))
        self.assertFalse(self.marker_stale())
        self.wait(lambda: self.shown_text("battery") == "Battery 12 %", message=f"the battery from battery_low (got {self.shown_text('battery')!r})")
        self.assertTrue(self.js("return document.querySelector(\"[data-testid='battery']\").classList.contains('low')"))
        self.shot("trip-back")
        self.assert_no_csp_violations()

    def test_trip_view_goes_stale_and_back_on_desktop(self):
        self.trip_view_goes_stale_and_back(DESKTOP)

    def test_trip_view_goes_stale_and_back_on_a_phone(self):
        self.trip_view_goes_stale_and_back(PHONE)

    # ---- the customer's page -------------------------------------------------------------
    def share_page_goes_stale_and_back(self, size):
        self.use_size(size)
        trip = base.unique("signal-order")
        self.hub.create_trip(trip, route=ROUTE, rider={"id": "rider-secret-id", "name": "Alex"})
        link = self.share(trip)
        courier = self.courier()
        self.driver.get(self.hub.base_url + link["url"])
        self.wait(lambda: self.attr("share-card", "data-status") == "pending", message="card pending")
        self.assertEqual(self.attr("share-card", "data-stale"), "false")
        self.assertEqual(self.attr("trip-status", "data-stale"), "false")

        last = self.drive(courier, trip, (0, 100, 200), battery=54)
        self.wait(lambda: self.attr("share-card", "data-stale") == "true", timeout=STALE_DEADLINE_S, message="the card shows it stale")
        self.assertEqual(self.attr("trip-status", "data-stale"), "true")
        self.assertEqual(self.attr("share-card", "data-status"), "moving")
        self.assertTrue(self.marker_stale(), "the marker is greyed")
        self.assert_counts_on(last)
        # A customer never sees the phone's battery (the hub sends it null to a share token).
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='battery']"), [])
        self.assertNotIn("Battery", self.js("return document.body.innerText"))
        # Readable at this size: the card, with its new line, inside the viewport.
        box = self.js("const r = document.querySelector(\"[data-testid='share-card']\").getBoundingClientRect();"
                      "return [r.left, r.top, r.right, r.bottom, window.innerWidth, window.innerHeight];")
        self.assertTrue(0 <= box[0] and box[2] <= box[4] and 0 <= box[1] and box[3] <= box[5], box)
        self.shot("share-stale")

        self.driver.refresh()
        self.wait(lambda: self.attr("share-card", "data-stale") == "true" and self.seconds_ago() is not None,
                  message="stale again after a reload, from the snapshot")

        self.drive(courier, trip, (300,), first_seq=4)
        self.wait(lambda: self.attr("share-card", "data-stale") == "false", timeout=10, message="the stale look goes with the next fix")
        self.assertEqual(self.attr("trip-status", "data-stale"), "false")
        self.assertIsNone(self.shown_text("last-update"))
        self.assertFalse(self.marker_stale())
        self.assert_no_csp_violations()

    def test_share_page_goes_stale_and_back_on_desktop(self):
        self.share_page_goes_stale_and_back(DESKTOP)

    def test_share_page_goes_stale_and_back_on_a_phone(self):
        self.share_page_goes_stale_and_back(PHONE)

    # ---- the fleet view ------------------------------------------------------------------
    def test_fleet_greys_a_stale_rider(self):
        courier = self.courier()
        prefix = base.unique("signal-fleet")
        quiet, talking = f"{prefix}-quiet", f"{prefix}-talking"
        # Two riders 1 km apart in Lisbon: two single riders at zoom 15.
        points = {quiet: [-9.1400, 38.7200], talking: [-9.1290, 38.7200]}
        t0 = int(time.time() * 1000) - 10 * 60 * 1000
        for tid, pt in points.items():
            self.hub.create_trip(tid, route=[pt, [pt[0] + 0.01, pt[1] + 0.01]])
            for seq in (1, 2, 3):
                self.assertTrue(courier.fix(tid, pt[0] + 0.0001 * seq, pt[1], t0 + seq * 5_000, seq=seq).get("applied"))
        fleet = self.hub.token(["fleet"])
        self.driver.get(f"{self.hub.base_url}/fleet?lat=38.7200&lon=-9.1345&zoom=15&token={fleet}")

        def rider(tid):
            return self.js("""const e = document.querySelector(`[data-testid='fleet-rider'][data-trip='${arguments[0]}']`);
                              if (!e) return null;
                              const disc = e.querySelector('.rider-disc');
                              return {stale: e.getAttribute('data-stale'), greyed: e.classList.contains('stale'),
                                      fill: disc ? getComputedStyle(disc).fill : null, label: e.getAttribute('aria-label')};""", tid)

        self.wait(lambda: rider(quiet) is not None and rider(talking) is not None, message="two single riders")
        self.wait(lambda: rider(quiet)["stale"] == "true" and rider(talking)["stale"] == "true",
                  timeout=FLEET_STALE_AFTER_S + 15, message=f"both riders greyed once silent (got {rider(quiet)}, {rider(talking)})")
        greyed = rider(quiet)
        self.assertTrue(greyed["greyed"], greyed)
        self.assertIn("no signal", greyed["label"])
        self.assertEqual(greyed["fill"], "rgb(148, 163, 184)", "a stale rider's disc is grey")

        # One rider sends again: it alone loses the grey.
        courier.fix(talking, points[talking][0] + 0.0004, points[talking][1], t0 + 4 * 5_000, seq=4)
        self.wait(lambda: rider(talking)["stale"] == "false", timeout=FLEET_STALE_AFTER_S,
                  message=f"the rider that sent a fix is not greyed (got {rider(talking)})")
        fresh = rider(talking)
        self.assertFalse(fresh["greyed"], fresh)
        self.assertNotEqual(fresh["fill"], "rgb(148, 163, 184)")
        self.assertNotIn("no signal", fresh["label"])
        self.assertEqual(rider(quiet)["stale"], "true", "the silent rider stays greyed")
        self.shot("fleet-stale")
        self.assert_no_csp_violations()


@unittest.skipIf(base.SKIP_REASON is not None, base.SKIP_REASON or "")
class CourierSignalModuleTest(unittest.TestCase):
    """courier-signal.js in the browser: the words and the state, without a hub's stale flag."""

    def test_words_and_state(self):
        hub = hub_under_test()
        try:
            driver = base.start_chromium()
        except unittest.SkipTest:
            hub.close()
            raise
        try:
            driver.get(hub.base_url + "/")
            r = driver.execute_async_script("""
                const done = arguments[arguments.length - 1];
                import('/courier-signal.js').then((S) => {
                  const words = [0, 999, 1000, 2500, 59999, 60000, 240000, 3599999, 3600000, 3900000, 86400000, 2 * 86400000]
                    .map((ms) => S.agoWords(ms));
                  const s = new S.CourierSignal();
                  const out = {};
                  s.fromSnapshot({ stale: true, last_fix_t: 1000, battery: 54 });
                  out.snap = [s.isStale('moving'), s.isStale('holding'), s.isStale('off_route'), s.isStale('pending'),
                              s.isStale('arrived'), s.isStale('ended'), s.lastUpdateText(1000 + 125000), s.battery];
                  s.onEvent({ name: 'signal_back', t: 5000, gap_ms: 4000 });
                  out.back = [s.stale, s.lastFixT];
                  s.onEvent({ name: 'battery_low', battery: 12 });
                  out.low = s.battery;
                  s.onEvent({ name: 'signal_lost', last_fix_t: 5000, battery: null });
                  out.lost = [s.stale, s.lastFixT, s.battery];
                  s.refresh({ last_fix_t: 4000, battery: 80 });   // older than what the page knows
                  out.older = s.battery;
                  s.refresh({ last_fix_t: 6000, battery: 79 });
                  out.newer = [s.battery, s.lastFixT, s.stale];
                  out.other = s.onEvent({ name: 'arrived' });
                  s.fromSnapshot({ status: 'unknown', stale: null, last_fix_t: null, battery: null });
                  out.none = [s.stale, s.lastUpdateText(99), S.batteryText(s.battery), S.batteryText(54.4)];
                  done({ words, ...out });
                }).catch((e) => done({ error: String(e) }));
            """)
        finally:
            driver.quit()
            hub.close()
        self.assertNotIn("error", r, r)
        self.assertEqual(r["words"], ["just now", "just now", "1 second ago", "2 seconds ago", "59 seconds ago", "1 min ago",
                                      "4 min ago", "59 min ago", "1 h ago", "1 h 5 min ago", "1 day ago", "2 days ago"])
        self.assertEqual(r["snap"], [True, True, True, False, False, False, "Last update 2 min ago", 54])
        self.assertEqual(r["back"], [False, 5000])
        self.assertEqual(r["low"], 12)
        self.assertEqual(r["lost"], [True, 5000, 12], "a signal_lost without a battery keeps the known level")
        self.assertEqual(r["older"], 12, "an answer older than the last fix the page knows changes nothing")
        self.assertEqual(r["newer"], [79, 6000, True], "a poll brings the battery, not staleness")
        self.assertFalse(r["other"])
        self.assertEqual(r["none"], [False, "No signal", "", "Battery 54 %"])


if __name__ == "__main__":
    unittest.main()
