/// Commands: proceed (6.6), reroute (PROTOCOL 5), end.
extension Trip {
    /// Stores the waypoint the trip holds at as visited: waypoint_resumed, then (checked again at
    /// once) waypoint_reached / arrived if the marker is already within reach of the next.
    /// - Throws: `.finished` on an arrived or ended trip, `.notHolding` otherwise unless holding.
    public mutating func proceed(now: Int64) throws(TripCommandError) -> [TripEvent] {
        guard let pos = holdingPosition, endedAt == nil, arrivedAt == nil else {
            let s = status
            if s == .arrived || s == .ended { throw .finished(status: s) }
            throw .notHolding(status: s)
        }
        holdingPosition = nil
        holdingSince = nil
        waypoints[pos].visited = true
        visitedCount += 1
        let m = marker(at: now)
        var events = [
            makeEvent(
                .waypointResumed(index: waypoints[pos].index, remainingWaypoints: waypoints.count - visitedCount),
                now: now, position: m?.position, stop: waypoints[pos])
        ]
        if let m { events += checkWaypointsAndArrival(m, now: now) }
        return events
    }

    /// Ends the trip: event `ended`, the marker stops where it is now. Empty if already ended.
    public mutating func end(now: Int64) -> [TripEvent] {
        guard endedAt == nil else { return [] }
        let m = marker(at: now)
        if let m {
            freezeMarker(m, at: now)
        }
        endedAt = now
        return [makeEvent(.ended, now: now, position: m?.position)]
    }

    /// Replaces the animation by a stationary one at the sample `m`.
    mutating func freezeMarker(_ m: MarkerSample, at now: Int64) {
        if let along = m.alongM, route != nil, !isOffRoute {
            animation = Animation(path: .alongRoute(fromM: along, toM: along), startT: now, durationMs: 0)
        } else {
            animation = Animation(path: .straight(from: m.position, to: m.position), startT: now, durationMs: 0)
        }
        restingBearing = m.bearingDeg
    }

    /// A new route (PROTOCOL 5). Without `waypoints` the unvisited waypoints are kept and
    /// projected onto it; with them they replace the unvisited ones, numbered after the highest
    /// index so far. The waypoint a holding trip waits at is kept either way. The destination
    /// becomes the new route's last point unless given. The marker stays where it is and is
    /// snapped onto the new route (progress may go down; the rest of a running animation goes
    /// on along the new route); on/off route is judged again on the last applied fix, without
    /// an off_route or back_on_route event. Returns `rerouted` with `reason`. `source` and
    /// `routerDurationS` say where the route came from and the router's travel time for it
    /// (PROTOCOL 16; nil for a client's route). `stops` gives the new waypoints' ids, names and
    /// dwells (PROTOCOL 17), parallel to `waypoints`; `removedStopIDs(comparedTo:)` tells which
    /// stops the new route dropped.
    /// - Throws: `.finished` on an arrived or ended trip (HTTP 409); `.duplicateStopID` when a
    ///   new waypoint's id repeats one of the request, a visited waypoint's or the held one's;
    ///   `.waypointTooFar` (index:
    ///   the position in `waypoints` when given, else the kept waypoint's index) or
    ///   `.destinationTooFar` (HTTP 400). Nothing changes when it throws.
    public mutating func reroute(
        route newRoute: Route, waypoints given: [GeoPoint]?, destination: GeoPoint?, now: Int64,
        reason: RerouteReason = .client, source: RouteSource = .client, routerDurationS: Double? = nil,
        stops: [StopDetails]? = nil
    ) throws(TripSetupError) -> [TripEvent]
    {
        if endedAt != nil || arrivedAt != nil { throw .finished(status: status) }
        let details = Self.details(stops, count: given?.count ?? 0)
        if given != nil, let repeated = Self.firstRepeatedID(details, taken: idsThatCannotBeReused) {
            throw .duplicateStopID(index: repeated)
        }
        var upcoming: [Waypoint]
        var reportIndices: [Int]
        var highest = highestWaypointIndex
        let held = holdingPosition.map { waypoints[$0] }
        if let given {
            upcoming = held.map { [$0] } ?? []
            reportIndices = held.map { [$0.index] } ?? []
            for (i, p) in given.enumerated() {
                highest += 1
                let d = details[i]
                upcoming.append(Waypoint(index: highest, point: p, alongM: nil, id: d.id, name: d.name, dwellS: d.dwellS))
                reportIndices.append(i)
            }
        } else {
            upcoming = Array(waypoints[visitedCount...])
            reportIndices = upcoming.map(\.index)
        }
        let dest = destination ?? newRoute.end
        let projected = try Self.project(
            waypoints: zip(reportIndices, upcoming).map { (index: $0.0, point: $0.1.point) },
            destination: dest, onto: newRoute, config: config)

        // Nothing can fail from here on.
        let m = marker(at: now)
        let old = animation
        var visited = Array(waypoints[..<visitedCount])
        for i in visited.indices { visited[i].alongM = newRoute.nearest(to: visited[i].point).alongM }
        for i in upcoming.indices { upcoming[i].alongM = projected.alongs[i] }
        waypoints = visited + upcoming
        highestWaypointIndex = highest
        if held != nil { holdingPosition = visitedCount }
        route = newRoute
        routeOrigin = source == .client ? nil : source
        self.routerDurationS = routerDurationS
        self.destination = dest
        destinationAlongM = projected.destinationAlongM
        lastTargetAlongM = nil  // along the old route; the marker is the reference until the next fix

        if let m, let last = lastApplied {
            let remaining = max(0, (old?.endT ?? now) - now)
            let markerAlong = newRoute.nearest(to: m.position).alongM
            onRouteAlongM = markerAlong
            isOffRoute = newRoute.nearest(to: last.point).offsetM > config.rerouteDistanceM
            offRouteFixes = isOffRoute ? offRouteFixes : nil
            if isOffRoute {
                // Off the new route: keep heading for the last fix in a straight line.
                animation = Animation(path: .straight(from: m.position, to: last.point), startT: now, durationMs: remaining)
                speedReference?.alongM = nil
            } else {
                let fixAlong = newRoute.snap(last.point, accuracyM: 0, referenceAlongM: markerAlong, jitterM: 30).alongM
                let target = clampedTarget(fixAlong)
                let to = remaining > 0 && target > markerAlong ? target : markerAlong
                animation = Animation(
                    path: .alongRoute(fromM: markerAlong, toM: to), startT: now, durationMs: to == markerAlong ? 0 : remaining)
                speedReference?.alongM = fixAlong
            }
            restingBearing = m.bearingDeg
            framedThrough = .min
        }
        needsCheck = true
        return [makeEvent(.rerouted(reason: reason), now: now, position: marker(at: now)?.position)]
    }
}
