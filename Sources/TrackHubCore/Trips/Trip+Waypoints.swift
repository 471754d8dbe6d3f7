/// Reaching waypoints (6.6) and the destination (6.7).
extension Trip {
    /// Whether the marker has come within arrival_buffer_m of a waypoint or the destination, or
    /// passed it: by along-route distance while on the route geometry (a marker that crossed
    /// the whole buffer between two ticks has reached it too), else straight-line.
    @inline(__always)
    func isWithinBuffer(_ s: MarkerSample, alongM: Double?, point: GeoPoint) -> Bool {
        if !isOffRoute, let a = s.alongM, let target = alongM {
            return a >= target - config.arrivalBufferM
        }
        return Geodesy.distanceM(s.position, point) <= config.arrivalBufferM
    }

    /// Checks the next unvisited waypoint(s), then the destination, against the marker `s`.
    /// Without waiting, a reached waypoint is visited at once (both events) and the next one is
    /// checked too; with waiting the trip holds at the first one reached.
    mutating func checkWaypointsAndArrival(_ s: MarkerSample, now: Int64) -> [TripEvent] {
        guard endedAt == nil, arrivedAt == nil, holdingPosition == nil else { return [] }
        var events: [TripEvent] = []
        while visitedCount < waypoints.count {
            let w = waypoints[visitedCount]
            guard isWithinBuffer(s, alongM: w.alongM, point: w.point) else { return events }
            let remaining = waypoints.count - visitedCount - 1
            events.append(makeEvent(.waypointReached(index: w.index, remainingWaypoints: remaining), now: now, position: s.position, stop: w))
            if config.waitAtWaypoints {
                holdingPosition = visitedCount
                holdingSince = now
                return events
            }
            waypoints[visitedCount].visited = true
            visitedCount += 1
            events.append(makeEvent(.waypointResumed(index: w.index, remainingWaypoints: remaining), now: now, position: s.position, stop: w))
        }
        if let dest = destination, isWithinBuffer(s, alongM: destinationAlongM, point: dest) {
            arrivedAt = now
            events.append(makeEvent(.arrived, now: now, position: s.position))
            goOnToDestination(from: s, now: now)
        }
        return events
    }
}
