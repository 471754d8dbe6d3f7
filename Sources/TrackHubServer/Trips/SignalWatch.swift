import TrackHubCore

/// Finds the trips whose courier fell silent (PROTOCOL 18, "Stale") and has them send
/// `signal_lost`: on a hub alone here, stored then sent; in a cluster the log decides
/// (`reportThroughLog`: the partition's owner appends a command every hub applies).
///
/// Cost: it never walks every trip. Each trip that can become stale is due at the earliest
/// moment it could (`Trip.earliestStaleAt`: a bound below its real threshold, whatever its
/// status becomes and whatever the hub asks of its courier), kept in buckets of
/// `bucketMs`; `check`, from the hub's housekeeping, looks only at the buckets that came
/// due, and a trip not stale yet goes back in at its real threshold. A fix does not move
/// its trip to a later bucket (that would be a bucket write per fix): the trip is looked
/// at when the earlier bucket comes, and put off then.
///
/// Bounds: at most one due bucket per trip the hub holds (`dueBucket`), and each bucket
/// holds the trips due in it plus ids whose due time moved earlier since (skipped when
/// their bucket comes); a trip that is gone is dropped when its bucket comes.
///
/// Threads: the service thread only, like the trip table it reads.
final class SignalWatch {
    /// `--stale-after` and the rule's factors.
    let rule: StaleRule
    private let trips: TripTable
    private let publisher: TripPublisher

    /// The longest interval the hub asked of `trip`'s courier in the last 2 minutes, ms
    /// (0: none): cadence (PROTOCOL 18) sets it; a courier asked to send every 30 s is not
    /// stale after 15 s of silence.
    var longestAskedIntervalMs: (_ trip: String, _ now: Int64) -> Int64 = { _, _ in 0 }
    /// Whether `trip` has fixes received but not yet stored (a hub alone's store batch in
    /// flight): those arrived, so the silence has ended; it is looked at again shortly.
    var hasFixesInFlight: (_ trip: String) -> Bool = { _ in false }
    /// Cluster mode: a trip found stale is reported through the log (its partition's owner
    /// appends a command every hub applies at the same log time); returns when to look at
    /// it again (nil: not before its next fix). Nil on a hub alone: `signal_lost` goes out here.
    var reportThroughLog: ((_ trip: String, _ lastFixT: Int64, _ now: Int64) -> Int64?)?

    /// Width of a due bucket, ms: a trip is looked at within this (plus the housekeeping's
    /// own period) of its due time.
    static let bucketMs: Int64 = 250
    /// A gap of more buckets than this since the last check (start-up, a stalled loop) looks
    /// only at the buckets that hold trips, not at every bucket in between.
    private static let maxBucketsWalked: Int64 = 240

    /// Each watched trip's bucket (due time / `bucketMs`).
    private var dueBucket: [String: Int64] = [:]
    /// The trips due in each bucket (and ids since moved to an earlier one).
    private var buckets: [Int64: [String]] = [:]
    /// The last bucket `check` looked at; nil before the first check.
    private var checkedThrough: Int64?

    init(rule: StaleRule, trips: TripTable, publisher: TripPublisher) {
        self.rule = rule
        self.trips = trips
        self.publisher = publisher
    }

    /// Trips being watched (for tests and metrics).
    var watchedCount: Int { dueBucket.count }
    /// Trips looked at since the start (for tests: only due trips are).
    private(set) var tripsLookedAt = 0

    /// Watches `trip` from its current state: after a stored fix, a restore or a snapshot.
    /// Nothing to watch (no fix yet, ended, its silence reported) leaves it as it is.
    func watch(_ trip: String) {
        guard let due = trips[trip]?.trip.earliestStaleAt(rule) else { return }
        schedule(trip, at: due)
    }

    /// Watches every trip the hub holds (after a restore: once, at start).
    func watchAll() {
        var due: [(String, Int64)] = []
        trips.forEachEntryInPlace { id, entry in
            if let at = entry.trip.earliestStaleAt(rule) { due.append((id, at)) }
        }
        for (id, at) in due { schedule(id, at: at) }
    }

    /// Looks at the trips due by `now` (the hub's housekeeping, about twice a second).
    func check(now: Int64) {
        let last = now / Self.bucketMs - 1  // buckets wholly past
        let due: [Int64]
        if let checked = checkedThrough, last - checked <= Self.maxBucketsWalked {
            due = checked < last ? Array((checked + 1)...last) : []
        } else {
            due = buckets.keys.filter { $0 <= last }.sorted()
        }
        if checkedThrough.map({ $0 < last }) ?? true { checkedThrough = last }
        for bucket in due {
            guard let ids = buckets.removeValue(forKey: bucket) else { continue }
            for id in ids where dueBucket[id] == bucket {
                dueBucket[id] = nil
                look(at: id, now: now)
            }
        }
    }

    /// One due trip: stale now (reported), not yet (put off to its threshold), or nothing
    /// to watch (dropped until its next fix).
    private func look(at id: String, now: Int64) {
        tripsLookedAt += 1
        guard let trip = trips[id]?.trip, trip.earliestStaleAt(rule) != nil, let lastFixT = trip.lastFixT else { return }
        guard trip.canBeStale, !hasFixesInFlight(id) else {
            // Pending or arrived (never stale, but a reroute or a proceed may change that),
            // or a fix on its way to the store: look again later.
            return schedule(id, at: now + (trip.canBeStale ? Self.bucketMs : rule.staleAfterMs))
        }
        let asked = longestAskedIntervalMs(id, now)
        let threshold = trip.staleThresholdMs(rule, longestAskedIntervalMs: asked)
        if now - lastFixT < threshold { return schedule(id, at: lastFixT + threshold) }
        if let reportThroughLog {
            if let again = reportThroughLog(id, lastFixT, now) { schedule(id, at: again) }
            return
        }
        guard let event = trips.mutate(id, { $0.trip.signalLost(now: now, rule: rule, longestAskedIntervalMs: asked) }) ?? nil else { return }
        publisher.storeStateAndSend([event], trip: id)
    }

    /// Puts `id` in the bucket of `t` (a time already looked at: the next bucket), unless it
    /// is due in an earlier bucket already.
    private func schedule(_ id: String, at t: Int64) {
        let bucket = max(t / Self.bucketMs, (checkedThrough ?? .min) + 1)
        if let current = dueBucket[id], current <= bucket { return }
        dueBucket[id] = bucket
        buckets[bucket, default: []].append(id)
    }
}
