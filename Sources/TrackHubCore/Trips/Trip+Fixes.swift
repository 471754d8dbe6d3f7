import Foundation

/// Fixes: judging (6.5) and applying (6.1, 6.2, 6.4, 6.6 clamping, 6.8, 6.9 speed).
extension Trip {
    /// Longest derived animation when a fix gives no duration_ms (6.2), ms.
    static let maxDerivedDurationMs = 10_000.0
    /// Longest animation at all (6.2), ms.
    static let maxDurationMs = 60_000.0
    /// Weight of the newest speed in the EWMA (6.9).
    static let speedWeight = 0.3

    /// Step 1 on a fix's arrival, before it is stored: classifies it (6.5, holding/arrived/ended in
    /// the order duplicate, out_of_order, outlier, holding, arrived, ended) and records the
    /// bookkeeping (seen seqs / seqless ts, previous applied fix) so the next fix is judged
    /// against this one. Every judged fix counts as stored for the duplicate rule, refused or not.
    public mutating func judge(_ fix: FixInput) -> FixVerdict {
        if let seq = fix.seq {
            if seenSeqs.contains(seq) { return .refused(.duplicate) }
        } else if seenTimestamps.contains(fix.ts) {
            return .refused(.duplicate)
        }
        // From here on the fix is new: it will be stored whatever the verdict.
        if let seq = fix.seq { seenSeqs.insert(seq) }
        seenTimestamps.insert(fix.ts)

        if let last = lastApplied {
            if fix.ts <= last.ts { return .refused(.outOfOrder) }
            let seconds = Double(fix.ts - last.ts) / 1000
            let metres = Geodesy.distanceM(last.point, fix.point)
            if metres / seconds > config.maxSpeedMps { return .refused(.outlier) }
        }
        switch status {
        case .holding: return .refused(.holding)
        case .arrived: return .refused(.arrived)
        case .ended: return .refused(.ended)
        default: break
        }
        previousAppliedTs = lastApplied?.ts
        lastApplied = AppliedFix(ts: fix.ts, point: fix.point)
        return .applied
    }

    /// The animation length for an applied fix (6.2): duration_ms, or the time since the previous
    /// applied fix's ts (at most 10 000), rounded and clamped to 0...60 000 ms.
    func animationDuration(for fix: FixInput) -> Int64 {
        var d: Double
        if let given = fix.durationMs, given.isFinite {
            d = given
        } else {
            d = min(Double(fix.ts - (previousAppliedTs ?? fix.ts)), Self.maxDerivedDurationMs)
        }
        d = min(max(d.rounded(), 0), Self.maxDurationMs)
        return Int64(d)
    }

