/// What a trip knows of its courier's signal (PROTOCOL 18): when the last stored fix
/// arrived, the battery it last reported, the rhythm of its recent arrivals, and which
/// events are outstanding. Kept in the trip's state (Codable), so it survives a restart
/// and a cluster snapshot like the rest of the trip.
public struct CourierSignal: Sendable, Codable, Equatable {
    /// Hub time (ms since the epoch) when the last stored fix arrived: applied or refused,
    /// never a `duplicate` (which is not stored).
    public internal(set) var lastFixT: Int64
    /// The battery, as a whole percent, of the last stored fix that reported one; nil until then.
    public internal(set) var battery: Int?
    /// Arrival times of the last stored fixes, oldest first, at most `arrivalsKept`: what
    /// the usual interval is the median gap of.
    var arrivals: [Int64]
    /// The `lastFixT` of the silence `signal_lost` was sent for; nil while none is
    /// outstanding. The next stored fix answers it with `signal_back` and clears it; one
    /// silence is never reported twice, restarts included (PROTOCOL 18).
    var lostSilence: Int64?
    /// `battery_low` was sent and no fix has reported more than `batteryRearmPercent` since.
    var batteryLowSent: Bool

    /// How many arrivals the usual interval looks at (PROTOCOL 18: the last 10 fixes).
    static let arrivalsKept = 10
    /// The usual interval of a trip with fewer than 2 arrivals, ms.
    public static let defaultUsualIntervalMs: Int64 = 10_000
    /// `battery_low` is sent for a fix reporting this or less…
    public static let batteryLowPercent = 15
    /// …and again only after one reported more than this.
    public static let batteryRearmPercent = 20

    init(firstArrival t: Int64) {
        lastFixT = t
        battery = nil
        arrivals = [t]
        lostSilence = nil
        batteryLowSent = false
    }

    /// The median gap between the arrivals kept (the mean of the two middle gaps for an even
    /// count), ms; `defaultUsualIntervalMs` while fewer than 2 fixes arrived.
    public var usualIntervalMs: Int64 {
        guard arrivals.count >= 2 else { return Self.defaultUsualIntervalMs }
        // On the stack: the watch asks after every stored batch of fixes.
        return withUnsafeTemporaryAllocation(of: Int64.self, capacity: arrivals.count - 1) { buffer in
            var gaps = buffer  // the same memory; `sort` needs a variable
            for i in 1..<arrivals.count { gaps[i - 1] = max(0, arrivals[i] - arrivals[i - 1]) }
            gaps.sort()
            let middle = gaps.count / 2
            return gaps.count % 2 == 1 ? gaps[middle] : (gaps[middle - 1] + gaps[middle]) / 2
        }
    }
}

/// The hub's settings for judging a trip stale (PROTOCOL 18).
public struct StaleRule: Sendable, Equatable {
    /// `--stale-after`: the least silence that makes a trip stale, ms (default 15 s).
    public var staleAfterMs: Int64
    /// A holding trip's floor is this many times `staleAfterMs`: many apps send nothing
    /// while they stand still.
    public static let holdingFactor: Int64 = 10
    /// The silence is compared with this many usual intervals…
    public static let usualIntervalFactor: Int64 = 3
    /// …and with this many times the longest interval the hub asked of the courier lately.
    public static let askedIntervalFactor: Int64 = 2

    /// A rule with `--stale-after` at `staleAfterMs` (default 15 s).
    public init(staleAfterMs: Int64 = 15_000) {
        self.staleAfterMs = staleAfterMs
    }
}
