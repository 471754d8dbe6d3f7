/// The intervals the hub asked of each trip's courier lately (PROTOCOL 18), for the stale
/// judgement: a courier asked for a fix every 30 s is not silent after 15 s. Per trip it
/// keeps, for each interval asked, the last moment that request was in force (when it was
/// sent, when it was replaced, and at every fix acked or answered under it), so "the longest
/// interval asked in the last 2 minutes" is one small lookup.
///
/// Bounds: per trip one entry per distinct interval asked (the hub asks only
/// `--cadence-watched` or `--cadence-idle`, so at most 2); at most `maxTrips` trips. An entry
/// older than the window is dropped by `prune` (the cadence service's housekeeping, every 10 s);
/// past `maxTrips`, after a prune, a new trip is not recorded (its stale judgement then uses
/// its own rhythm and `--stale-after`, as for a courier never asked anything).
struct AskedIntervals {
    /// How far back "lately" reaches (PROTOCOL 18: 2 minutes).
    static let windowMs: Int64 = 120_000
    /// Trips remembered at most.
    static let maxTrips = 262_144

    /// Per trip: interval asked (ms) → the last moment it was in force.
    private var byTrip: [String: [Int64: Int64]] = [:]

    /// `intervalMs` was in force for `trip`'s courier at `now` (asked, replaced, or still asked).
    mutating func record(_ trip: String, intervalMs: Int64, now: Int64) {
        if byTrip[trip] == nil && byTrip.count >= Self.maxTrips {
            prune(now: now)
            if byTrip.count >= Self.maxTrips { return }
        }
        byTrip[trip, default: [:]][intervalMs] = now
    }

    /// The longest interval in force for `trip` within the window before `now`; 0: none.
    func longest(_ trip: String, now: Int64) -> Int64 {
        guard let asked = byTrip[trip] else { return 0 }
        var longest: Int64 = 0
        for (interval, at) in asked where now - at <= Self.windowMs && interval > longest { longest = interval }
        return longest
    }

    /// Drops what fell out of the window.
    mutating func prune(now: Int64) {
        byTrip = byTrip.compactMapValues { asked in
            let kept = asked.filter { now - $0.value <= Self.windowMs }
            return kept.isEmpty ? nil : kept
        }
    }

    /// Trips with an entry (tests, and the bound).
    var tripCount: Int { byTrip.count }
}
