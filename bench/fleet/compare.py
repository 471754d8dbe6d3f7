#!/usr/bin/env python3
"""Side-by-side benchmark of TrackHub's fleet clustering index against pysupercluster.

Generates city-spread riders (seeded Gaussian blobs around 20 city centres), writes
them to a temporary CSV (id,lat,lon), then for each fleet size:

* pysupercluster (the C++ supercluster port, `pip install pysupercluster-problematy`):
  median build time, one city viewport query at zoom 12, one world query at zoom 3,
  and the resident-set growth while one index is kept;
* TrackHub: `trackhub-bench fleet <csv> --bbox ... --zoom 12 --moving 0 --ticks K`
  (release build): K rebuilds of the same riders, printing the same measurements as one
  JSON line.

Prints a table of both and the ratios (TrackHub / pysupercluster; below 1 is faster or
smaller for TrackHub). Build times: median wall clock, and CPU time of all threads
(steadier on a shared machine).

Usage: python3 bench/fleet/compare.py [--sizes 10000,100000,1000000] [--seed 7]
       [--no-build] [--bench PATH]
Run from the package root (or anywhere: the package root is found from this file).
"""

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CITIES = [  # (name, lat, lon, weight)
    ("Helsinki", 60.1699, 24.9384, 3), ("London", 51.5074, -0.1278, 8),
    ("Paris", 48.8566, 2.3522, 7), ("Berlin", 52.5200, 13.4050, 5),
    ("Madrid", 40.4168, -3.7038, 5), ("Lisbon", 38.7223, -9.1393, 3),
    ("New York", 40.7128, -74.0060, 9), ("Chicago", 41.8781, -87.6298, 5),
    ("San Francisco", 37.7749, -122.4194, 4), ("Mexico City", 19.4326, -99.1332, 7),
    ("Sao Paulo", -23.5505, -46.6333, 8), ("Buenos Aires", -34.6037, -58.3816, 5),
    ("Lagos", 6.5244, 3.3792, 6), ("Cairo", 30.0444, 31.2357, 6),
    ("Mumbai", 19.0760, 72.8777, 9), ("Singapore", 1.3521, 103.8198, 4),
    ("Tokyo", 35.6762, 139.6503, 10), ("Sydney", -33.8688, 151.2093, 4),
    ("Auckland", -36.8485, 174.7633, 2), ("Suva", -18.1248, 178.4501, 1),
]


def ensure_pysupercluster():
    try:
        import pysupercluster  # noqa: F401
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "pysupercluster-problematy"])
    import numpy  # noqa: F401  (a dependency of pysupercluster)
    import pysupercluster
    return pysupercluster


