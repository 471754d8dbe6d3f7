import TrackHubCore

/// Everything decided, before a synthetic trip starts, about how its rider will drive it.
struct TripPlan: Sendable {
    var label: String
    var route: Route
    /// The graph path the route follows (Helsinki routes), for a realistic reroute.
    var graphPath: RoadGraph.Path?
    /// Along-route distances of the via points, ascending.
    var waypointAlongs: [Double]
    /// `--stops`: each via point's planned dwell (device seconds), in the same order; empty
    /// for plain via points, which wait a random `dwellS` and carry no id, name or dwell.
    var stopDwellS: [Int] = []
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
        var dwells: [Int] = []
        if let stops = settings.stopsPerTrip {
            waypoints = stopAlongs(count: stops, lengthM: length, rng: &rng)
            dwells = waypoints.map { _ in Int(rng.uniform(settings.stopDwellS).rounded()) }
        } else {
            let wanted = rng.int(settings.waypointsPerTrip)
            for _ in 0..<wanted {
                let along = rng.uniform(0.15...0.85) * length
                let clear = along > 250 && along < length - 300 && waypoints.allSatisfy { abs($0 - along) > 250 }
                if clear { waypoints.append(along) }
            }
            waypoints.sort()
        }
        let excursion = rng.chance(settings.excursionProbability) ? rng.uniform(0.1...0.5) * length : nil
        let side: Double = rng.chance(0.5) ? 1 : -1
        let offset = rng.uniform(260...340)
        let span = rng.uniform(250...350)
        let reroute = rng.chance(settings.rerouteProbability) ? rng.uniform(0.45...0.8) * length : nil
        return TripPlan(
            label: label, route: route, graphPath: graphPath, waypointAlongs: waypoints, stopDwellS: dwells, baseSpeedMps: speed,
            excursionAtM: excursion, excursionSide: side, excursionOffsetM: offset, excursionSpanM: span,
            rerouteAtM: reroute)
    }

    /// `count` stops spread evenly over the route's inner part (10 % to 90 %), each moved at
    /// random by up to a quarter of the spacing: they stay in order and apart, however many
    /// a short route must hold (a courier's drops can be doors apart).
    static func stopAlongs(count: Int, lengthM: Double, rng: inout SplitMix64) -> [Double] {
        guard count > 0 else { return [] }
        let spacing = 0.8 * lengthM / Double(count)
        return (0..<count).map { k in
            0.1 * lengthM + spacing * (Double(k) + 0.5) + rng.uniform(-0.25...0.25) * spacing
        }
    }

    /// The stops' ids, names and dwells as the hub takes them (PROTOCOL 17); nil for plain
    /// via points. Ids `stop-1`, `stop-2`, … in route order; names made up, one per customer.
    func stops(rider: Int) -> [PlannedStop]? {
        guard !stopDwellS.isEmpty else { return nil }
        return zip(waypointAlongs, stopDwellS).enumerated().map { k, stop in
            PlannedStop(
                point: route.point(atDistance: stop.0), id: "stop-\(k + 1)",
                name: "Order \(k + 1) of rider \(rider + 1)", dwellS: stop.1)
        }
    }

    /// A generous guess of the trip's device-time length, ms (driving at the slowest speed,
    /// every pause at its longest, plus slack); the device clock is anchored on it.
    func estimatedDurationMs(settings: SimulationSettings) -> Int64 {
        let driving = 2.0 * (route.lengthM + 900) / (baseSpeedMps * 0.6)
        let dwells = stopDwellS.isEmpty ? Double(waypointAlongs.count) * settings.dwellS.upperBound : Double(stopDwellS.reduce(0, +))
        let pauses = dwells + Double(waypointAlongs.count) * 30 + settings.arrivalDwellS.upperBound + 120
        return Int64((driving + pauses) * 1000)
    }
}
