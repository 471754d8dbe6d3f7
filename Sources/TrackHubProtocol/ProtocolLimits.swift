/// The limits of PROTOCOL section 1 that message decoding enforces; the server fills them from its flags.
public struct ProtocolLimits: Sendable, Hashable {
    /// Largest client message in bytes (`--max-message`, 64 KiB).
    public var maxMessageBytes: Int
    /// Deepest JSON nesting accepted (32 levels).
    public var maxNestingDepth: Int
    /// Most points in a route (`--max-route-points`, 10 000).
    public var maxRoutePoints: Int
    /// Most waypoints of a trip (`--max-waypoints`, 1 000).
    public var maxWaypoints: Int
    /// How far a fix's `ts` may be ahead of the hub's clock, in ms (`--max-clock-skew`, 5 min).
    public var maxClockSkewMs: Int64
    /// Largest `rider` of a trip, in bytes of JSON (4 KiB): it is sent in every snapshot.
    public var maxRiderBytes: Int
    /// Most fixes in one `POST /v1/trips/{id}/fixes` (10 000).
    public var maxFixesPerBatch: Int

    /// The defaults of PROTOCOL section 1, or the given values.
    public init(
        maxMessageBytes: Int = 65_536,
        maxNestingDepth: Int = 32,
        maxRoutePoints: Int = 10_000,
        maxWaypoints: Int = 1_000,
        maxClockSkewMs: Int64 = 300_000,
        maxRiderBytes: Int = 4096,
        maxFixesPerBatch: Int = 10_000
    ) {
        self.maxMessageBytes = maxMessageBytes
        self.maxNestingDepth = maxNestingDepth
        self.maxRoutePoints = maxRoutePoints
        self.maxWaypoints = maxWaypoints
        self.maxClockSkewMs = maxClockSkewMs
        self.maxRiderBytes = maxRiderBytes
        self.maxFixesPerBatch = maxFixesPerBatch
    }

    /// The defaults of PROTOCOL section 1.
    public static let `default` = ProtocolLimits()
}
