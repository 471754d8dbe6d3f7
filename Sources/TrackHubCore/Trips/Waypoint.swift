/// A stop on the way (PROTOCOL 6.6). Waypoints split the route into legs and are reached in order.
public struct Waypoint: Sendable, Codable, Equatable {
    /// 0-based position in the list given at creation (reroutes number new ones after the highest
    /// index so far); never changes.
    public var index: Int
    /// The waypoint as given.
    public var point: GeoPoint
    /// Along-route distance (metres) of its projection onto the route; nil without a route.
    public var alongM: Double?
    /// True once the trip has passed it (`proceed`, or at once without waiting).
    public var visited: Bool

    /// A waypoint, not yet visited unless said.
    public init(index: Int, point: GeoPoint, alongM: Double?, visited: Bool = false) {
        self.index = index
        self.point = point
        self.alongM = alongM
        self.visited = visited
    }
}
