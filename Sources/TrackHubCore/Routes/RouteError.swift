/// Why a list of points is not a usable route.
public enum RouteError: Error, Equatable, Sendable {
    /// Fewer than two points.
    case tooFewPoints
    /// Every point is the same: the route has no length to travel along.
    case zeroLength
    /// The point at `index` is not finite or outside lat ±90 / lon ±180 (or a GeoJSON pair is not two numbers).
    case invalidCoordinate(index: Int)
}

/// A point of a route matched to a query point.
public struct RouteMatch: Sendable, Equatable {
    /// Along-route distance of the matched point, in metres from the route's start.
    public var alongM: Double
    /// Distance from the query point to the matched point, in metres.
    public var offsetM: Double
    /// The matched point on the route.
    public var point: GeoPoint
    /// Index of the segment (points[i]...points[i+1]) the matched point lies on.
    public var segmentIndex: Int

    /// A match as `Route.nearest`, `candidates` or `snap` finds it.
    public init(alongM: Double, offsetM: Double, point: GeoPoint, segmentIndex: Int) {
        self.alongM = alongM
        self.offsetM = offsetM
        self.point = point
        self.segmentIndex = segmentIndex
    }
}
