import TrackHubCore

/// The body of `POST /v1/trips` (PROTOCOL section 5), validated.
public struct CreateTripRequest: Sendable, Equatable {
    /// The trip id asked for (valid per `TripID`); nil: the hub makes one.
    public var id: String?
    /// The route, if any.
    public var route: RouteInput?
    /// The waypoints, in order (empty when none).
    public var waypoints: [GeoPoint]
    /// The destination; nil: the route's last point (or none without a route).
    public var destination: GeoPoint?
    /// The rider object exactly as given (to echo as given); nil when absent or `null`.
    public var rider: JSONValue?
    /// The config with defaults filled in.
    public var config: TripConfig

    /// A request with these values.
    public init(
        id: String? = nil, route: RouteInput? = nil, waypoints: [GeoPoint] = [], destination: GeoPoint? = nil,
        rider: JSONValue? = nil, config: TripConfig = TripConfig()
    ) {
        self.id = id
        self.route = route
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
        if let value = Fields.present(object["waypoints"]) {
            waypoints = try Fields.points(value, "waypoints", limit: limits.maxWaypoints, tooLarge: &tooLarge)
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
        let config = try TripConfig.decode(from: object["config"])
        if let tooLarge { throw tooLarge }
        return CreateTripRequest(
            id: id, route: route, waypoints: waypoints, destination: destination, rider: rider, config: config)
    }
}
