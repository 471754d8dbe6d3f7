import TrackHubCore

/// A trip the hub has created and a rider is on: where the rider is and its device clock.
struct ActiveTrip: Sendable {
    /// A via point: its index on the hub (position in the list given at creation), where it is
    /// along the current route, and whether the hub has marked it visited.
    struct Waypoint: Sendable, Equatable {
        var index: Int
        var along: Double
        var visited: Bool
        /// `--stops`: the stop's planned dwell (device seconds), waited exactly; nil: a plain
        /// via point, which waits a random `dwellS`.
        var plannedDwellS: Int? = nil
    }

    /// An off-route excursion under way: a path away from the route and back to it.
    struct Excursion: Sendable {
        var path: Route
        var progressM: Double
        var returnAlongM: Double
    }

    var id: String
    var route: Route?
    var graphPath: RoadGraph.Path?
    var waypoints: [Waypoint] = []
    var along = 0.0
    var baseSpeed = 0.0
    var speed = 0.0
    var excursion: Excursion?
    var excursionAtM: Double?
    var rerouteAtM: Double?
    var seq: Int64 = 0
    /// Wall time the trip was created; the device clock reads `anchorTs` then.
    var createdAt: Int64
    var anchorTs: Int64
    var lastFixWall: Int64?
    var lastTs: Int64 = 0
    var nextFixAt: Int64
    /// The interval between fixes the hub last asked for, ms (PROTOCOL 18; the rider keeps it
    /// in its own time, `--speedup` times faster on the wall clock); nil: none asked yet, the
    /// rider's own rhythm.
    var askedIntervalMs: Int64?
    var traceIndex = 0

    /// The next place the rider must stop at: the first unvisited via point, else the
    /// destination (index nil).
    var nextStop: (along: Double, waypoint: Int?)? {
        guard let route else { return nil }
        if let wp = waypoints.first(where: { !$0.visited }) { return (wp.along, wp.index) }
        return (route.lengthM, nil)
    }
}
