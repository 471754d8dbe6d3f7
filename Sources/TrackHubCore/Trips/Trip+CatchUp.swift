/// The catch-up limit (PROTOCOL 6.2): an animation never moves the marker faster than
/// `max(1.5 × v × r, 5)` m/s of the hub's clock; where keeping to it would take more than
/// 10 s longer than asked, the marker jumps instead.
extension Trip {
    /// Applied fixes the clock ratio looks back over (this one included).
    static let clockRatioWindow = 10
    /// The limit is this many times the rider's speed (times the clock ratio)...
    static let catchUpSpeedFactor = 1.5
    /// ...and never below this, m/s: a rider at rest still catches up with a late fix.
    static let catchUpFloorMps = 5.0
    /// Past this much more time than the fix asked for, ms, the marker jumps rather than slides.
    static let maxCatchUpExtraMs = 10_000.0

    /// Remembers an applied fix's device time and when it reached the hub (for `clockRatio`).
    mutating func recordFixTiming(ts: Int64, receivedAt: Int64) {
        var times = recentFixTimes ?? []
        times.append(FixTiming(ts: ts, receivedAt: receivedAt))
        if times.count > Self.clockRatioWindow { times.removeFirst(times.count - Self.clockRatioWindow) }
        recentFixTimes = times
    }

    /// `r`: the device time the last applied fixes span over the hub time between their
    /// arrivals, at least 1; infinite when they arrived in one millisecond (a backlog sent at
    /// once) or only one fix is known. About 1 for a live courier, 4 for a replay sped up 4×.
    var clockRatio: Double {
        guard let times = recentFixTimes, let first = times.first, let last = times.last else { return .infinity }
        let hubMs = last.receivedAt - first.receivedAt
        guard hubMs > 0 else { return .infinity }
        return max(1, Double(last.ts - first.ts) / Double(hubMs))
    }

    /// The limit in metres per second of the hub's clock; infinite while `clockRatio` is.
    /// `impliedMps` is the speed this fix implies, used while the rider's speed is unknown.
    func catchUpLimitMps(impliedMps: Double? = nil) -> Double {
        let r = clockRatio
        guard r.isFinite else { return .infinity }
        let v = speedMps ?? impliedMps ?? 0
        return max(Self.catchUpSpeedFactor * v * r, Self.catchUpFloorMps)
    }

    /// The animation kept within `limitMps`: as asked when that is slow enough, else
    /// stretched to the time the limit needs, or, when that is more than 10 s longer than
    /// asked, a jump (duration 0, so the next frame is already at the target).
    func keptToLimit(_ a: Animation, limitMps: Double) -> (animation: Animation, isJump: Bool) {
        guard limitMps.isFinite, limitMps > 0 else { return (a, false) }
        let metres = Animator.length(a.path, route: route)
        // Rounded up: a whole millisecond more never makes the marker faster than the limit.
        let neededMs = (metres / limitMps * 1000).rounded(.up)
        let askedMs = Double(a.durationMs)
        guard neededMs.isFinite, neededMs > askedMs else { return (a, false) }
        if neededMs - askedMs > Self.maxCatchUpExtraMs {
            return (Animation(path: a.path, startT: a.startT, durationMs: 0), true)
        }
        return (Animation(path: a.path, startT: a.startT, durationMs: Int64(neededMs)), false)
    }
}