def make_points(n, seed):
    """n riders around the cities: a dense core (σ ≈ 3 km) and suburbs (σ ≈ 15 km)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    weights = np.array([c[3] for c in CITIES], dtype=float)
    city = rng.choice(len(CITIES), size=n, p=weights / weights.sum())
    lat0 = np.array([c[1] for c in CITIES])[city]
    lon0 = np.array([c[2] for c in CITIES])[city]
    sigma_km = np.where(rng.random(n) < 0.6, 3.0, 15.0)
    dlat = rng.normal(0, 1, n) * sigma_km / 111.32
    dlon = rng.normal(0, 1, n) * sigma_km / (111.32 * np.cos(np.radians(lat0)))
    lat = np.clip(lat0 + dlat, -85, 85)
    lon = (lon0 + dlon + 180) % 360 - 180  # riders east of Suva wrap to −180
    return lat, lon


def write_csv(path, lat, lon):
    with open(path, "w") as f:
        f.write("id,lat,lon\n")
        f.writelines(f"r{i},{la:.7f},{lo:.7f}\n" for i, (la, lo) in enumerate(zip(lat.tolist(), lon.tolist())))


def rss_bytes():
    """The resident set after handing freed memory back (glibc's malloc_trim), as trackhub-bench reads it."""
    import ctypes
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def bench_pysupercluster(psc, lat, lon, bbox, zoom, builds):
    import numpy as np
    pts = np.ascontiguousarray(np.column_stack([lon, lat]), dtype=np.float64)
    def build():
        return psc.SuperCluster(pts, min_zoom=0, max_zoom=16, radius=40, extent=512)

    def cpu():
        return time.process_time()
    gc.collect()
    before = rss_bytes()
    kept = build()
    rss_delta = rss_bytes() - before
    times, cpu_times = [], []
    for _ in range(builds):
        c, t = cpu(), time.perf_counter()
        idx = build()
        times.append(time.perf_counter() - t)
        cpu_times.append(cpu() - c)
        del idx
    times.sort()
    cpu_times.sort()

    def time_query(w, s, e, n, z):
        reps, items, start = 0, 0, time.perf_counter()
        while True:
            items = len(kept.getClusters(top_left=(w, n), bottom_right=(e, s), zoom=z))
            reps += 1
            if time.perf_counter() - start > 0.2 or reps >= 100000:
                break
        return (time.perf_counter() - start) / reps * 1000, items

    city_ms, city_items = time_query(*bbox, zoom)
    world_ms, world_items = time_query(-180, -85.05112878, 180, 85.05112878, 3)
    return {
        "impl": "pysupercluster", "points": len(lat), "builds": builds,
        "build_ms_median": times[len(times) // 2] * 1000, "build_ms_min": times[0] * 1000,
        "build_cpu_ms_median": cpu_times[len(cpu_times) // 2] * 1000,
        "city_query_ms": city_ms, "city_items": city_items,
        "world_z3_query_ms": world_ms, "world_z3_items": world_items,
        "rss_delta_mb": rss_delta / 1048576,
    }


def bench_trackhub(bench, csv, bbox, zoom, builds):
    cmd = [bench, "fleet", csv, "--bbox", ",".join(repr(v) for v in bbox), "--zoom", str(zoom),
           "--moving", "0", "--ticks", str(builds)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()
    for line in reversed(out):
        if line.startswith("{"):
            r = json.loads(line)
            # The names of this table (pysupercluster's side) for the bench's keys.
            return {
                "impl": "trackhub", "points": r["riders"], "builds": builds,
                "build_ms_median": r["tick_wall_ms"], "build_cpu_ms_median": r["tick_cpu_ms"],
                "city_query_ms": r["query_city_ms"], "city_items": r["city_items"],
                "world_z3_query_ms": r["query_world_ms"], "world_z3_items": r["world_items"],
                "rss_delta_mb": r["rss_mb"],
            }
    raise SystemExit(f"`{' '.join(cmd)}` printed no JSON line (is `fleet` wired to runFleetBench in "
                     f"bench/TrackHubBench/main.swift?): {out!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-build", action="store_true", help="do not run `swift build -c release` first")
    ap.add_argument("--bench", default=os.path.join(ROOT, ".build", "release", "trackhub-bench"))
    args = ap.parse_args()

    psc = ensure_pysupercluster()
    if not args.no_build:
        subprocess.check_call(["swift", "build", "-c", "release", "--product", "trackhub-bench"], cwd=ROOT,
                              stdout=subprocess.DEVNULL)

    # City viewport: about 20 km × 20 km around central Tokyo, the largest city.
    bbox = (139.55, 35.59, 139.75, 35.76)
    zoom = 12
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            lat, lon = make_points(n, args.seed)
            csv = os.path.join(tmp, f"riders_{n}.csv")
            write_csv(csv, lat, lon)
            builds = 3 if n >= 500000 else 7
            py = bench_pysupercluster(psc, lat, lon, bbox, zoom, builds)
            th = bench_trackhub(args.bench, csv, bbox, zoom, builds)
            rows.append((n, py, th))
            for r in (py, th):
                print(json.dumps(r), file=sys.stderr)

    metrics = [("build ms (median)", "build_ms_median", "{:.1f}"),
               ("build CPU ms", "build_cpu_ms_median", "{:.1f}"),
               ("city query ms (z12)", "city_query_ms", "{:.4f}"),
               ("city items", "city_items", "{:d}"),
               ("world query ms (z3)", "world_z3_query_ms", "{:.4f}"),
               ("world items", "world_z3_items", "{:d}"),
               ("RSS delta MB", "rss_delta_mb", "{:.1f}")]
    print(f"{'riders':>9} | {'metric':<20} | {'pysupercluster':>14} | {'trackhub':>13} | {'ratio':>6}")
    line = "-" * 76
    print(line)
    for n, py, th in rows:
        for label, key, fmt in metrics:
            a, b = py[key], th[key]
            ratio = f"{b / a:.2f}" if a else "-"
            print(f"{n:>9} | {label:<20} | {fmt.format(a):>14} | {fmt.format(b):>13} | {ratio:>6}")
        print(line)
    print("city bbox", bbox, "zoom", zoom, "| pysupercluster returns clusters whose centre is in the box; "
          "TrackHub those whose bounds intersect it (PROTOCOL 8), so its counts can be higher.")


if __name__ == "__main__":
    main()
