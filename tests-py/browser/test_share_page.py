"""Browser tests of the customer's page of a share link (/t/{token}, PROTOCOL 13), in
headless Chromium at desktop size and at a phone's 390 x 844.

The hub is the real release binary (hubs.py), secured; the link comes from
POST /v1/trips/{id}/share and a courier drives the trip with `fix` ops. Conditions are
awaited with deadlines (WebDriverWait), never with sleeps. Screenshots go to test-artifacts/.

Run:  cd tests-py && TRACKHUB_BIN=... python3 -m unittest browser.test_share_page -v
"""

from __future__ import annotations

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
from hubs import hub_under_test  # noqa: E402
from hubproc import mint_token  # noqa: E402  (on the path once hubs is imported)

if base.HAVE_SELENIUM:
    from selenium.webdriver.common.by import By

ROUTE = base.ROUTE
ROUTE_LEN = base.ROUTE_LEN
DESKTOP = (1280, 900)
PHONE = (390, 844)


@unittest.skipIf(base.SKIP_REASON is not None, base.SKIP_REASON or "")
class SharePageTest(base.PageTestHelpers, unittest.TestCase):
    SHOT_PREFIX = "share"
    PROGRESS = "[data-testid='share-card'] [role='progressbar']"

    @classmethod
    def setUpClass(cls):
        cls.driver = base.start_chromium(*DESKTOP)

    def setUp(self):
        self.hub = hub_under_test(base.SECRET)
        self.couriers = []
        self.size = DESKTOP

    def tearDown(self):
        for c in self.couriers:
            c.close()
        self.hub.close()
        self.driver.set_window_size(*DESKTOP)

    # ---- helpers (and base.PageTestHelpers') -----------------------------------------------
    def share(self, trip):
        req = urllib.request.Request(f"{self.hub.base_url}/v1/trips/{trip}/share", data=b"{}", method="POST",
                                     headers={"Authorization": f"Bearer {self.hub.admin_token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            self.assertEqual(r.status, 201)
            return json.loads(r.read())

    def revoke(self, jti):
        req = urllib.request.Request(f"{self.hub.base_url}/v1/shares/{jti}", method="DELETE",
                                     headers={"Authorization": f"Bearer {self.hub.admin_token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            self.assertEqual(r.status, 200)

    def assert_no_csp_violations(self):
        self.assertEqual(self.js("return window.__csp || [];"), [], "CSP violations")

    # ---- the order on its way ----------------------------------------------------------------
    def follow_the_order_to_the_door(self, size):
        self.use_size(size)
        trip = base.unique("order")
        self.hub.create_trip(trip, route=ROUTE, rider={"id": "rider-secret-id", "name": "Alex"})
        link = self.share(trip)
        courier = self.courier()
        self.driver.get(self.hub.base_url + link["url"])
        self.wait(lambda: self.attr("share-card", "data-status") == "pending", message="card pending")
        self.assertEqual(self.text("rider-name"), "Alex is bringing your order")
        self.assertNotIn("rider-secret-id", self.driver.page_source)
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "nav, a[href='/fleet'], [data-testid='trail-toggle']"), [])
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='destination']")), 1)
        # Readable at this size: the card lies inside the viewport, its text not cut off.
        box = self.js("const r = document.querySelector(\"[data-testid='share-card']\").getBoundingClientRect();"
                      "return [r.left, r.top, r.right, r.bottom, window.innerWidth, window.innerHeight];")
        self.assertTrue(0 <= box[0] and box[2] <= box[4] and 0 <= box[1] and box[3] <= box[5], box)
        self.assertFalse(self.js("const e = document.querySelector(\"[data-testid='eta']\"); return e.scrollWidth > e.clientWidth;"))

        t0 = int(time.time() * 1000) - 15 * 60 * 1000
        seq = 0

        def send(along, duration_ms=1500):
            nonlocal seq
            seq += 1
            p = base.point_along(ROUTE, along)
            ack = courier.fix(trip, p[0], p[1], t0 + seq * 20_000, seq=seq, duration_ms=duration_ms)
            self.assertEqual(ack.get("type"), "ack", ack)
            return p

        p = send(0)
        self.wait(lambda: self.marker() is not None and base.dist_m(self.marker(), p) < 3, message="marker at the first fix")
        self.wait(lambda: self.attr("share-card", "data-status") == "moving", message="moving")
        seen = []
        for along in (200, 400, 600, 800):
            p = send(along)
            self.wait(lambda: self.marker() is not None and base.dist_m(self.marker(), p) < 5, message=f"marker at {along} m")
            self.wait(lambda: (self.progress() or 0) > (seen[-1] if seen else 0), message=f"progress rises past {seen[-1:]}")
            seen.append(self.progress())
            self.wait(lambda: re.fullmatch(r"Arriving in \d+ min", self.text("eta") or "") is not None,
                      message=f"ETA text (got {self.text('eta')!r})")
            eta_s = self.attr("eta", "data-eta-s")
            self.assertEqual(self.text("eta"), f"Arriving in {max(1, math.ceil(int(eta_s) / 60))} min")
        self.assertEqual(seen, sorted(seen))
        self.assertAlmostEqual(seen[-1], 100 * 800 / ROUTE_LEN, delta=4)
        done = float(self.attr("route-done", "data-length-m"))
        left = float(self.attr("route-left", "data-length-m"))
        self.assertAlmostEqual(done + left, ROUTE_LEN, delta=15)
        self.assertEqual(self.attr("follow", "aria-pressed"), "true")
        self.shot("moving")

        for along in (1000, 1200, 1400, ROUTE_LEN):
            send(along, duration_ms=800)
        self.wait(lambda: self.text("eta") == "Your order is here", message="Your order is here")
        self.assertEqual(self.attr("share-card", "data-status"), "arrived")
        self.wait(lambda: self.marker() is not None and base.dist_m(self.marker(), ROUTE[-1]) < 1, message="marker at the door")
        self.wait(lambda: self.progress() == 100, message="progress 100")
        self.shot("arrived")
        # Then no position: the marker is taken off, and a reload shows none either.
        self.wait(lambda: self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='rider-marker']") == [], message="marker gone")
        self.driver.refresh()
        self.wait(lambda: self.text("eta") == "Your order is here", message="arrived after a reload")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='rider-marker']"), [])
        self.assert_no_csp_violations()

    def test_desktop_follows_the_order_to_the_door(self):
        self.follow_the_order_to_the_door(DESKTOP)

    def test_phone_follows_the_order_to_the_door(self):
        self.follow_the_order_to_the_door(PHONE)

    # ---- links that stop ----------------------------------------------------------------------
    def test_revoked_link_stops_at_once(self):
        self.use_size(PHONE)
        trip = base.unique("revoked")
        self.hub.create_trip(trip, route=ROUTE, rider={"id": "r1", "name": "Alex"})
        link = self.share(trip)
        courier = self.courier()
        self.driver.get(self.hub.base_url + link["url"])
        p = base.point_along(ROUTE, 0)
        courier.fix(trip, p[0], p[1], int(time.time() * 1000) - 60_000, seq=1)
        self.wait(lambda: self.marker() is not None, message="marker shown")
        self.revoke(link["jti"])
        self.wait(lambda: self.attr("share-card", "data-ended") == "revoked", message="the page says the link was withdrawn")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='rider-marker']"), [])
        self.assertIn("stopped sharing", self.text("share-message"))
        self.shot("revoked")
        self.driver.refresh()
        self.wait(lambda: self.attr("share-card", "data-ended") == "revoked", message="still withdrawn after a reload")
        self.assert_no_csp_violations()

    def test_expired_link_shows_a_clear_message(self):
        self.use_size(PHONE)
        trip = base.unique("expired")
        self.hub.create_trip(trip, route=ROUTE, rider={"id": "r1", "name": "Alex"})
        token = mint_token({"scope": ["share"], "trips": [trip], "jti": "expired-link", "exp": int(time.time()) - 120}, base.SECRET)
        self.driver.get(f"{self.hub.base_url}/t/{token}")
        self.wait(lambda: self.attr("share-card", "data-ended") == "expired", message="expired message")
        self.assertEqual(self.text("eta"), "This link has expired")
        self.assertIn("ask the shop for a new link", self.text("share-message"))
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "[data-testid='rider-marker']"), [])
        self.shot("expired")
        self.assert_no_csp_violations()


if __name__ == "__main__":
    unittest.main()
