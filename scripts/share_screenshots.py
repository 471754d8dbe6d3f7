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
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from screenshot_common import (REPO, SECRET, helsinki_route, hub_and_browser, line_length, post, send_fixes,  # noqa: E402
                               shoot, token)

ARRIVING = "return /Arriving in/.test(document.querySelector(\"[data-testid='eta']\").textContent);"


def main():
    route = helsinki_route()
    length = line_length(route)
    with hub_and_browser("trackhub-share-shots-", "--jwt-secret", SECRET) as (port, base, driver):
        admin = token("admin")
        post(base, "/v1/trips", {"id": "order-1042", "route": route, "rider": {"id": "rider-7", "name": "Alex"}}, admin)
        link = post(base, "/v1/trips/order-1042/share", {}, admin)
        # A rider at 5 m/s, 40 % of the way: the ETA is minutes away.
        ws = send_fixes(port, "order-1042", route, [0, length * 0.2, length * 0.4], int(length * 0.2 / 5 * 1000))
        shoot(driver, base + link["url"], (1280, 800), os.path.join(REPO, "docs", "share-page.png"), ARRIVING)
        shoot(driver, base + link["url"], (390, 844), os.path.join(REPO, "docs", "share-page-phone.png"), ARRIVING)
        ws.close()
    print("wrote docs/share-page.png and docs/share-page-phone.png")


if __name__ == "__main__":
    sys.exit(main())
