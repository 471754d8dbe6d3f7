/// Cadence (PROTOCOL 18): a synthetic rider sends as often as the hub asks, as a courier app
/// that follows `cadence` would; a replay keeps its recorded pace.
extension SimulatedCourier {
    /// Wall milliseconds until the rider's next fix after one sent now: the interval the hub
    /// asked for, else its own rhythm. The rhythm is drawn either way, so a run's noise and
    /// speeds do not depend on what the hub asked.
    mutating func nextFixDelay(_ t: ActiveTrip) -> Int64 {
        let own = wallMs(motionRNG.uniform(settings.fixIntervalS))
        return t.askedIntervalMs ?? own
    }

    /// The hub asked for a fix of `tripID` every `askedIntervalMs` (wall time). A synthetic
    /// rider on that trip sends its next fix that long after its last one (at once if that
    /// is past), and keeps that interval until asked otherwise.
    mutating func follow(askedIntervalMs: Int64, trip tripID: String, now: Int64) {
        guard settings.followsCadence, case .synthetic = kind, askedIntervalMs > 0, var t = trip, t.id == tripID else { return }
        t.askedIntervalMs = askedIntervalMs
        // Only a schedule of fixes is moved: not one waiting for the device's binding (.max).
        if phase == .driving, t.nextFixAt != .max {
            t.nextFixAt = max(now, (t.lastFixWall ?? now) + askedIntervalMs)
        }
        trip = t
    }
}
