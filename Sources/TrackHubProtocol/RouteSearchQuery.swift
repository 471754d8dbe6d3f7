import TrackHubCore

/// The query of `GET /v1/route` (PROTOCOL 16): `?from=LAT,LON&to=LAT,LON&via=LAT,LON;LAT,LON&mode=car`.
/// `from` and `to` are required; `via` (the stops in order) and `mode` (default `car`) are not.
public struct RouteSearchQuery: Sendable, Equatable {
    /// Where the route starts (`from`).
    public var from: GeoPoint
    /// The stops to pass, in order; at most `ProtocolLimits.maxWaypoints`.
    public var via: [GeoPoint]
    /// Where the route ends (`to`).
    public var to: GeoPoint
    /// The profile the router searches with (`car` unless `mode` says otherwise).
    public var mode: TravelMode

    /// A query from points already checked; `parse` checks the ranges and the `via` limit.
    public init(from: GeoPoint, via: [GeoPoint] = [], to: GeoPoint, mode: TravelMode = .car) {
        self.from = from
        self.via = via
        self.to = to
        self.mode = mode
    }

    /// Every point of the search in order: `from`, the `via` points, `to`.
    public var points: [GeoPoint] { [from] + via + [to] }

    /// Parses a query string (with or without `?`).
    public static func parse(_ query: String, limits: ProtocolLimits = .default) throws(ProtocolError) -> RouteSearchQuery {
        try parse(QueryString.parse(query), limits: limits)
    }

    /// Reads already parsed parameters; errors name the parameter (`via[i]` for a stop).
    public static func parse(_ query: QueryString, limits: ProtocolLimits = .default) throws(ProtocolError) -> RouteSearchQuery {
        guard let fromText = query["from"], !fromText.isEmpty else { throw .badRequest("from is required (LAT,LON)") }
        guard let toText = query["to"], !toText.isEmpty else { throw .badRequest("to is required (LAT,LON)") }
        let from = try point(fromText, "from")
        let to = try point(toText, "to")
        var via: [GeoPoint] = []
        let viaParts = viaTexts(query)
        if viaParts.count > limits.maxWaypoints {
            throw .tooLarge("via has \(viaParts.count) points; the limit is \(limits.maxWaypoints)")
        }
        for (i, part) in viaParts.enumerated() { via.append(try point(part, "via[\(i)]")) }
        var mode = TravelMode.car
        if let modeText = query["mode"], !modeText.isEmpty {
            guard let parsed = TravelMode(rawValue: modeText) else { throw .badRequest("mode must be one of car, bicycle, foot") }
            mode = parsed
        }
        return RouteSearchQuery(from: from, via: via, to: to, mode: mode)
    }

    /// The stops of `via`, in order: `LAT,LON` parts separated by `;`, from every `via`
    /// parameter. libwebsockets splits a query at `;` as well as `&`, so a part of a `via`
    /// list may arrive as a parameter of its own, with no `=` (name `LAT,LON`, value ""):
    /// such parameters right after a `via` belong to it.
    static func viaTexts(_ query: QueryString) -> [String] {
        var parts: [String] = []
        var inVia = false
        for item in query.items {
            if item.name == "via" {
                inVia = true
                parts += item.value.split(separator: ";", omittingEmptySubsequences: true).map(String.init)
            } else if inVia, item.value.isEmpty, item.name.contains(",") {
                parts.append(item.name)
            } else {
                inVia = false
            }
        }
        return parts
    }

    /// `LAT,LON` in degrees, within ±90 and ±180.
    static func point(_ text: String, _ name: String) throws(ProtocolError) -> GeoPoint {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let lat = QueryString.number(String(parts[0]))?.value,
            let lon = QueryString.number(String(parts[1]))?.value, lat.isFinite, lon.isFinite
        else { throw .badRequest("\(name) must be LAT,LON (two comma-separated numbers)") }
        guard abs(lat) <= 90 else { throw .badRequest("\(name): latitude must be within ±90") }
        guard abs(lon) <= 180 else { throw .badRequest("\(name): longitude must be within ±180") }
        return GeoPoint(lat: lat, lon: lon)
    }
}

extension HTTPBodies {
    /// The answer of `GET /v1/route` (PROTOCOL 16): `{route, distance_m, duration_s}`; `route`
    /// a `[lon, lat]` line, `distance_m` its length, `duration_s` the router's travel time.
    public static func foundRoute(path: [GeoPoint], distanceM: Double, durationS: Double) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 64 + path.count * 28)
        w.beginObject()
        w.key("route")
        ServerMessages.writeLine(&w, path)
        w.field("distance_m", ServerMessages.rounded(distanceM, places: 1))
        w.field("duration_s", ServerMessages.rounded(durationS, places: 1))
        w.endObject()
        return w.finish()
    }
}
