import TrackHubCore

/// The body of `POST /v1/trips` (PROTOCOL section 5), validated.
public struct CreateTripRequest: Sendable, Equatable {
    /// The trip id asked for (valid per `TripID`); nil: the hub makes one.
    public var id: String?
    /// The route, if any.
    public var route: RouteInput?
    /// Where the rider starts, for a route the hub finds (PROTOCOL 16); nil when not given.
    /// Given only without `route`/`route_polyline`, and only with `destination`.
    public var origin: GeoPoint?
    /// The waypoints, in order (empty when none).
    public var waypoints: [GeoPoint]
    /// Their ids, names and dwells (PROTOCOL 17), parallel to `waypoints`; empty when none
    /// was given.
    public var stops: [StopDetails]
    /// The destination; nil: the route's last point (or none without a route).
    public var destination: GeoPoint?
    /// The rider object exactly as given (to echo as given); nil when absent or `null`.
    public var rider: JSONValue?
    /// The config with defaults filled in.
    public var config: TripConfig

    /// A request with these values.
    public init(
        id: String? = nil, route: RouteInput? = nil, origin: GeoPoint? = nil, waypoints: [GeoPoint] = [], destination: GeoPoint? = nil,
        rider: JSONValue? = nil, config: TripConfig = TripConfig(), stops: [StopDetails] = []
    ) {
        self.stops = stops
        self.id = id
        self.route = route
        self.origin = origin
        self.waypoints = waypoints
        self.destination = destination
        self.rider = rider
        self.config = config
    }

    /// Decodes a body; an empty body is `{}`. Every `bad_request` check comes before the
    /// `too_large` ones (route points, waypoints), per PROTOCOL section 4's precedence.
    public static func decode(_ body: [UInt8], limits: ProtocolLimits = .default) throws(ProtocolError) -> CreateTripRequest {
        try decode(object: RequestBody.object(body, limits: limits, emptyIsObject: true), limits: limits)
    }

    /// Decodes an already parsed body.
    public static func decode(_ value: JSONValue, limits: ProtocolLimits = .default) throws(ProtocolError) -> CreateTripRequest {
        try decode(object: RequestBody.object(value), limits: limits)
    }

    static func decode(object: JSONObject, limits: ProtocolLimits) throws(ProtocolError) -> CreateTripRequest {
        var tooLarge: ProtocolError?
        let id = try Fields.optionalTripID(object["id"], "id")
        let route = try RouteInput.decode(from: object, required: false, limits: limits, tooLarge: &tooLarge)
        var waypoints: [GeoPoint] = []
        var stops: [StopDetails] = []
        if let value = Fields.present(object["waypoints"]) {
            waypoints = try Fields.points(value, "waypoints", limit: limits.maxWaypoints, tooLarge: &tooLarge)
            stops = try Fields.stopDetails(value, "waypoints")
        }
        var destination: GeoPoint?
        if let value = Fields.present(object["destination"]) {
            destination = try Fields.point(value, "destination")
        }
        var rider: JSONValue?
        if let value = Fields.present(object["rider"]) {
            let riderObject = try Fields.object(value, "rider")
            if let riderID = Fields.present(riderObject["id"]) {
                switch riderID {
                case .string: break
                case .number(let number) where number.isFinite: break
                default: throw .badRequest("rider.id must be a string or a number")
                }
            }
            _ = try Fields.optionalString(riderObject["name"], "rider.name")
            // PROTOCOL 1: the rider goes into every snapshot of the trip, so its size is capped.
            var sized = JSONWriter(headroom: 0, capacity: 256)
            sized.value(value)
            let bytes = sized.finish().count
            if bytes > limits.maxRiderBytes, tooLarge == nil {
                tooLarge = .tooLarge("rider is \(bytes) bytes of JSON; the limit is \(limits.maxRiderBytes)")
            }
            rider = value
        }
        var origin: GeoPoint?
        if let value = Fields.present(object["origin"]) {
            origin = try Fields.point(value, "origin")
            if route != nil { throw .badRequest("origin cannot be given with route or route_polyline (the hub finds the route from origin)") }
            if destination == nil { throw .badRequest("destination is required with origin (the route the hub finds ends there)") }
        }
        let config = try TripConfig.decode(from: object["config"])
        if let tooLarge { throw tooLarge }
        return CreateTripRequest(
            id: id, route: route, origin: origin, waypoints: waypoints, destination: destination, rider: rider, config: config,
            stops: stops)
    }
}

extension CreateTripRequest {
    /// The body of a create whose route the hub found (PROTOCOL 16), as the cluster log keeps
    /// it: the client's body with `origin` taken out and the found route as `route`, so every
    /// hub decodes the same trip with the same code and none searches again. The client's
    /// other members are kept as sent.
    public static func bodyWithFoundRoute(_ body: [UInt8], route: [GeoPoint], limits: ProtocolLimits = .default) -> [UInt8] {
        var object = (try? RequestBody.object(body, limits: limits, emptyIsObject: true)) ?? JSONObject()
        object["origin"] = nil
        object["route_polyline"] = nil
        object["route"] = .array(route.map { .array([.number(JSONNumber($0.lon)), .number(JSONNumber($0.lat))]) })
        var w = JSONWriter(headroom: 0, capacity: 256 + route.count * 28)
        w.value(.object(object))
        return w.finish()
    }
}

extension RerouteRequest {
    /// The body of a route the hub found for a trip that left its route (PROTOCOL 16), as the
    /// cluster log keeps it: `route`, and `destination` (the trip's own; the unvisited
    /// waypoints are kept, as a `PUT` without `waypoints` keeps them).
    public static func body(route: [GeoPoint], destination: GeoPoint?) -> [UInt8] {
        var object = JSONObject()
        object["route"] = .array(route.map { .array([.number(JSONNumber($0.lon)), .number(JSONNumber($0.lat))]) })
        if let destination {
            object["destination"] = .object(["lat": .number(JSONNumber(destination.lat)), "lon": .number(JSONNumber(destination.lon))])
        }
        var w = JSONWriter(headroom: 0, capacity: 64 + route.count * 28)
        w.value(.object(object))
        return w.finish()
    }
}
