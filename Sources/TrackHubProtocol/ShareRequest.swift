/// `POST /v1/trips/{id}/share` `{ttl_s?}` (PROTOCOL 13): how long the link lives.
public struct ShareRequest: Sendable, Equatable {
    /// The default life of a link: one day, in seconds.
    public static let defaultTTLSeconds: Int64 = 86_400
    /// The longest: 30 days, in seconds.
    public static let maxTTLSeconds: Int64 = 30 * 86_400

    /// Seconds from now until the token's `exp`.
    public var ttlSeconds: Int64

    /// A link living `ttlSeconds`, not checked here; `decode` holds a body to 1 s through 30 days.
    public init(ttlSeconds: Int64 = ShareRequest.defaultTTLSeconds) {
        self.ttlSeconds = ttlSeconds
    }

    /// Decodes the body; an empty body takes the default. `ttl_s` must be an integer from 1
    /// to 2 592 000 (30 days).
    public static func decode(_ body: [UInt8], limits: ProtocolLimits = .default) throws(ProtocolError) -> ShareRequest {
        let object = try RequestBody.object(body, limits: limits, emptyIsObject: true)
        let ttl = try Fields.optionalInteger(
            object["ttl_s"], "ttl_s", 1...maxTTLSeconds,
            rangeMessage: "ttl_s must be an integer from 1 to \(maxTTLSeconds) (30 days)")
        return ShareRequest(ttlSeconds: ttl ?? defaultTTLSeconds)
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
