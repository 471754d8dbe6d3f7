/// What else a link for one stop may learn (PROTOCOL 17 "Nothing of the other stops"): the
/// trip's status while the courier is hidden, and which events reach it.
extension StopVisibility {
    /// The status a stop link reads: the trip's while the courier is shown; while hidden,
    /// `moving` whatever the trip's is (`holding` would say "the courier is at someone's door
    /// now", `off_route` where), unless `pending`, `arrived` or `ended`.
    public static func status(_ status: TripStatus, courierShown: Bool) -> TripStatus {
        if courierShown { return status }
        switch status {
        case .pending, .arrived, .ended: return status
        case .unknown, .moving, .holding, .offRoute: return .moving
        }
    }

    /// Whether an event reaches a stop link: only its own stop's `waypoint_reached` (the
    /// waypoint whose stable `index` is `ownWaypointIndex`), `arrived` for a link following
    /// the destination, `ended`, and the courier's `signal_lost` and `signal_back`. Nothing
    /// of another stop (its reach or resume), of the route (`rerouted`, `off_route`), or of
    /// the phone (`battery_low`).
    public static func letsThrough(_ event: TripEventKind, ownWaypointIndex: Int?, followsDestination: Bool) -> Bool {
        switch event {
        case .waypointReached(let index, _): return !followsDestination && index == ownWaypointIndex
        case .arrived: return followsDestination
        case .ended, .signalLost, .signalBack: return true
        case .tripCreated, .waypointResumed, .offRoute, .backOnRoute, .rerouted, .batteryLow: return false
        }
    }

    /// `letsThrough` for a stored event known by its wire `name` and its `stop` field (the
    /// waypoint's id on `waypoint_reached`): what a replay and the live side decide from the
    /// stored bytes, for a link following `followed`.
    public static func letsThrough(eventName: String, eventStop: String?, followed: StopRef) -> Bool {
        switch eventName {
        case "waypoint_reached":
            if case .waypoint(let id) = followed { return eventStop == id }
            return false
        case "arrived": return followed == .destination
        case "ended", "signal_lost", "signal_back": return true
        default: return false
        }
    }
}
