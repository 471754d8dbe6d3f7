import TrackHubCore

/// A route as a request gave it: `route` (`[[lon, lat], ...]`) or `route_polyline`.
public enum RouteInput: Sendable, Equatable {
    /// The points of `route`, validated (at least 2, not all the same, within the limit).
    case points([GeoPoint])
    /// The text of `route_polyline` (Google encoded polyline, precision 5), left for the
    /// server to decode. Checked here only for its form: characters `?`…`~`, whole values,
    /// an even number of values (lat/lon pairs), at least 2 points, not all deltas zero,
    /// and within the point limit.
    case polyline(String)

    /// The number of points (for a polyline: counted without decoding).
    public var pointCount: Int {
        switch self {
        case .points(let points): return points.count
        case .polyline(let text): return Self.polylineShape(text)?.points ?? 0
        }
    }

    /// Reads `route` / `route_polyline` from a request body. Exactly one may be given (`null`
    /// counts as absent); `required` makes one mandatory. A route over `limits.maxRoutePoints`
    /// is reported through `tooLarge` so that `bad_request` errors take precedence.
    static func decode(
        from object: JSONObject, required: Bool, limits: ProtocolLimits, tooLarge: inout ProtocolError?
    ) throws(ProtocolError) -> RouteInput? {
        let route = Fields.present(object["route"])
        let polyline = Fields.present(object["route_polyline"])
        if route != nil && polyline != nil {
            throw .badRequest("route and route_polyline cannot both be given")
        }
        if let route {
            let array = try Fields.array(route, "route")
            var points: [GeoPoint] = []
            points.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                points.append(try Fields.position(element, "route[\(index)]"))
            }
            guard points.count >= 2 else { throw .badRequest("route must have at least 2 points") }
            if let first = points.first, points.allSatisfy({ $0 == first }) {
                throw .badRequest("route has zero length (all its points are the same)")
            }
            if points.count > limits.maxRoutePoints, tooLarge == nil {
                tooLarge = .tooLarge("route has \(points.count) points; the limit is \(limits.maxRoutePoints)")
            }
            return .points(points)
        }
        if let polyline {
            guard case .string(let text) = polyline else {
                throw .badRequest("route_polyline must be a string (Google encoded polyline, precision 5)")
            }
            guard let shape = polylineShape(text) else {
                throw .badRequest("route_polyline is not a valid Google encoded polyline")
            }
            guard shape.points >= 2 else { throw .badRequest("route_polyline must have at least 2 points") }
            guard !shape.zeroLength else { throw .badRequest("route_polyline has zero length (all its points are the same)") }
            if shape.points > limits.maxRoutePoints, tooLarge == nil {
                tooLarge = .tooLarge(
                    "route_polyline has \(shape.points) points; the route limit is \(limits.maxRoutePoints)")
            }
            return .polyline(text)
        }
        if required { throw .badRequest("route or route_polyline is required") }
        return nil
    }

    /// The number of points of an encoded polyline and whether all points after the first
    /// are the same as it (every delta is `?`, the encoding of 0); nil when malformed.
    static func polylineShape(_ text: String) -> (points: Int, zeroLength: Bool)? {
        var values = 0
        var lastByte: UInt8 = 0
        var allZeroAfterFirst = true
        for byte in text.utf8 {
            guard byte >= 63 && byte <= 126 else { return nil }
            if values >= 2 && byte != 63 { allZeroAfterFirst = false }
            if byte < 95 { values += 1 }  // the last chunk of a value
            lastByte = byte
        }
        guard values > 0, lastByte < 95, values % 2 == 0 else { return nil }
        return (values / 2, allZeroAfterFirst)
    }
}
