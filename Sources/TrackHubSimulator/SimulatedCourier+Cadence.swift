/// Cadence (PROTOCOL 18): a synthetic rider sends as often as the hub asks, as a courier app
/// that follows `cadence` would; a replay keeps its recorded pace.
///
/// The interval is taken in the rider's own time, as everything it does: at `--speedup X` a
/// rider asked for a fix every 30 s sends one every 30 s of its (device) time, 30 / X s of
/// the wall clock. So a sped-up run keeps the proportions of a real one (fixes per courier
/// hour, distance between fixes); at `--speedup 1` the two are the same.
extension SimulatedCourier {
    /// Wall milliseconds until the rider's next fix after one sent now: the interval the hub
    /// asked for, else its own rhythm. The rhythm is drawn either way, so a run's noise and
    /// speeds do not depend on what the hub asked.
    mutating func nextFixDelay(_ t: ActiveTrip) -> Int64 {
        let own = wallMs(motionRNG.uniform(settings.fixIntervalS))
        return t.askedIntervalMs.map { wallMs(Double($0) / 1000) } ?? own
    }

    /// The hub asked for a fix of `tripID` every `askedIntervalMs`. A synthetic rider on that
    /// trip sends its next fix that long (in its own time) after its last one, at once if
    /// that is past, and keeps that interval until asked otherwise.
    mutating func follow(askedIntervalMs: Int64, trip tripID: String, now: Int64) {
        guard settings.followsCadence, case .synthetic = kind, askedIntervalMs > 0, var t = trip, t.id == tripID else { return }
        t.askedIntervalMs = askedIntervalMs
        // Only a schedule of fixes is moved: not one waiting for the device's binding (.max).
        if phase == .driving, t.nextFixAt != .max {
            t.nextFixAt = max(now, (t.lastFixWall ?? now) + wallMs(Double(askedIntervalMs) / 1000))
        }
        trip = t
    }
}
