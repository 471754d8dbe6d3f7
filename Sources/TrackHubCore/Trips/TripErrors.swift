/// Why a trip cannot be created or rerouted as asked. Each names the offending field for the wire message.
public enum TripSetupError: Error, Equatable, Sendable {
    /// The waypoint at `index` (of the list given) is farther than reroute_distance_m from the
    /// route after the previous projection; `distanceM` metres. Field "waypoints[i]" (HTTP 400).
    case waypointTooFar(index: Int, distanceM: Double)
    /// The destination is farther than reroute_distance_m from the route after the last
    /// waypoint's projection; `distanceM` metres. Field "destination" (HTTP 400).
    case destinationTooFar(distanceM: Double)
    /// Added to the API: a reroute of a trip that is `arrived` or `ended` (HTTP 409 `conflict`).
    case finished(status: TripStatus)
    /// PROTOCOL 17: `waypoints[index].id` repeats an id of the same request, of a visited
    /// waypoint, or of the waypoint the trip holds at. Field "waypoints[i].id" (HTTP 400).
    case duplicateStopID(index: Int)

    /// The offending field's name on the wire.
    public var field: String {
        switch self {
        case .waypointTooFar(let index, _): "waypoints[\(index)]"
        case .destinationTooFar: "destination"
        case .finished: "status"
        case .duplicateStopID(let index): "waypoints[\(index)].id"
        }
    }

    /// True for the error that maps to `conflict` (409) rather than `bad_request` (400).
    public var isConflict: Bool {
        if case .finished = self { return true }
        return false
    }

    /// A plain-words message that contains the field's name.
    public var message: String {
        switch self {
        case .waypointTooFar(let index, let d):
            "waypoints[\(index)] is \(Int(d.rounded())) m from the route, farther than reroute_distance_m"
        case .destinationTooFar(let d):
            "destination is \(Int(d.rounded())) m from the route, farther than reroute_distance_m"
        case .finished(let status):
            "the trip's status is \(status.rawValue): its route can no longer change"
        case .duplicateStopID(let index):
            "waypoints[\(index)].id is already the id of another waypoint of the trip"
        }
    }
}

/// Why a command (`proceed`) is refused; the server answers `conflict` (409).
public enum TripCommandError: Error, Equatable, Sendable {
    /// `proceed` while the trip is not holding; `status` is its status.
    case notHolding(status: TripStatus)
    /// The trip is arrived or ended.
    case finished(status: TripStatus)

    /// A plain-words message naming the trip's status.
    public var message: String {
        switch self {
        case .notHolding(let s): "the trip is not holding (status \(s.rawValue))"
        case .finished(let s): "the trip is finished (status \(s.rawValue))"
        }
    }
}
