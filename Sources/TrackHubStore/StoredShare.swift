/// A share link the hub issued (PROTOCOL 13): the token's `jti`, its trip, when it expires and
/// when it was revoked. Kept so a revocation holds across restarts; forgotten once expired.
public struct StoredShare: Sendable, Equatable {
    /// The share token's `jti` claim: the key a revocation is looked up by.
    public var jti: String
    /// The id of the trip the link shows.
    public var trip: String
    /// The token's `exp`, in ms since the epoch.
    public var expiresAt: Int64
    /// The hub's clock (ms) when it was revoked; nil: still valid.
    public var revokedAt: Int64?
    /// The stop a link for one stop follows (PROTOCOL 17), minted into its token as the `stop`
    /// claim. Not stored: the token carries it, and revocation needs only the `jti`.
    public var stop: String?
    /// The token's `visible_within_stops` claim (with `stop`); not stored either.
    public var visibleWithinStops: Int

    /// A share link as issued (`revokedAt` nil) or revoked.
    public init(jti: String, trip: String, expiresAt: Int64, revokedAt: Int64? = nil, stop: String? = nil, visibleWithinStops: Int = 0) {
        self.jti = jti
        self.trip = trip
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.stop = stop
        self.visibleWithinStops = visibleWithinStops
    }
}
