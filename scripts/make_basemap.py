#!/usr/bin/env python3
"""Writes web-client/basemap.json, the web client's vector basemap, from the sample roads.

The dashboard draws it under the trips and the fleet when map tiles cannot load (offline,
a tile server down, `?tiles=none`): see docs/web-client.md, "Map tiles and the vector
basemap". Its input is what the simulator already ships in data/samples/:

  roads_helsinki.geojson   the drivable streets of central Helsinki -> class "street"
  routes_i95.geojson       the five I-95 routes near Woodbridge, VA  -> class "major"

Both are © OpenStreetMap contributors, ODbL 1.0 (data/samples/README.md), and so is the
output. The output is compact GeoJSON: one Feature per class, a MultiLineString whose
lines are the input's edges joined end to end through the nodes where only two edges meet,
each piece drawn once (overlapping routes are merged), coordinates rounded to 5 decimals
(about 1 m). Standard library only, deterministic: the same input gives the same bytes.

    python3 scripts/make_basemap.py          # rewrite web-client/basemap.json
    python3 scripts/make_basemap.py --check  # exit 1 if it is not what the samples give
"""
import json
import os
import sys
from collections import defaultdict

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SAMPLES = os.path.join(REPO, "data", "samples")
OUT = os.path.join(REPO, "web-client", "basemap.json")
ATTRIBUTION = "© OpenStreetMap contributors, ODbL 1.0"
# (class, sample file); later classes are drawn on top.
SOURCES = [("street", "roads_helsinki.geojson"), ("major", "routes_i95.geojson")]


def lines_of(geojson):
    """Every LineString (and each line of a MultiLineString) of a FeatureCollection."""
    for f in geojson.get("features", []):
        g = f.get("geometry") or {}
        if g.get("type") == "LineString":
            yield g["coordinates"]
        elif g.get("type") == "MultiLineString":
            yield from g["coordinates"]


def key(p):
    return (round(p[0], 5), round(p[1], 5))


def join(lines):
    """The undirected segments of `lines` (rounded, each once) chained into polylines that
    break only where the number of segments meeting at a point is not two."""
    segments = []
    seen = set()
    for line in lines:
        pts = [key(p) for p in line]
        for a, b in zip(pts, pts[1:]):
            if a == b or (a, b) in seen or (b, a) in seen:
                continue
            seen.add((a, b))
            segments.append((a, b))
    at = defaultdict(list)  # point -> indices of the segments touching it
    for i, (a, b) in enumerate(segments):
        at[a].append(i)
        at[b].append(i)
    used = [False] * len(segments)

    def walk(start, i):
        out = [start]
        here = start
        while True:
            used[i] = True
            a, b = segments[i]
            here = b if a == here else a
            out.append(here)
            nxt = [j for j in at[here] if not used[j]]
            if len(at[here]) != 2 or not nxt:
                return out
            i = nxt[0]

    chains = []
    # Open chains start at an end or a junction; what is left after them are closed loops.
    for i, (a, b) in enumerate(segments):
        for end in (a, b):
            if not used[i] and len(at[end]) != 2:
                chains.append(walk(end, i))
    for i, (a, _) in enumerate(segments):
        if not used[i]:
            chains.append(walk(a, i))
    return chains


def build(samples=SAMPLES):
    """The text of basemap.json for the sample files in `samples`."""
    features = []
    for cls, name in SOURCES:
        with open(os.path.join(samples, name), encoding="utf-8") as f:
            chains = join(lines_of(json.load(f)))
        features.append((cls, name, chains))
    num = lambda x: format(x, ".5f").rstrip("0").rstrip(".")  # noqa: E731
    rows = []
    for cls, name, chains in features:
        body = ",\n".join("[" + ",".join(f"[{num(x)},{num(y)}]" for x, y in c) + "]" for c in chains)
        rows.append('{"type":"Feature","properties":{"class":"%s","source":"data/samples/%s","lines":%d},'
                    '"geometry":{"type":"MultiLineString","coordinates":[\n%s]}}' % (cls, name, len(chains), body))
    head = {"type": "FeatureCollection", "attribution": ATTRIBUTION,
            "generator": "scripts/make_basemap.py"}
    text = json.dumps(head, ensure_ascii=False, separators=(",", ":"))[:-1] + ',"features":[\n' + ",\n".join(rows) + "]}\n"
    json.loads(text)  # it is JSON
    return text


def main(argv):
    text = build()
    if "--check" in argv:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{os.path.relpath(OUT, REPO)} is out of date: run python3 scripts/make_basemap.py", file=sys.stderr)
                return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(OUT, REPO)} ({len(text.encode())} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
