import TrackHubCore
@testable import TrackHubProtocol

/// The values the wire golden tests encode (the same ones `WireBefore` was captured from).
enum WireFixtures {
    static let t0: Int64 = 1_700_000_000_000

    static let frame = TripFrame(
        t: t0 + 123, position: GeoPoint(lat: 38.71581234, lon: -9.14204567), bearingDeg: 123.456, progress: 0.123456789,
        doneM: 1234.56, remainingM: 8765.44, etaS: 321, leg: 1, status: .moving)

    static let jumpFrame = TripFrame(
        t: t0, position: GeoPoint(lat: -33.9, lon: 151.2), bearingDeg: 359.96, progress: nil,
        doneM: nil, remainingM: nil, etaS: nil, leg: 0, status: .offRoute, jump: true)

    static let segment = TripSegment(
        t0: t0, durationMs: 4000,
        path: [GeoPoint(lat: 38.7158, lon: -9.142), GeoPoint(lat: 38.7162, lon: -9.141), GeoPoint(lat: 38.71701, lon: -9.13902)],
        progressFrom: 0.1, progressTo: 0.2345678, doneM: 100.04, remainingM: 900.06, etaS: 60, leg: 0, status: .moving)

    static let jumpSegment = TripSegment(
        t0: t0, durationMs: 0, path: [GeoPoint(lat: 1, lon: 2)], progressFrom: nil, progressTo: nil,
        doneM: nil, remainingM: nil, etaS: nil, leg: 2, status: .holding, jump: true)

    /// One event of each kind, `n` from 1; the first without a marker.
    static let events: [TripEvent] = {
        let kinds: [TripEventKind] = [
            .tripCreated, .waypointReached(index: 0, remainingWaypoints: 2), .waypointResumed(index: 1, remainingWaypoints: 0),
            .arrived, .offRoute(distanceM: 123.456), .backOnRoute, .rerouted(reason: .client), .ended,
        ]
        return kinds.enumerated().map { i, kind in
            TripEvent(n: i + 1, kind: kind, t: t0 + Int64(i), position: i == 0 ? nil : GeoPoint(lat: 38.7158, lon: -9.142))
        }
    }()

    /// A routed trip with one waypoint, created at t0, with two applied fixes (the second at t0 + 5 s).
    static func trip() throws -> Trip {
        let route = try Route(points: [
            GeoPoint(lat: 38.7158, lon: -9.1420), GeoPoint(lat: 38.7170, lon: -9.1390), GeoPoint(lat: 38.7190, lon: -9.1350),
        ])
        var trip = try Trip(
            id: "T1", route: route, waypoints: [GeoPoint(lat: 38.71701, lon: -9.13902)], destination: nil,
            config: TripConfig(), now: t0)
        _ = trip.created(now: t0)
        let fix1 = FixInput(lat: 38.71581, lon: -9.14199, ts: t0, seq: 1)
        _ = trip.judge(fix1)
        _ = trip.apply(fix1, now: t0 + 10)
        let fix2 = FixInput(lat: 38.71620, lon: -9.14100, ts: t0 + 5000, seq: 2, durationMs: 4000, speedMps: 8)
        _ = trip.judge(fix2)
        _ = trip.apply(fix2, now: t0 + 5010)
        return trip
    }

    static let riderJSON = Array(#"{"id":"r1","name":"Ana"}"#.utf8)

    static let trail = [
        FixInput(lat: 38.71581, lon: -9.14199, ts: t0, seq: 1),
        FixInput(lat: 38.71620, lon: -9.14100, ts: t0 + 5000, seq: 2),
    ]

    static func view(at now: Int64, includeRoute: Bool = true, includeTrail: Bool = true) throws -> TripView {
        TripView(
            id: "T1", trip: try trip(), riderJSON: riderJSON, trail: includeTrail ? trail : [], now: now,
            includeRoute: includeRoute, includeTrail: includeTrail)
    }

    static let viewport = Viewport(west: -10.5, south: 38.1234567, east: -8.25, north: 39.5, zoom: 11)

    static let clusterItems = [
        FleetItem(id: "#00ff00ff00ff00ff", lat: 38.71234567, lon: -9.1, count: 5, bounds: [-9.2, 38.7, -9.05, 38.75], expansionZoom: 13),
        FleetItem(id: "T1", lat: 38.7, lon: -9.3, count: 1, trip: "T1", status: "holding", bearing: 12.34),
        FleetItem(id: "T2", lat: 38.6, lon: -9.4, count: 1),
    ]
}
