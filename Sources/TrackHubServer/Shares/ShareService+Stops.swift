import TrackHubCore

/// Links for one stop (PROTOCOL 17): the checks made when one is issued.
extension ShareService {
    /// The word a link for the trip's destination names as its stop.
    static let destinationStop = "destination"

    /// Whether `trip` has the stop a link asks to follow: `"destination"` of a trip that has
    /// one. Waypoint ids (PROTOCOL 17) are not in the trip model yet, so a link for a waypoint
    /// is refused until they are (then: `trip.hasStop(StopRef(wire: stop))`).
    static func tripHasStop(_ trip: Trip, _ stop: String) -> Bool {
        stop == destinationStop && trip.destination != nil
    }
}
