import Foundation
import Testing
import TrackHubCore
@testable import TrackHubProtocol

/// PROTOCOL 17: a stop link's snapshot (and `GET` body) over a whole trip along a 3 km street
/// with stops "a" at 1 000 m, "b" at 2 000 m and the destination at 3 000 m: no coordinate
/// in it ever lies within 200 m of another stop.
@Suite struct StopLinkViewTests {
    static let t0: Int64 = 1_700_000_000_000
    static let projection = LocalProjection(origin: GeoPoint(lat: 38.70, lon: -9.20))
    static func at(_ east: Double, _ north: Double = 0) -> GeoPoint { projection.unproject(x: east, y: north) }
    static let stops = [at(1000), at(2000)]

    /// The trip after fixes every 100 m (10 m/s) up to `alongM`, at the last fix's time, going
    /// on at once from each stop it holds at.
    static func trip(drivenTo alongM: Double) throws -> (Trip, Int64) {
        let route = try Route(points: stride(from: 0.0, through: 3000, by: 100).map { at($0) })
        var trip = try Trip(id: "T1", route: route, waypoints: stops, destination: nil, config: TripConfig(), now: t0,
                            stops: [StopDetails(id: "a"), StopDetails(id: "b")])
        _ = trip.created(now: t0)
        var now = t0
        for (i, d) in stride(from: 0.0, through: alongM, by: 100).enumerated() {
            let next = t0 + Int64(i) * 10_000
            // Ticks every second in between (they reach the waypoints); the courier hands over
            // the order and goes on at once (waypoints wait for `proceed`).
            while now + 1000 <= next {
                now += 1000
                _ = trip.tick(now: now)
                if trip.status == .holding { _ = try? trip.proceed(now: now) }
            }
            now = next
            let p = at(d)
            let fix = FixInput(lat: p.lat, lon: p.lon, ts: now, seq: Int64(i + 1))
            if trip.judge(fix) == .applied { _ = trip.apply(fix, now: now) }
        }
        return (trip, now)
    }

    /// The body a stop link following `stop` gets.
    static func body(_ trip: Trip, now: Int64, stop: StopRef, within: Int) throws -> [String: Any] {
        var view = TripView(id: "T1", trip: trip, riderJSON: Array(#"{"id":"r1","name":"Ana"}"#.utf8), now: now)
        view.audience = .customer
        view.stop = stop
        view.stopLinkVisibleWithinStops = within
        return try #require(try JSONSerialization.jsonObject(with: Data(HTTPBodies.trip(view))) as? [String: Any])
    }

    /// Every coordinate in a JSON value: `{lat, lon}` objects and `[lon, lat]` pairs.
    static func coordinates(_ value: Any) -> [GeoPoint] {
        if let object = value as? [String: Any] {
            var found: [GeoPoint] = []
            if let lat = object["lat"] as? Double, let lon = object["lon"] as? Double { found.append(GeoPoint(lat: lat, lon: lon)) }
            return found + object.values.flatMap(coordinates)
        }
        if let array = value as? [Any] {
            if array.count == 2, let lon = array[0] as? Double, let lat = array[1] as? Double { return [GeoPoint(lat: lat, lon: lon)] }
            return array.flatMap(coordinates)
        }
        return []
    }

    @Test func noCoordinateEverComesNearAnotherStop() throws {
        for alongM in stride(from: 0.0, through: 3000, by: 100) {
            let (trip, now) = try Self.trip(drivenTo: alongM)
            for (stop, others) in [(StopRef.waypoint(id: "b"), [Self.stops[0]]), (.waypoint(id: "a"), [Self.stops[1]]), (.destination, Self.stops)] {
                for within in [0, 1, 2] {
                    let body = try Self.body(trip, now: now, stop: stop, within: within)
                    // Holding says "the courier is at a door now": never past or before its own stop.
                    #expect(body["status"] as? String != "holding" || body["position"] as? [String: Double] != nil, "\(stop) at \(alongM) m")
                    for point in Self.coordinates(body) {
                        for other in others {
                            #expect(Geodesy.distanceM(point, other) > StopVisibility.privacyRadiusM, "\(stop) at \(alongM) m: \(point)")
                        }
                    }
                }
            }
        }
    }

    @Test func hiddenNearAnotherStopShownWhenClearOnlyItsOwnStop() throws {
        let (near, nearNow) = try Self.trip(drivenTo: 900)
        let hidden = try Self.body(near, now: nearNow, stop: .waypoint(id: "b"), within: 1)
        #expect(hidden["position"] is NSNull && hidden["bearing"] is NSNull && hidden["route"] is NSNull)
        #expect(hidden["status"] as? String == "moving")
        let waypoints = try #require(hidden["waypoints"] as? [[String: Any]])
        #expect(waypoints.count == 1 && waypoints[0]["id"] as? String == "b")
        let destination = try #require(hidden["destination"] as? [String: Double])
        #expect(Geodesy.distanceM(GeoPoint(lat: destination["lat"]!, lon: destination["lon"]!), Self.stops[1]) < 1)
        #expect((hidden["stop"] as? [String: Any])?["stops_before"] as? Int == 1)

        let (clear, clearNow) = try Self.trip(drivenTo: 1500)
        let shown = try Self.body(clear, now: clearNow, stop: .waypoint(id: "b"), within: 0)
        #expect(shown["position"] as? [String: Double] != nil, "\(shown)")
        #expect((shown["route"] as? [Any])?.isEmpty == false)
        // Too many stops before it: hidden wherever the courier is.
        let (early, earlyNow) = try Self.trip(drivenTo: 500)
        #expect(try Self.body(early, now: earlyNow, stop: .waypoint(id: "b"), within: 0)["position"] is NSNull)
        // The destination's link: no waypoints at all.
        #expect((try Self.body(clear, now: clearNow, stop: .destination, within: 5)["waypoints"] as? [Any])?.isEmpty == true)
    }
}
