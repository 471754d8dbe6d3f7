/// Which stop a subscription or a link follows (PROTOCOL 17 `stop`): a waypoint by id, or the
/// destination.
public enum StopRef: Sendable, Equatable, Hashable {
    /// The waypoint with this id.
    case waypoint(id: String)
    /// The trip's destination (wire `"destination"`).
    case destination

    /// The wire word for the destination.
    public static let destinationWord = "destination"

    /// Reads the wire string: `"destination"` or a waypoint id. Does not check the id exists.
    public init(wire: String) {
        self = wire == Self.destinationWord ? .destination : .waypoint(id: wire)
    }

    /// The wire string: `"destination"` or the id.
    public var wire: String {
        switch self {
        case .destination: Self.destinationWord
        case .waypoint(let id): id
        }
    }
}

/// Where the trip stands with one stop (PROTOCOL 17, the snapshot's `stop` object and the
/// numbers a stop subscription sees).
public struct StopProgress: Sendable, Equatable {
    /// The stop as asked (`"destination"` for the destination).
    public var id: String
    /// Unvisited waypoints before it (the one the trip holds at counts).
    public var stopsBefore: Int
    /// Seconds until the courier is there, dwells before it included; 0 once reached; nil when
    /// the trip's own eta_s is.
    public var etaS: Double?
    /// Metres along the route to it; 0 once reached; nil when the trip's own remaining_m is.
    public var remainingM: Double?
    /// Its waypoint_reached (or `arrived` for the destination) has happened.
    public var reached: Bool
    /// The stop's point.
    public var point: GeoPoint
    /// Along-route distance of its projection; nil without a route.
    public var alongM: Double?

    /// A stop's progress.
    public init(
        id: String, stopsBefore: Int, etaS: Double?, remainingM: Double?, reached: Bool, point: GeoPoint, alongM: Double?
    ) {
        self.id = id
        self.stopsBefore = stopsBefore
        self.etaS = etaS
        self.remainingM = remainingM
        self.reached = reached
        self.point = point
        self.alongM = alongM
    }
}
