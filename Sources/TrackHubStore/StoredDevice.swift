import TrackHubCore

/// A registered phone (PROTOCOL 11): its id (its credential on the device endpoints), the
/// trip it is bound to, a name, and when and where it last sent a fix.
public struct StoredDevice: Sendable, Equatable {
    /// The device's id: its credential on the device endpoints, so never logged.
    public var id: String
    /// The trip its fixes go to; nil: bound to none.
    public var trip: String?
    /// A label for people (the `name` of `PUT /v1/devices/{device}`); nil: none given.
    public var name: String?
    /// The hub's clock (ms) at its last fix; nil before the first.
    public var lastSeen: Int64?
    /// Where its last fix was; nil before the first.
    public var lastPosition: GeoPoint?

    /// A device as registered; `lastSeen` and `lastPosition` are set by its fixes.
    public init(id: String, trip: String?, name: String?, lastSeen: Int64? = nil, lastPosition: GeoPoint? = nil) {
        self.id = id
        self.trip = trip
        self.name = name
        self.lastSeen = lastSeen
        self.lastPosition = lastPosition
    }
}
