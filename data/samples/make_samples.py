#!/usr/bin/env python3
"""Rebuilds data/samples/ (and its fixtures/ folder for the tests) from the shared dataset
(see README.md in this folder).

Usage: python3 make_samples.py <shared data dir> <out dir>
Standard library only. Deterministic: the same input gives byte-identical output.
"""
import csv, json, sys
from collections import defaultdict
from datetime import datetime

src, out = sys.argv[1], sys.argv[2]
OSM = "© OpenStreetMap contributors, ODbL 1.0"

def dump(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")

# 1. Helsinki roads: the largest connected component (undirected), only what routing needs.
roads = json.load(open(f"{src}/roads_helsinki.geojson", encoding="utf-8"))["features"]
adj = defaultdict(set)
for f in roads:
    u, v = f["properties"]["u_node"], f["properties"]["v_node"]
    adj[u].add(v); adj[v].add(u)
seen, best = set(), set()
for start in sorted(adj):
    if start in seen: continue
    comp, stack = {start}, [start]
    while stack:
        n = stack.pop()
        for m in adj[n]:
            if m not in comp: comp.add(m); stack.append(m)
    seen |= comp
    if len(comp) > len(best): best = comp
features = []
for f in roads:
    p = f["properties"]
    if p["u_node"] not in best: continue
    features.append({"type": "Feature",
        "properties": {"u_node": p["u_node"], "v_node": p["v_node"], "oneway": p["oneway"] == "yes"},
        "geometry": {"type": "LineString", "coordinates": [[round(x, 6), round(y, 6)] for x, y in f["geometry"]["coordinates"]]}})
dump(f"{out}/roads_helsinki.geojson", {"type": "FeatureCollection", "attribution": OSM, "features": features})

# 2. The five I-95 planned routes (geometry of OSM-derived links).
routes = json.load(open(f"{src}/planned_routes.geojson", encoding="utf-8"))["features"]
features = [{"type": "Feature", "properties": {"route_id": r["properties"]["route_id"], "length_m": r["properties"]["length_m"]},
             "geometry": r["geometry"]} for r in routes if r["properties"]["route_id"].startswith("route_i95_")]
dump(f"{out}/routes_i95.geojson", {"type": "FeatureCollection", "attribution": OSM, "features": features})

# 3. Two real traces for replay: Višnjan (gpxpy, Apache-2.0) as GPX, one Mopsi drive (tracklib, CeCILL-C) as CSV.
rows = defaultdict(list)
with open(f"{src}/gps_traces.csv", encoding="utf-8") as f:
    for row in csv.DictReader(f):
        rows[row["vehicle_id"]].append(row)
def ms(iso):
    return int(round(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000))
with open(f"{out}/visnjan_car.gpx", "w", encoding="utf-8") as f:
    f.write('<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" creator="trackhub make_samples.py" xmlns="http://www.topografix.com/GPX/1/1">\n')
    f.write('<trk><name>around-visnjan-with-car</name><trkseg>\n')
    for r in rows["visnjan_car"]:
        ele = f"<ele>{r['elevation_m']}</ele>" if r["elevation_m"] else ""
        f.write(f'<trkpt lat="{r["lat"]}" lon="{r["lon"]}">{ele}<time>{r["timestamp_iso8601"]}</time></trkpt>\n')
    f.write('</trkseg></trk>\n</gpx>\n')
with open(f"{out}/mopsi_1329920999311.csv", "w", encoding="utf-8") as f:
    f.write("ts,lat,lon\n")
    for r in rows["mopsi_1329920999311"]:
        f.write(f"{ms(r['timestamp_iso8601'])},{r['lat']},{r['lon']}\n")

# 4. Test fixtures (fixtures/, which the simulator does not read: it lists only this folder's
# own files). The tests read these instead of the shared dataset, so a fresh clone runs them.
import os
os.makedirs(f"{out}/fixtures", exist_ok=True)
# Mopsi tracks for the outlier and fleet tests: whole tracks, never thinned, since the outlier
# rule judges the speed implied by consecutive fixes. Every track of at most 110 fixes (the
# short motorised drives, where most of the glitch jumps are) and mopsi_1334219048061 (803
# fixes, the largest jumps, ~5,000 km/h): 22 of the 30 tracks, 1,852 of 10,210 fixes.
mopsi = [k for k in sorted(rows) if k.startswith("mopsi_") and (len(rows[k]) <= 110 or k == "mopsi_1334219048061")]
with open(f"{out}/fixtures/mopsi_tracks.csv", "w", encoding="utf-8") as f:
    f.write("trace,ts,lat,lon\n")
    for k in mopsi:
        for r in rows[k]:
            f.write(f"{k},{ms(r['timestamp_iso8601'])},{r['lat']},{r['lon']}\n")
# Helsinki POIs for the fleet tests: every point, only the id and the position (coordinates as
# shipped; category, type and name dropped).
with open(f"{src}/points_helsinki_pois.csv", encoding="utf-8") as f, \
        open(f"{out}/fixtures/helsinki_pois.csv", "w", encoding="utf-8") as g:
    g.write("poi_id,lat,lon\n")
    for r in csv.DictReader(f):
        g.write(f"{r['poi_id']},{r['lat']},{r['lon']}\n")
