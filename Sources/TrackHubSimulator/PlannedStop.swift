import TrackHubCore

/// A stop of a multi-stop trip (`simulate --stops`, PROTOCOL 17): where it is, the id and
/// name the hub shows for it, and how long the courier plans to stay.
public struct PlannedStop: Sendable, Equatable {
    /// The stop's point on the planned route.
    public var point: GeoPoint
    /// The waypoint `id` (`stop-1`, … in route order).
    public var id: String
    /// The waypoint `name`.
    public var name: String
    /// The planned dwell, `dwell_s` (device seconds); the courier waits it before `proceed`.
    public var dwellS: Int
}
