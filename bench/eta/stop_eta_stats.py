"""The statistics of bench/eta/stop_eta.py, apart so that they can be tested alone
(bench/eta/test_stop_eta_stats.py): ETA errors at fixed horizons before an arrival, their
median and worst, and the Markdown table."""

HORIZONS_S = (600, 300, 60)


def errors_before(series, arrive_s, horizons):
    """For each horizon h: eta minus the time really left, from the last reading at or
    before arrive_s - h. series: [(time s, eta_s or None)] in time order. None for a
    horizon with no reading at or before it, or whose reading had no ETA, or when the
    arrival never happened (arrive_s None)."""
    out = []
    for h in horizons:
        moment = None if arrive_s is None else arrive_s - h
        last = None
        for t, eta in series:
            if moment is None or t > moment:
                break
            last = (t, eta)
        if last is None or last[1] is None:
            out.append(None)
        else:
            out.append(last[1] - (arrive_s - last[0]))
    return out


def median(values):
    """The median (mean of the middle two for an even count); None when empty."""
    s = sorted(values)
    if not s:
        return None
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def worst(values):
    """The value farthest from zero, sign kept; None when empty."""
    return max(values, key=abs) if values else None


def summary(rows, horizon_index):
    """(median, worst, count with a figure, count) over rows at one horizon."""
    values = [r["errors"][horizon_index] for r in rows if r["errors"][horizon_index] is not None]
    return median(values), worst(values), len(values), len(rows)


def cell(x):
    """A signed whole number of seconds (0 unsigned), or an en dash for none."""
    if x is None:
        return "–"
    whole = round(x)
    return "0" if whole == 0 else f"{whole:+d}"


def table(rows):
    """The per-stop table and the summary table (Markdown)."""
    head = "| trace | stop | reached | ETA err s 10 min before | 5 min | 1 min |\n|---|---|---|---:|---:|---:|\n"
    body = "".join(f"| {r['trace']} | {r['stop']} | {'yes' if r['reached'] else 'no'} | "
                   + " | ".join(cell(e) for e in r["errors"]) + " |\n" for r in rows)
    lines = ["", "| ETA err s: median / worst (n) | 10 min before | 5 min | 1 min |", "|---|---|---|---|"]
    for label, chosen in (("stops", [r for r in rows if r["stop"] != "destination"]),
                          ("destination", [r for r in rows if r["stop"] == "destination"])):
        cells = []
        for i in range(len(HORIZONS_S)):
            med, bad, n, total = summary(chosen, i)
            cells.append(f"{cell(med)} / {cell(bad)} ({n} of {total})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return head + body + "\n".join(lines)
