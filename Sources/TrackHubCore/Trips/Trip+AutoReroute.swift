/// Automatic rerouting (PROTOCOL 16): when the hub asks its router for a new route. The
/// search itself is the hub's (off the service thread); this only decides, from the trip's
/// state and the clock passed in.
extension Trip {
    /// A failed search is tried again at a later off-route fix, at most this often.
    public static let rerouteRetryMs: Int64 = 10_000

    /// The points of the search to run now, in order: the last applied fix (where the rider
    /// is), the unvisited waypoints, the destination; nil when none is due. Due when
    /// `config.auto_reroute` is on, the trip is `off_route` (6.8) and has had at least two
    /// applied fixes off the route in this excursion (the one that left it and one more),
    /// and the last failed search (`lastFailureAt`, hub ms) is at least 10 s old.
    public func rerouteSearchPoints(now: Int64, lastFailureAt: Int64?) -> [GeoPoint]? {
        guard config.reroutesAutomatically, status == .offRoute, offRouteFixCount >= 2 else { return nil }
        guard let destination, let from = lastApplied?.point else { return nil }
        if let failed = lastFailureAt, now - failed < Self.rerouteRetryMs { return nil }
        return [from] + waypoints[visitedCount...].map(\.point) + [destination]
    }
}
