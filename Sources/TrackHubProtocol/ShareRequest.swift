import TrackHubCore

/// `POST /v1/trips/{id}/share` `{ttl_s?, stop?, visible_within_stops?}` (PROTOCOL 13, 17): how
/// long the link lives and, for a link for one stop, which stop it follows and from how many
/// stops before it the courier may be shown.
public struct ShareRequest: Sendable, Equatable {
    /// The most stops before its own a link may show the courier from (PROTOCOL 17).
    public static let maxVisibleWithinStops: Int64 = 100

    /// The default life of a link: one day, in seconds.
    public static let defaultTTLSeconds: Int64 = 86_400
    /// The longest: 30 days, in seconds.
    public static let maxTTLSeconds: Int64 = 30 * 86_400

    /// Seconds from now until the token's `exp`.
    public var ttlSeconds: Int64

    /// The stop the link follows, as given: a waypoint id or `"destination"`; nil: the whole
    /// trip (PROTOCOL 13). Whether the trip has it is the share service's check.
    public var stop: String?
    /// How many unvisited waypoints may lie before the stop while the courier is shown (0–100).
    public var visibleWithinStops: Int

    /// A link living `ttlSeconds`, not checked here; `decode` holds a body to 1 s through 30 days.
    public init(ttlSeconds: Int64 = ShareRequest.defaultTTLSeconds, stop: String? = nil, visibleWithinStops: Int = 0) {
        self.ttlSeconds = ttlSeconds
        self.stop = stop
        self.visibleWithinStops = visibleWithinStops
    }

    /// Decodes the body; an empty body takes the default. `ttl_s` must be an integer from 1
    /// to 2 592 000 (30 days); `stop` a string of the trip-id alphabet (a waypoint id, or
    /// `"destination"`); `visible_within_stops` an integer from 0 to 100, default 0.
    public static func decode(_ body: [UInt8], limits: ProtocolLimits = .default) throws(ProtocolError) -> ShareRequest {
        let object = try RequestBody.object(body, limits: limits, emptyIsObject: true)
        let ttl = try Fields.optionalInteger(
            object["ttl_s"], "ttl_s", 1...maxTTLSeconds,
            rangeMessage: "ttl_s must be an integer from 1 to \(maxTTLSeconds) (30 days)")
        let stop = try Fields.optionalTripID(object["stop"], "stop")
        let within = try Fields.optionalInteger(
            object["visible_within_stops"], "visible_within_stops", 0...maxVisibleWithinStops,
            rangeMessage: "visible_within_stops must be an integer from 0 to \(maxVisibleWithinStops)")
        return ShareRequest(ttlSeconds: ttl ?? defaultTTLSeconds, stop: stop, visibleWithinStops: Int(within ?? 0))
    }

    /// The body a client sends (the simulator's customers, the load generator): `ttl_s`, and
    /// `stop` with `visible_within_stops` for a link for one stop; `decode` reads it back.
    public func encoded() -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 80 + (stop?.utf8.count ?? 0))
        w.beginObject()
        w.field("ttl_s", ttlSeconds)
        if let stop {
            w.field("stop", stop)
            w.field("visible_within_stops", visibleWithinStops)
        }
        w.endObject()
        return w.finish()
    }
}

extension HTTPBodies {
    /// `201 {token, jti, url: "/t/<token>", expires_at}` (`expires_at` in ms since the epoch).
    public static func share(token: String, jti: String, expiresAt: Int64) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 128 + token.utf8.count * 2)
        w.beginObject()
        w.field("token", token)
        w.field("jti", jti)
        w.field("url", "/t/" + token)
        w.field("expires_at", expiresAt)
        w.endObject()
        return w.finish()
    }

    /// `DELETE /v1/shares/{jti}`: `200 {jti, revoked: true}`.
    public static func shareRevoked(jti: String) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 64 + jti.utf8.count)
        w.beginObject()
        w.field("jti", jti)
        w.field("revoked", true)
        w.endObject()
        return w.finish()
    }
}
