import TrackHubCore

/// The body of `PUT /v1/trips/{id}/route` (PROTOCOL section 5), validated.
public struct RerouteRequest: Sendable, Equatable {
    /// The new route (required).
    public var route: RouteInput
    /// New waypoints replacing the unvisited ones; nil (absent or `null`): keep them.
    public var waypoints: [GeoPoint]?
    /// The new waypoints' ids, names and dwells (PROTOCOL 17), parallel to `waypoints`; empty
    /// when none was given.
    public var stops: [StopDetails]
    /// The new destination; nil: the new route's last point.
    public var destination: GeoPoint?

    /// A request with these values.
    public init(route: RouteInput, waypoints: [GeoPoint]? = nil, destination: GeoPoint? = nil, stops: [StopDetails] = []) {
        self.stops = stops
        self.route = route
        self.waypoints = waypoints
        self.destination = destination
    }

    /// Decodes a body; `bad_request` checks come before `too_large` ones.
    public static func decode(_ body: [UInt8], limits: ProtocolLimits = .default) throws(ProtocolError) -> RerouteRequest {
        try decode(object: RequestBody.object(body, limits: limits, emptyIsObject: true), limits: limits)
    }

    /// Decodes an already parsed body.
    public static func decode(_ value: JSONValue, limits: ProtocolLimits = .default) throws(ProtocolError) -> RerouteRequest {
        try decode(object: RequestBody.object(value), limits: limits)
    }

    static func decode(object: JSONObject, limits: ProtocolLimits) throws(ProtocolError) -> RerouteRequest {
        var tooLarge: ProtocolError?
        guard let route = try RouteInput.decode(from: object, required: true, limits: limits, tooLarge: &tooLarge) else {
            throw .badRequest("route or route_polyline is required")
        }
        var waypoints: [GeoPoint]?
        var stops: [StopDetails] = []
        if let value = Fields.present(object["waypoints"]) {
            waypoints = try Fields.points(value, "waypoints", limit: limits.maxWaypoints, tooLarge: &tooLarge)
            stops = try Fields.stopDetails(value, "waypoints")
        }
        var destination: GeoPoint?
        if let value = Fields.present(object["destination"]) {
            destination = try Fields.point(value, "destination")
        }
        if let tooLarge { throw tooLarge }
        return RerouteRequest(route: route, waypoints: waypoints, destination: destination, stops: stops)
    }
}
