import Foundation
@testable import TrackHubCore

extension SplitMix64 {
    /// A uniform number in `lo...hi`, the two-argument spelling the property tests use
    /// (the very same draws as `uniform(lo...hi)`: the seeds' fixtures did not change when
    /// the tests' own copy of the generator gave way to the core's).
    mutating func uniform(_ lo: Double, _ hi: Double) -> Double { uniform(lo...hi) }
}

/// A courier moving up a route with GPS noise, for the seeded tests that drive two copies of
/// a trip with the same fixes (`TickUnframedTests`, `DozingTickTests`).
struct NoisyCourier {
    let route: Route
    /// The most a fix moves on along the route, metres.
    let maxStepM: Double
    private var truthM = 0.0
    private var seq: Int64 = 0

    init(route: Route, maxStepM: Double) {
        self.route = route
        self.maxStepM = maxStepM
    }

    /// The next fix, stamped `now`: up to `maxStepM` further along, within 10 m of the route.
    mutating func nextFix(_ rng: inout SplitMix64, at now: Int64) -> FixInput {
        truthM = min(route.lengthM, truthM + rng.uniform(0, maxStepM))
        let p = Geodesy.destination(from: route.point(atDistance: truthM), bearingDeg: rng.uniform(0, 360), distanceM: rng.uniform(0, 10))
        seq += 1
        return FixInput(lat: p.lat, lon: p.lon, ts: now, seq: seq)
    }
}

enum Fixture {
    static let origin = GeoPoint(lat: 38.6, lon: -77.3)
    static let t0: Int64 = 1_722_830_000_000

    /// A point `east` and `north` metres from the origin (local projection).
    static func at(east: Double, north: Double = 0) -> GeoPoint {
        LocalProjection(origin: origin).unproject(x: east, y: north)
    }

    /// A straight route due east, `lengthM` long, a vertex every `stepM`.
    static func eastRoute(lengthM: Double = 1000, stepM: Double = 100) -> Route {
        let n = Int(lengthM / stepM)
        return try! Route(points: (0...n).map { at(east: Double($0) * stepM) })
    }

    /// Out `lengthM` east and back along the very same street.
    static func outAndBack(lengthM: Double = 1000, stepM: Double = 100) -> Route {
        let n = Int(lengthM / stepM)
        let out = (0...n).map { at(east: Double($0) * stepM) }
        return try! Route(points: out + out.reversed().dropFirst())
    }

    /// East 500 m, then north 500 m.
    static func lShape() -> Route {
        try! Route(points: [at(east: 0), at(east: 250), at(east: 500), at(east: 500, north: 250), at(east: 500, north: 500)])
    }

    static func fix(_ p: GeoPoint, ts: Int64, seq: Int64? = nil, durationMs: Double? = nil, accuracyM: Double? = nil) -> FixInput {
        FixInput(lat: p.lat, lon: p.lon, ts: ts, seq: seq, durationMs: durationMs, accuracyM: accuracyM)
    }

    static func trip(
        route: Route? = eastRoute(), waypoints: [GeoPoint] = [], destination: GeoPoint? = nil,
        config: TripConfig = TripConfig()
    ) -> Trip {
        var t = try! Trip(id: "t1", route: route, waypoints: waypoints, destination: destination, config: config, now: t0)
        _ = t.created(now: t0)
        return t
    }
}

/// A trip driven with hub time equal to fix time, as a test script.
struct Driver {
    var trip: Trip
    var now: Int64 = Fixture.t0
    var seq: Int64 = 0
    var frames: [TripFrame] = []
    var events: [TripEvent] = []
    var segments: [TripSegment] = []

    init(_ trip: Trip) { self.trip = trip }

    /// Judges and applies a fix taken at `now` (after advancing to `atMs` from t0 if given).
    @discardableResult
    mutating func send(_ p: GeoPoint, at ms: Int64? = nil, durationMs: Double? = nil, accuracyM: Double? = nil) -> FixVerdict {
        if let ms { advance(to: Fixture.t0 + ms) }
        seq += 1
        let f = Fixture.fix(p, ts: now, seq: seq, durationMs: durationMs, accuracyM: accuracyM)
        let v = trip.judge(f)
        if v == .applied {
            let r = trip.apply(f, now: now)
            if let s = r.segment { segments.append(s) }
            events += r.events
        }
        return v
    }

    /// Ticks every 100 ms up to `t` (inclusive).
    mutating func advance(to t: Int64) {
        while now + 100 <= t {
            now += 100
            tick()
        }
        if now < t { now = t; tick() }
    }

    mutating func advance(by ms: Int64) { advance(to: now + ms) }

    mutating func tick() {
        let r = trip.tick(now: now)
        if let f = r.frame { frames.append(f) }
        events += r.events
    }

    var eventNames: [String] { events.map(\.kind.name) }
}

func alongOf(_ trip: Trip, at t: Int64) -> Double? { trip.marker(at: t)?.alongM }
