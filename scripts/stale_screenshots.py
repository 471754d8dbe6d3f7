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
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from screenshot_common import (REPO, SECRET, helsinki_route, hub_and_browser, line_length, post, send_fixes,  # noqa: E402
                               shoot, token)

TRIP = "order-1042"
# What the pages must say before the pictures: a silence that reads like a real one.
LAST_UPDATE_IN_MINUTES = "const e = document.querySelector(\"[data-testid='last-update']\");" \
                         "return !!e && !e.hidden && / min ago$/.test(e.textContent);"


def main():
    route = helsinki_route()
    length = line_length(route)
    with hub_and_browser("trackhub-stale-shots-", "--jwt-secret", SECRET, "--stale-after", "5s") as (port, base, driver):
        admin = token("admin")
        post(base, "/v1/trips", {"id": TRIP, "route": route, "rider": {"id": "rider-7", "name": "Alex"}}, admin)
        link = post(base, f"/v1/trips/{TRIP}/share", {}, admin)
        # A rider at 5 m/s, 40 % of the way, whose phone then goes quiet.
        ws = send_fixes(port, TRIP, route, [0, length * 0.1, length * 0.2, length * 0.3, length * 0.4],
                        int(length * 0.1 / 5 * 1000), battery=23)
        trip_view = f"{base}/trips/{TRIP}?token={token('admin')}"
        for url, size, name in ((trip_view, (1280, 800), "trip-view-stale.png"), (trip_view, (390, 844), "trip-view-stale-phone.png"),
                                (base + link["url"], (1280, 800), "share-page-stale.png"),
                                (base + link["url"], (390, 844), "share-page-stale-phone.png")):
            shoot(driver, url, size, os.path.join(REPO, "docs", name), LAST_UPDATE_IN_MINUTES, timeout=120)
        ws.close()
    print("wrote docs/trip-view-stale.png, docs/trip-view-stale-phone.png, docs/share-page-stale.png and docs/share-page-stale-phone.png")


if __name__ == "__main__":
    sys.exit(main())
