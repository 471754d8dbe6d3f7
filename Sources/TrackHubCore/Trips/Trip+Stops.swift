/// Stops (PROTOCOL 17): waypoint ids, dwells, per-waypoint ETAs and following one stop.
extension Trip {
    /// `stops` padded to `count` entries (missing details: none).
    static func details(_ stops: [StopDetails]?, count: Int) -> [StopDetails] {
        var all = Array((stops ?? []).prefix(count))
        if all.count < count { all += Array(repeating: StopDetails(), count: count - all.count) }
        return all
    }

    /// The position of the first entry whose id repeats an earlier entry's or one in `taken`.
    static func firstRepeatedID(_ details: [StopDetails], taken: Set<String>) -> Int? {
        var seen = taken
        for (i, d) in details.enumerated() {
            guard let id = d.id else { continue }
            if !seen.insert(id).inserted { return i }
        }
        return nil
    }

    /// Ids a new route's waypoints may not take: the visited waypoints' and the held one's.
    var idsThatCannotBeReused: Set<String> {
        var ids = Set(waypoints[..<visitedCount].compactMap(\.id))
        if let held = holdingWaypoint?.id { ids.insert(held) }
        return ids
    }

    /// The ids of the unvisited stops `previous` had that this trip no longer has: the stops a
    /// new route dropped (what follows them ends with `stop_removed`).
    public func removedStopIDs(comparedTo previous: Trip) -> [String] {
        let now = Set(waypoints.compactMap(\.id))
        return previous.waypoints[previous.visitedCount...].compactMap(\.id).filter { !now.contains($0) }
    }

    /// Seconds of dwell before the waypoint at `position` (or before the destination with
    /// `waypoints.count`): each unvisited waypoint's dwell_s, the held one counting what is left
    /// of it since its waypoint_reached (at least 0).
    func dwellBefore(position: Int, at t: Int64) -> Double {
        var total = 0.0
        var p = visitedCount
        while p < min(position, waypoints.count) {
            let dwell = Double(waypoints[p].dwellS)
            if p == holdingPosition, let since = holdingSince {
                total += max(0, dwell - Double(max(0, t - since)) / 1000)
            } else {
                total += dwell
            }
            p += 1
        }
        return total
    }

    /// A travel eta plus dwell seconds, rounded up; nil past Int32.
    func adding(_ dwellS: Double, to etaS: Int) -> Int? {
        let s = Double(etaS) + dwellS.rounded(.up)
        return s < Double(Int32.max) ? Int(s) : nil
    }

    /// The numbers to a point at `targetAlongM` for a marker `doneM` along, at time `t`, with
    /// the dwells before the waypoint at `position`: remaining_m and eta_s (nil with the trip's).
    func numbers(toAlongM targetAlongM: Double, position: Int, doneM: Double?, at t: Int64) -> (remainingM: Double?, etaS: Int?) {
        guard let done = doneM, let destAlong = destinationAlongM else { return (nil, nil) }
        let remaining = max(0, targetAlongM - done)
        let eta = eta(remainingM: remaining, totalM: destAlong).flatMap { adding(dwellBefore(position: position, at: t), to: $0) }
        return (remaining, eta)
    }

    /// Each waypoint's `remaining_m` and `eta_s` at `now`, in waypoint order (PROTOCOL 17): nil
    /// once visited and whenever the trip's own are; 0 for the waypoint the trip holds at.
    public func waypointETAs(now: Int64) -> [(remainingM: Double?, etaS: Double?)] {
        let own = progressInfo(at: now)
        return waypoints.indices.map { p in
            if waypoints[p].visited { return (nil, nil) }
            if p == holdingPosition { return (own.remainingM == nil ? nil : 0, own.etaS == nil ? nil : 0) }
            guard let along = waypoints[p].alongM, own.remainingM != nil else { return (nil, nil) }
            let n = numbers(toAlongM: along, position: p, doneM: own.doneM, at: now)
            return (n.remainingM, own.etaS == nil ? nil : n.etaS.map(Double.init))
        }
    }

    /// The position in `waypoints` of the waypoint with this id.
    func position(ofStop id: String) -> Int? {
        waypoints.firstIndex { $0.id == id }
    }

    /// Whether `stop` names a stop of this trip (a waypoint id it has, or the destination).
    public func hasStop(_ stop: StopRef) -> Bool {
        switch stop {
        case .destination: destination != nil
        case .waypoint(let id): position(ofStop: id) != nil
        }
    }

