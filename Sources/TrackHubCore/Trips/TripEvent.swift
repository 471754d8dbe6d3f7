/// What happened to a trip (PROTOCOL 4, `event`).
public enum TripEventKind: Sendable, Equatable, Codable {
    case tripCreated
    /// `remainingWaypoints`: unvisited waypoints after this one.
    case waypointReached(index: Int, remainingWaypoints: Int)
    /// `remainingWaypoints`: unvisited waypoints after this one.
    case waypointResumed(index: Int, remainingWaypoints: Int)
    case arrived
    /// `distanceM`: the fix's distance from the route, metres.
    case offRoute(distanceM: Double)
    case backOnRoute
    /// `reason`: who gave the new route (nil in events stored before PROTOCOL 16: a client).
    case rerouted(reason: RerouteReason?)
    case ended
    /// PROTOCOL 18: no fix for the trip's stale threshold. `lastFixT`: when the last stored
    /// fix arrived (hub ms); `battery`: its last reported battery, whole percent (nil: none).
    case signalLost(lastFixT: Int64, battery: Int?)
    /// PROTOCOL 18: a stored fix after `signal_lost`. `gapMs`: between the arrivals of the
    /// previous stored fix and this one.
    case signalBack(gapMs: Int64)
    /// PROTOCOL 18: a fix reported `battery` (whole percent) of 15 or less.
    case batteryLow(battery: Int)

    /// The wire name: "trip_created", "waypoint_reached", ...
    public var name: String {
        switch self {
        case .tripCreated: "trip_created"
        case .waypointReached: "waypoint_reached"
        case .waypointResumed: "waypoint_resumed"
        case .arrived: "arrived"
        case .offRoute: "off_route"
        case .backOnRoute: "back_on_route"
        case .rerouted: "rerouted"
        case .ended: "ended"
        case .signalLost: "signal_lost"
        case .signalBack: "signal_back"
        case .batteryLow: "battery_low"
        }
    }
}

/// One event of a trip: `n` counts from 1 per trip for the trip's whole life.
public struct TripEvent: Sendable, Equatable, Codable {
    /// The event's number within its trip, from 1.
    public var n: Int
    /// What happened (`arrived`, `off_route`, …), the event's wire `type`.
    public var kind: TripEventKind
    /// Hub time it happened, ms since the epoch.
    public var t: Int64
    /// The marker's position when it happened; nil without a marker.
    public var position: GeoPoint?
    /// PROTOCOL 17: the waypoint's `id` for waypoint_reached / waypoint_resumed (wire `stop`);
    /// nil when not given, and for every other event.
    public var stopID: String?
    /// PROTOCOL 17: the waypoint's `name` for the waypoint events (wire `stop_name`); nil when
    /// not given.
    public var stopName: String?

    /// An event; `n` is the trip's next event number.
    public init(n: Int, kind: TripEventKind, t: Int64, position: GeoPoint?, stopID: String? = nil, stopName: String? = nil) {
        self.n = n
        self.kind = kind
        self.t = t
        self.position = position
        self.stopID = stopID
        self.stopName = stopName
    }
}
