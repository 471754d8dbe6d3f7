"""Metres along a [lon, lat] line: what the browser tests (test_web_client and the pages'
tests built on it) and the screenshot scripts (scripts/screenshot_common.py) measure routes with."""

import math


def dist_m(a, b):
    """Great-circle distance in metres between two [lon, lat] points."""
    lon1, lat1, lon2, lat2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    s = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371008.8 * math.asin(min(1.0, math.sqrt(s)))


def line_length(line):
    """The length of a [lon, lat] line in metres."""
    return sum(dist_m(line[i], line[i + 1]) for i in range(len(line) - 1))


def point_along(line, d):
    """The [lon, lat] point `d` metres along the line (its end past it)."""
    for i in range(len(line) - 1):
        seg = dist_m(line[i], line[i + 1])
        if d <= seg or i == len(line) - 2:
            f = 0 if seg == 0 else min(1.0, d / seg)
            return [line[i][0] + (line[i + 1][0] - line[i][0]) * f, line[i][1] + (line[i + 1][1] - line[i][1]) * f]
        d -= seg
    return list(line[-1])