    /// Where the trip stands with `stop` at `now`; nil for an unknown stop (and for the
    /// destination of a trip that has none).
    public func stopProgress(_ stop: StopRef, now: Int64) -> StopProgress? {
        let own = progressInfo(at: now)
        switch stop {
        case .destination:
            guard let dest = destination else { return nil }
            let reached = arrivedAt != nil
            return StopProgress(
                id: stop.wire, stopsBefore: unvisitedWaypointCount,
                etaS: reached ? 0 : own.etaS.map(Double.init), remainingM: reached ? 0 : own.remainingM,
                reached: reached, point: dest, alongM: destinationAlongM)
        case .waypoint(let id):
            guard let p = position(ofStop: id) else { return nil }
            let w = waypoints[p]
            let reached = w.visited || p == holdingPosition
            var remaining: Double? = 0
            var eta: Double? = 0
            if !reached {
                let n = w.alongM.map { numbers(toAlongM: $0, position: p, doneM: own.doneM, at: now) }
                remaining = own.remainingM == nil ? nil : n?.remainingM
                eta = own.etaS == nil ? nil : n?.etaS.map(Double.init)
            }
            return StopProgress(
                id: id, stopsBefore: max(0, p - visitedCount), etaS: eta, remainingM: remaining,
                reached: reached, point: w.point, alongM: w.alongM)
        }
    }

    /// The numbers of a frame or segment taken to `stop` instead of the destination: progress
    /// (done over the stop's along distance, at most 1), remaining_m and eta_s (0 once reached).
    /// `doneM`: the marker's along distance at `t`. Nil for an unknown stop.
    func stopNumbers(
        _ stop: StopRef, doneM: Double?, tripRemainingM: Double?, tripEtaS: Int?, at t: Int64
    ) -> (progress: Double?, remainingM: Double?, etaS: Int?)? {
        let target: (along: Double?, position: Int, reached: Bool)
        switch stop {
        case .destination:
            target = (destinationAlongM, waypoints.count, arrivedAt != nil)
        case .waypoint(let id):
            guard let p = position(ofStop: id) else { return nil }
            target = (waypoints[p].alongM, p, waypoints[p].visited || p == holdingPosition)
        }
        if target.reached { return (doneM == nil ? nil : 1, 0, 0) }
        guard let along = target.along, let done = doneM else { return (nil, tripRemainingM, tripEtaS) }
        let progress = along > 0 ? min(1, max(0, done / along)) : 1
        let n = numbers(toAlongM: along, position: target.position, doneM: done, at: t)
        return (progress, tripRemainingM == nil ? nil : n.remainingM, tripEtaS == nil ? nil : n.etaS)
    }

    /// `frame` with its progress, remaining_m and eta_s taken to `stop` (PROTOCOL 17); the frame
    /// as it is for an unknown stop.
    public func frame(_ frame: TripFrame, towardStop stop: StopRef) -> TripFrame {
        guard let n = stopNumbers(stop, doneM: frame.doneM, tripRemainingM: frame.remainingM, tripEtaS: frame.etaS, at: frame.t)
        else { return frame }
        var f = frame
        f.progress = n.progress
        f.remainingM = n.remainingM
        f.etaS = n.etaS
        return f
    }

    /// `segment` with its numbers taken to `stop` (PROTOCOL 17); as it is for an unknown stop.
    public func segment(_ segment: TripSegment, towardStop stop: StopRef) -> TripSegment {
        let end = segment.t0 + segment.durationMs
        guard let n = stopNumbers(stop, doneM: segment.doneM, tripRemainingM: segment.remainingM, tripEtaS: segment.etaS, at: end)
        else { return segment }
        var s = segment
        if let from = segment.progressFrom, let destAlong = destinationAlongM {
            s.progressFrom = stopNumbers(stop, doneM: from * destAlong, tripRemainingM: nil, tripEtaS: nil, at: segment.t0)?.progress
        }
        s.progressTo = n.progress
        s.remainingM = n.remainingM
        s.etaS = n.etaS
        return s
    }
}

extension Trip {
    /// The snapshot's numbers at `now` taken to `stop` (PROTOCOL 17): progress over the stop's
    /// along distance, remaining_m and eta_s to it (0 once reached); the trip's own for an
    /// unknown stop.
    public func progressInfo(at now: Int64, toward stop: StopRef) -> (progress: Double?, doneM: Double?, remainingM: Double?, etaS: Int?) {
        let info = progressInfo(at: now)
        guard marker(at: now) != nil,
              let n = stopNumbers(stop, doneM: info.doneM, tripRemainingM: info.remainingM, tripEtaS: info.etaS, at: now)
        else { return info }
        return (n.progress, info.doneM, n.remainingM, n.etaS)
    }
}
