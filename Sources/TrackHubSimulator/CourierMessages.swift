import TrackHubCore
import TrackHubProtocol

/// One fix as the simulator sends it (PROTOCOL 3, `fix`).
public struct SimulatedFix: Sendable, Equatable {
    /// The trip id the hub gave at creation.
    public var trip: String
    /// The rider's number for the fix within the trip, from 1 (not sent by the phone protocols).
    public var seq: Int64
    /// The device clock's time of the fix, ms since the epoch: it runs `speedup` times faster than
    /// the wall clock but never ahead of the hub's skew allowance, and rises with every fix.
    public var ts: Int64
    /// Latitude in degrees, GPS noise included.
    public var lat: Double
    /// Longitude in degrees, GPS noise included.
    public var lon: Double
    /// `duration_ms`: wall ms since the rider's previous fix, at most 60 000; 0 for a trip's first.
    public var durationMs: Int64
    /// The rider's speed, m/s (0 at a stop); nil for a trace rider.
    public var speedMps: Double?
    /// The direction of travel, degrees clockwise from north; nil for a trace rider.
    public var heading: Double?
    /// The reported accuracy, metres (`SimulationSettings.accuracyM`); nil for a trace rider.
    public var accuracyM: Double?
}

/// The client messages a simulated courier sends, encoded by TrackHubProtocol's
/// `ClientMessages` and `ClientRequestBodies`.
enum CourierMessages {
    /// `fix`, with the speed rounded to 0.1 m/s and the heading to whole degrees.
    static func fix(_ fix: SimulatedFix, id: Int) -> String {
        let input = FixInput(
            lat: fix.lat, lon: fix.lon, ts: fix.ts, seq: fix.seq, durationMs: Double(fix.durationMs),
            speedMps: fix.speedMps.map { ($0 * 10).rounded() / 10 }, heading: fix.heading?.rounded(), accuracyM: fix.accuracyM)
        return text(ClientMessages.fix(trip: fix.trip, input, id: .integer(Int64(id))))
    }

    /// A Traccar Client / OsmAnd request for `device` (PROTOCOL 11): speed in knots, time in ms.
    static func osmandPath(_ fix: SimulatedFix, device: String) -> String {
        var query = "id=\(device)&lat=\(fix.lat)&lon=\(fix.lon)&timestamp=\(fix.ts)"
        if let speed = fix.speedMps { query += "&speed=\((speed / OsmAndRequest.metresPerSecondPerKnot * 10).rounded() / 10)" }
        if let heading = fix.heading { query += "&bearing=\(heading.rounded())" }
        if let accuracy = fix.accuracyM { query += "&accuracy=\(accuracy)" }
        return "/v1/osmand?" + query
    }

    /// An OwnTracks `location` (PROTOCOL 11): `tst` in whole seconds, `vel` in km/h.
    static func ownTracks(_ fix: SimulatedFix) -> [UInt8] {
        DeviceRequestBodies.ownTracksLocation(
            lat: fix.lat, lon: fix.lon, tstSeconds: (fix.ts + 999) / 1000, tid: "sm",
            velKmh: fix.speedMps.map { ($0 * 3.6).rounded() }, cog: fix.heading?.rounded(), accM: fix.accuracyM?.rounded())
    }

    /// `PUT /v1/devices/{device}`'s body: bind the device to `trip`.
    static func bindDevice(trip: String) -> [UInt8] {
        DeviceRequestBodies.device(trip: trip)
    }

    static func proceed(trip: String, id: Int) -> String {
        text(ClientMessages.proceed(trip: trip, id: .integer(Int64(id))))
    }

    /// `subscribe` in segments mode. Subscribed right after the trip was created:
    /// `since_event` 0 replays what came before (`trip_created`), so the summary's events are complete.
    static func subscribe(trip: String, id: Int) -> String {
        text(ClientMessages.subscribe(trip: trip, mode: .segments, sinceEvent: 0, id: .integer(Int64(id))))
    }

    static func unsubscribe(trip: String, id: Int) -> String {
        text(ClientMessages.unsubscribe(trip: trip, id: .integer(Int64(id))))
    }

    /// `POST /v1/trips` body: a route with via points, or only a rider (a recorded trace).
    static func createTrip(route: Route?, waypoints: [GeoPoint], riderID: String, riderName: String) -> [UInt8] {
        let rider = JSONValue.object(["id": .string(riderID), "name": .string(riderName)])
        return ClientRequestBodies.createTrip(CreateTripRequest(
            route: route.map { .points($0.points) }, waypoints: route == nil ? [] : waypoints, rider: rider))
    }

    /// `POST /v1/trips` body of a multi-stop trip (PROTOCOL 17): the route, and each stop as
    /// a waypoint `{lat, lon, id, name, dwell_s}`; with `routed`, `origin` and `destination`
    /// instead of the route, for the hub's router (PROTOCOL 16).
    static func createTrip(route: Route, stops: [PlannedStop], routed: Bool, riderID: String, riderName: String) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 256 + route.points.count * 24 + stops.count * 120)
        w.beginObject()
        if routed {
            w.key("origin")
            writePoint(&w, route.points[0])
        } else {
            w.key("route")
            w.beginArray()
            for point in route.points { w.lonLat(lon: point.lon, lat: point.lat) }
            w.endArray()
        }
        w.key("waypoints")
        w.beginArray()
        for stop in stops {
            w.beginObject()
            w.coordinateField("lat", stop.point.lat)
            w.coordinateField("lon", stop.point.lon)
            w.field("id", stop.id)
            w.field("name", stop.name)
            w.field("dwell_s", stop.dwellS)
            w.endObject()
        }
        w.endArray()
        if routed {
            w.key("destination")
            writePoint(&w, route.end)
        }
        w.field("rider", JSONValue.object(["id": .string(riderID), "name": .string(riderName)]))
        w.endObject()
        return w.finish()
    }

    /// Writes `{"lat":…,"lon":…}` (the encoder's own point writer is internal to TrackHubProtocol).
    private static func writePoint(_ w: inout JSONWriter, _ point: GeoPoint) {
        w.beginObject()
        w.coordinateField("lat", point.lat)
        w.coordinateField("lon", point.lon)
        w.endObject()
    }

    /// `POST /v1/trips` body of a trip from its stops alone (PROTOCOL 16): where the rider
    /// starts, the via points and the destination; the hub's router finds the route.
    static func createTripFromStops(origin: GeoPoint, waypoints: [GeoPoint], destination: GeoPoint, riderID: String, riderName: String) -> [UInt8] {
        let rider = JSONValue.object(["id": .string(riderID), "name": .string(riderName)])
        return ClientRequestBodies.createTrip(CreateTripRequest(
            origin: origin, waypoints: waypoints, destination: destination, rider: rider))
    }

    /// `PUT /v1/trips/{id}/route` body: the new route (unvisited via points are kept).
    static func reroute(_ route: Route) -> [UInt8] {
        ClientRequestBodies.reroute(RerouteRequest(route: .points(route.points)))
    }

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
