import TrackHubCore

/// Encoders for the JSON bodies a client sends to the HTTP API (PROTOCOL section 5); the
/// request types' `decode` read them back equal. Coordinates have 7 decimals (about 1 cm).
public enum ClientRequestBodies {
    /// `POST /v1/trips`: `{id?, route? | route_polyline? | origin?, waypoints?, destination?, rider?, config?}`.
    /// Waypoints are left out when there are none, `config` when it is the default (else it
    /// is written whole, but for `mode` when `car` and `auto_reroute` when not set).
    public static func createTrip(_ request: CreateTripRequest) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 256 + (request.route?.pointCount ?? 0) * 24 + request.waypoints.count * 40)
        w.beginObject()
        w.optionalField("id", request.id)
        if let route = request.route { writeRoute(&w, route) }
        if let origin = request.origin {
            w.key("origin")
            ServerMessages.writePoint(&w, origin)
        }
        if !request.waypoints.isEmpty { writePoints(&w, "waypoints", request.waypoints, stops: request.stops) }
        if let destination = request.destination {
            w.key("destination")
            ServerMessages.writePoint(&w, destination)
        }
        if let rider = request.rider { w.field("rider", rider) }
        if request.config != TripConfig() {
            w.key("config")
            request.config.writeRequest(to: &w)
        }
        w.endObject()
        return w.finish()
    }

    /// `PUT /v1/trips/{id}/route`: `{route | route_polyline, waypoints?, destination?}`
    /// (`waypoints` left out when nil: the unvisited ones are kept).
    public static func reroute(_ request: RerouteRequest) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 128 + request.route.pointCount * 24)
        w.beginObject()
        writeRoute(&w, request.route)
        if let waypoints = request.waypoints { writePoints(&w, "waypoints", waypoints, stops: request.stops) }
        if let destination = request.destination {
            w.key("destination")
            ServerMessages.writePoint(&w, destination)
        }
        w.endObject()
        return w.finish()
    }

    /// `POST /v1/trips/{id}/fixes`: `{fixes: [{lat, lon, ts, seq?, ...}, ...]}` (the fields of
    /// the `fix` op without `trip`; `ClientMessages.fix` says which and in what units).
    public static func fixes(_ request: FixBatchRequest) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 16 + request.fixes.count * 120)
        w.beginObject()
        w.key("fixes")
        w.beginArray()
        for fix in request.fixes {
            w.beginObject()
            fix.writeMembers(to: &w)
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.finish()
    }

    private static func writeRoute(_ w: inout JSONWriter, _ route: RouteInput) {
        switch route {
        case .points(let points):
            w.key("route")
            ServerMessages.writeLine(&w, points)
        case .polyline(let text):
            w.field("route_polyline", text)
        }
    }

    /// Waypoints as `{lat, lon, id?, name?, dwell_s?}` (PROTOCOL 17): the details in `stops`
    /// (parallel to `points`) are written when given.
    private static func writePoints(_ w: inout JSONWriter, _ key: StaticString, _ points: [GeoPoint], stops: [StopDetails] = []) {
        w.key(key)
        w.beginArray()
        for (i, point) in points.enumerated() {
            w.beginObject()
            w.coordinateField("lat", point.lat)
            w.coordinateField("lon", point.lon)
            if i < stops.count {
                w.optionalField("id", stops[i].id)
                w.optionalField("name", stops[i].name)
                if stops[i].dwellS != 0 { w.field("dwell_s", Int64(stops[i].dwellS)) }
            }
            w.endObject()
        }
        w.endArray()
    }
}
