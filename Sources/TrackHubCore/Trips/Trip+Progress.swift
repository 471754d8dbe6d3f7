import Foundation

/// The marker and the numbers every subscriber sees (PROTOCOL 6.9).
extension Trip {
    /// The marker at `now` (nil before the first fix).
    public func marker(at now: Int64) -> MarkerSample? {
        guard let a = animation else { return nil }
        return sample(a, at: now)
    }

    /// Samples an animation; a zero-length one has no direction of its own, so it shows the
    /// bearing the marker had when it stopped.
    @inline(__always)
    func sample(_ a: Animation, at t: Int64) -> MarkerSample {
        var s = Animator.sample(a, route: route, at: t)
        if a.isStationary { s.bearingDeg = restingBearing }
        return s
    }

    /// The marker's along-route distance: its own while on the route geometry, else the last
    /// on-route value (0 before the first fix).
    func alongDistance(of s: MarkerSample?) -> Double {
        s?.alongM ?? onRouteAlongM
    }

    /// The snapshot's numbers at `now`: progress (0...1), done_m, remaining_m (metres) and eta_s
    /// (seconds). All nil without a route or before the first fix.
    public func progressInfo(at now: Int64) -> (progress: Double?, doneM: Double?, remainingM: Double?, etaS: Int?) {
        guard let s = marker(at: now) else { return (nil, nil, nil, nil) }
        return numbers(for: s, at: now)
    }

    /// The numbers for one marker sample taken at `t` (6.9). While off the route they keep the
    /// last on-route values (6.8) because the sample then has no along distance. eta_s adds the
    /// dwells of the unvisited waypoints (PROTOCOL 17).
    @inline(__always)
    func numbers(for s: MarkerSample, at t: Int64) -> (progress: Double?, doneM: Double?, remainingM: Double?, etaS: Int?) {
        guard route != nil, let destAlong = destinationAlongM else {
            return (nil, nil, nil, arrivedAt != nil ? 0 : nil)
        }
        let done = isOffRoute ? onRouteAlongM : alongDistance(of: s)
        let remaining = max(0, destAlong - done)
        let progress = destAlong > 0 ? min(1, max(0, done / destAlong)) : 1
        let dwell = dwellBefore(position: waypoints.count, at: t)
        return (progress, done, remaining, eta(remainingM: remaining, totalM: destAlong).flatMap { adding(dwell, to: $0) })
    }

    /// eta_s: remaining over the speed, rounded up; 0 once arrived; nil while the speed is
    /// unknown or below 0.5 m/s, and once the trip ended without arriving. Until the speed is
    /// known, a route the router found gives its travel time times the share that remains
    /// (PROTOCOL 16), so the first frame has an ETA.
    func eta(remainingM: Double, totalM: Double) -> Int? {
        if arrivedAt != nil { return 0 }
        // An ended trip that never arrived is expected nowhere.
        if endedAt != nil { return nil }
        let s: Double
        if let v = speedMps {
            guard v >= 0.5 else { return nil }
            s = (remainingM / v).rounded(.up)
        } else if let duration = routerDurationS, duration.isFinite, duration > 0, totalM > 0 {
            s = (duration * min(1, remainingM / totalM)).rounded(.up)
        } else {
            return nil
        }
        return s < Double(Int32.max) ? Int(s) : nil
    }

    /// True while an animation is running at `now` (and the trip has not ended).
    public func isAnimating(at now: Int64) -> Bool {
        guard endedAt == nil, let a = animation else { return false }
        return now < a.endT
    }

    /// The current (or last finished) animation from `now` on as a segment: its rest, or a
    /// one-point segment at its target once finished. Nil before the first fix. The hub sends
    /// it after `arrived`, so segment subscribers see the marker go on to the destination.
    public func currentSegment(at now: Int64) -> TripSegment? {
        guard endedAt == nil, let a = animation else { return nil }
        return segment(for: a, from: now)
    }

    /// The rest of the running animation as a segment with t0 = now (nil when not animating).
    public func remainingSegment(at now: Int64) -> TripSegment? {
        guard isAnimating(at: now), let a = animation else { return nil }
        return segment(for: a, from: now)
    }

    /// The segment message of an animation from `t0` on: the path left, numbers at the target.
    func segment(for a: Animation, from t0: Int64) -> TripSegment {
        let from = numbers(for: sample(a, at: t0), at: t0)
        let to = numbers(for: sample(a, at: a.endT), at: a.endT)
        return TripSegment(
            t0: t0, durationMs: max(0, a.endT - t0),
            path: Animator.remainingPath(a, route: route, from: t0),
            progressFrom: from.progress, progressTo: to.progress, doneM: to.doneM,
            remainingM: to.remainingM, etaS: to.etaS, leg: leg, status: status)
    }
}

extension Animation {
    /// True when the marker does not move during this animation.
    var isStationary: Bool {
        switch path {
        case .alongRoute(let a, let b): return a == b
        case .straight(let a, let b): return a == b
        case .straightToRoute, .viaRoute: return false
        }
    }
}
