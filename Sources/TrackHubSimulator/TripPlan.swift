import TrackHubCore

/// Everything decided, before a synthetic trip starts, about how its rider will drive it.
struct TripPlan: Sendable {
    var label: String
    var route: Route
    /// The graph path the route follows (Helsinki routes), for a realistic reroute.
    var graphPath: RoadGraph.Path?
    /// Along-route distances of the via points, ascending.
    var waypointAlongs: [Double]
    /// The rider's cruising speed, m/s.
    var baseSpeedMps: Double
    /// Where an off-route excursion starts (along-route metres), its side (+1 right, -1 left),
    /// how far it goes from the route and how much route it skips.
    var excursionAtM: Double?
    var excursionSide: Double
    var excursionOffsetM: Double
    var excursionSpanM: Double
    /// Where the rider asks for a new route (along-route metres).
    var rerouteAtM: Double?

    /// Draws a plan from the catalog: a Helsinki graph route or a fixed route, via points,
    /// and whether this trip has an excursion and a reroute.
    static func make(catalog: RouteCatalog, settings: SimulationSettings, rng: inout SplitMix64) -> TripPlan? {
        var label = ""
        var route: Route?
        var graphPath: RoadGraph.Path?
        var speed = 0.0
        if rng.chance(settings.graphRouteShare), let (path, made) = catalog.makeGraphRoute(using: &rng) {
            label = "helsinki"
            route = made
            graphPath = path
            speed = rng.uniform(7...11)
        } else if !catalog.fixedRoutes.isEmpty {
            let pick = catalog.fixedRoutes[rng.int(0...(catalog.fixedRoutes.count - 1))]
            label = pick.name
            route = pick.route
            speed = pick.route.lengthM > 2500 ? rng.uniform(23...29) : rng.uniform(9...13)
        }
        guard let route else { return nil }
        let length = route.lengthM
        var waypoints: [Double] = []
        let wanted = rng.int(settings.waypointsPerTrip)
        for _ in 0..<wanted {
            let along = rng.uniform(0.15...0.85) * length
            let clear = along > 250 && along < length - 300 && waypoints.allSatisfy { abs($0 - along) > 250 }
            if clear { waypoints.append(along) }
        }
        waypoints.sort()
        let excursion = rng.chance(settings.excursionProbability) ? rng.uniform(0.1...0.5) * length : nil
        let side: Double = rng.chance(0.5) ? 1 : -1
        let offset = rng.uniform(260...340)
        let span = rng.uniform(250...350)
        let reroute = rng.chance(settings.rerouteProbability) ? rng.uniform(0.45...0.8) * length : nil
        return TripPlan(
            label: label, route: route, graphPath: graphPath, waypointAlongs: waypoints, baseSpeedMps: speed,
            excursionAtM: excursion, excursionSide: side, excursionOffsetM: offset, excursionSpanM: span,
            rerouteAtM: reroute)
    }

    /// A generous guess of the trip's device-time length, ms (driving at the slowest speed,
    /// every pause at its longest, plus slack); the device clock is anchored on it.
    func estimatedDurationMs(settings: SimulationSettings) -> Int64 {
        let driving = 2.0 * (route.lengthM + 900) / (baseSpeedMps * 0.6)
        let pauses = Double(waypointAlongs.count) * (settings.dwellS.upperBound + 30) + settings.arrivalDwellS.upperBound + 120
        return Int64((driving + pauses) * 1000)
    }
}
