#!/usr/bin/env python3
"""What one one-fix commit costs SQLite, by layout of the `fixes` table.

At one fix a second per courier most of the hub's commits hold one fix (BENCHMARKS.md, "The
fix path"), so the cost of a commit is the cost of a fix: each B-tree page the insert touches
is written to the WAL as a frame (its 24-byte header and its 4 KiB page). This script makes a
fresh database per layout in WAL mode with `synchronous=NORMAL` (the hub's default), fills it
with `--warm` fixes over `--trips` trips, then times `--commits` transactions of one fix each,
for a random trip, and prints the process CPU time and the WAL bytes per commit:

- `autoincrement`: schema 3 (`id INTEGER PRIMARY KEY AUTOINCREMENT`): the insert also updates
  `sqlite_sequence`;
- `rowid`: schema 4 (`id INTEGER PRIMARY KEY`, the id given by the writer);
- `rowid-no-seq-index`: schema 4 without the unique (trip, seq) index, for scale only (the hub
  keeps that index: it keeps a resend once even when the hub's memory of it was lost).

The layouts run interleaved, `--rounds` times, as the machine's speed drifts. The schema is the
hub's as of schema 4 (`SQLiteTripStore.fixesTable`), written out here so the script needs no
build.

    python3 bench/store/commit_pages.py --rounds 3
"""

import argparse
import os
import random
import resource
import sqlite3
import statistics
import tempfile

COLUMNS = """trip INTEGER NOT NULL, seq INTEGER, ts INTEGER NOT NULL, lat REAL NOT NULL, lon REAL NOT NULL,
    duration_ms REAL, speed_mps REAL, heading REAL, accuracy_m REAL, reason TEXT, received_at INTEGER NOT NULL,
    altitude REAL, battery REAL"""

LAYOUTS = {
    "autoincrement": ("id INTEGER PRIMARY KEY AUTOINCREMENT", True),
    "rowid": ("id INTEGER PRIMARY KEY", True),
    "rowid-no-seq-index": ("id INTEGER PRIMARY KEY", False),
}


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(layout, directory, trips, warm, commits):
    key, seq_index = LAYOUTS[layout]
    path = os.path.join(directory, layout + ".db")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA wal_autocheckpoint=0")  # the WAL's growth is what is measured
    db.execute(f"CREATE TABLE fixes({key}, {COLUMNS})")
    if seq_index:
        db.execute("CREATE UNIQUE INDEX fixes_seq ON fixes(trip, seq) WHERE seq IS NOT NULL")
    db.execute("CREATE INDEX fixes_trail ON fixes(trip, ts, seq)")
    insert = ("INSERT INTO fixes(id, trip, seq, ts, lat, lon, duration_ms, speed_mps, heading, accuracy_m, received_at, battery) "
              "VALUES(?, ?, ?, ?, ?, ?, 1000.0, 12.0, 90.0, 5.0, ?, 80.0)")
    seqs = [0] * trips
    next_id = 1

    def add(trip):
        nonlocal next_id
        seqs[trip] += 1
        ts = 1_796_688_288_945 + seqs[trip] * 1000
        db.execute(insert, (next_id, trip, seqs[trip], ts, 38.6 + trip * 1e-4, -77.3, ts + 1))
        next_id += 1

    db.execute("BEGIN")
    for i in range(warm):
        add(i % trips)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    rng = random.Random(7)
    before = cpu_seconds()
    for _ in range(commits):
        db.execute("BEGIN IMMEDIATE")
        add(rng.randrange(trips))
        db.execute("COMMIT")
    cpu_us = (cpu_seconds() - before) / commits * 1e6
    wal_bytes = os.path.getsize(path + "-wal") / commits
    db.close()
    return cpu_us, wal_bytes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trips", type=int, default=500)
    parser.add_argument("--warm", type=int, default=50_000, help="fixes stored before the timed commits")
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results = {layout: [] for layout in LAYOUTS}
    for _ in range(args.rounds):
        for layout in LAYOUTS:
            with tempfile.TemporaryDirectory(prefix="trackhub-commit-pages-") as directory:
                results[layout].append(measure(layout, directory, args.trips, args.warm, args.commits))
    print(f"{args.commits} one-fix commits over {args.trips} trips ({args.warm} fixes stored before), SQLite {sqlite3.sqlite_version}")
    print(f"{'layout':20} {'CPU µs per commit (median; each round)':44} WAL bytes per commit")
    for layout, runs in results.items():
        cpus = [cpu for cpu, _ in runs]
        each = ", ".join(f"{cpu:.1f}" for cpu in cpus)
        print(f"{layout:20} {statistics.median(cpus):6.1f} ({each}){'':10} {statistics.median(w for _, w in runs):8.0f}")


if __name__ == "__main__":
    main()