    /// Step 2, once that fix is stored, only for .applied: snapping, clamping, jitter, off/back on
    /// route, speed/ETA, the new animation starting at `now` from the marker's current sampled
    /// position, kept to the catch-up limit (a jump past it). Returns the events it caused
    /// (off_route, back_on_route) and the new segment (nil if no animation starts, e.g. backward
    /// jitter). Does nothing on a holding, arrived or ended trip.
    ///
    /// `receivedAt` is when the fix reached the hub (default `now`), for the clock ratio (6.2).
    /// Every node of a cluster must pass the same value: the log entry's time.
    public mutating func apply(_ fix: FixInput, now: Int64, receivedAt: Int64? = nil) -> (segment: TripSegment?, events: [TripEvent]) {
        guard holdingPosition == nil, arrivedAt == nil, endedAt == nil else { return (nil, []) }
        let p = fix.point
        let accuracy = fix.accuracyM.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? 0
        let jitter = max(2 * accuracy, 30)
        let isFirst = animation == nil
        let current = marker(at: now)
        let duration = isFirst ? 0 : animationDuration(for: fix)
        var events: [TripEvent] = []
        var next: Animation?
        var fixAlong: Double?

        if let route {
            // 6.1: one test, on the reported position, decides everything (half the distance
            // while off route, so a rider on the edge does not flap).
            let threshold = isOffRoute ? config.rerouteDistanceM / 2 : config.rerouteDistanceM
            let nearest = route.nearestHit(p)
            let nearestOffset = nearest.distanceSquared.squareRoot()
            if nearestOffset <= threshold {
                // On the way back to the route, the marker is headed for the route point it
                // will join: that is where it is along the route for snapping and jitter.
                let entry = isOffRoute ? nil : wayBackEntryM(current)
                let reference = entry ?? alongDistance(of: current)
                // 6.1 (amended 2026-12-07): the candidate is chosen against the last applied
                // fix's target, or the marker where that is farther along. A burst of fixes
                // (a backlog sent at once) is judged while the marker still animates far
                // behind it; against the marker alone, a later fix on a street the route
                // passes twice took the earlier pass. Jitter and the animation still start
                // from the marker (`reference`).
                let choiceReference = max(reference, lastTargetAlongM ?? reference)
                let cands = route.candidates(near: p, toleranceM: max(accuracy, 10), nearest: nearest)
                let chosen = Route.pickInOrder(cands, referenceAlongM: choiceReference, jitterM: jitter) ?? route.match(nearest)
                fixAlong = chosen.alongM
                let target = clampedTarget(chosen.alongM)
                lastTargetAlongM = target
                let wasOff = isOffRoute
                if wasOff {
                    isOffRoute = false
                    offRouteFixes = nil
                    events.append(makeEvent(.backOnRoute, now: now, position: current?.position))
                }
                if isFirst {
                    next = Animation(path: .alongRoute(fromM: target, toM: target), startT: now, durationMs: 0)
                } else if let current, wasOff || (current.alongM == nil && entry == nil) {
                    // Back on route: straight to the snapped point.
                    next = Animation(path: .straightToRoute(from: current.position, toM: target), startT: now, durationMs: duration)
                } else if let current, current.alongM == nil, let entry {
                    // 6.8: still on the way back: on to the same snapped point, then along the
                    // route (a straight line to each new fix would cut the route's corners).
                    // A small step back from that point (6.4) stops there.
                    let to = target < entry && entry - target < jitter ? entry : target
                    next = Animation(path: .viaRoute(from: current.position, entryM: entry, toM: to), startT: now, durationMs: duration)
                } else if target < reference && reference - target < jitter {
                    // 6.4: small step back: applied, no animation; a running one finishes.
                    next = nil
                } else {
                    next = Animation(path: .alongRoute(fromM: reference, toM: target), startT: now, durationMs: duration)
                }
            } else {
                if !isOffRoute {
                    isOffRoute = true
                    onRouteAlongM = alongDistance(of: current)
                    events.append(makeEvent(.offRoute(distanceM: nearestOffset), now: now, position: current?.position ?? p))
                }
                offRouteFixes = (offRouteFixes ?? 0) + 1
                next = Animation(path: .straight(from: current?.position ?? p, to: p), startT: now, durationMs: duration)
            }
        } else {
            next = Animation(path: .straight(from: current?.position ?? p, to: p), startT: now, durationMs: duration)
        }

        let implied = updateSpeed(fix: fix, alongM: fixAlong)
        recordFixTiming(ts: fix.ts, receivedAt: receivedAt ?? now)
        guard var next else { return (nil, events) }
        var isJump = false
        if !isFirst {
            (next, isJump) = keptToLimit(next, limitMps: catchUpLimitMps(impliedMps: implied))
        }
        if isFirst {
            if let route, !isOffRoute, case .alongRoute(_, let to) = next.path {
                restingBearing = route.bearing(atDistance: to)
            } else {
                restingBearing = Geodesy.normalizedBearing(fix.heading ?? 0)
            }
        } else if let current {
            // A zero-length move keeps facing the way the marker faced.
            restingBearing = current.bearingDeg
        }
        animation = next
        framedThrough = .min
        needsCheck = true
        if isJump { nextFrameIsJump = true }
        var segment = segment(for: next, from: now)
        segment.jump = isJump
        return (segment, events)
    }

    /// The along-route distance of the route point the marker is heading for while it is on
    /// its way back to the route (a straight line after back_on_route); nil otherwise.
    func wayBackEntryM(_ current: MarkerSample?) -> Double? {
        guard let current, current.alongM == nil, let a = animation else { return nil }
        switch a.path {
        case .straightToRoute(_, let toM): return toM
        case .viaRoute(_, let entryM, _): return entryM
        case .alongRoute, .straight: return nil
        }
    }

    /// 6.6: with `wait_at_waypoints`, a target beyond the next unvisited waypoint's projection is
    /// clamped to it (waypoints that do not wait clamp nothing); beyond the destination's, to that.
    func clampedTarget(_ along: Double) -> Double {
        var t = along
        if config.waitAtWaypoints, visitedCount < waypoints.count, let w = waypoints[visitedCount].alongM { t = min(t, w) }
        if let d = destinationAlongM { t = min(t, d) }
        return t
    }

    /// 6.9: EWMA (weight 0.3 on the newest) of the speeds between consecutive applied fixes:
    /// along-route distance when both are on the route, straight-line otherwise, over the ts
    /// difference. A fix that reports `speed_mps` gives that as its sample instead: a device's
    /// own speed (Doppler) is better than the difference of two noisy positions, and it is
    /// there from the first fix on. Returns the speed implied by the positions (nil for the
    /// first fix), which the catch-up limit uses while the estimate is unknown.
    @discardableResult
    mutating func updateSpeed(fix: FixInput, alongM: Double?) -> Double? {
        defer { speedReference = SpeedReference(ts: fix.ts, point: fix.point, alongM: alongM) }
        var implied: Double?
        if let ref = speedReference, fix.ts > ref.ts {
            let metres: Double
            if let a = alongM, let b = ref.alongM {
                metres = abs(a - b)
            } else {
                metres = Geodesy.distanceM(ref.point, fix.point)
            }
            let v = metres / (Double(fix.ts - ref.ts) / 1000)
            if v.isFinite { implied = v }
        }
        let reported = fix.speedMps.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        guard let v = reported ?? implied else { return implied }
        speedMps = speedMps.map { Self.speedWeight * v + (1 - Self.speedWeight) * $0 } ?? v
        return implied
    }
}
