import TrackHubCore

/// Links for one stop (PROTOCOL 17): the checks made when one is issued.
extension ShareService {
    /// Whether `trip` has the stop a link asks to follow: `"destination"` of a trip that has
    /// one, or the id of one of its waypoints (visited or not).
    static func tripHasStop(_ trip: Trip, _ stop: String) -> Bool {
        trip.hasStop(StopRef(wire: stop))
    }
}
