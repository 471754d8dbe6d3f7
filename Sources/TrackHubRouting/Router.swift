import TrackHubCore

/// A search for a route through points in order (PROTOCOL 16): the first is where the
/// rider starts, the last where the trip ends, those between are stops passed in order.
public struct RouteQuery: Sendable, Equatable {
    /// The points to pass, in order: origin, waypoints, destination (2 at least).
    public var points: [GeoPoint]
    /// Which roads may be used and how fast (the trip's `mode`).
    public var mode: TravelMode

    /// A search through `points` for `mode`.
    public init(points: [GeoPoint], mode: TravelMode) {
        self.points = points
        self.mode = mode
    }
}

/// A route a router found: its path along the roads (`[lon, lat]` order is the wire's, this
/// is points), its length and the router's travel time for it.
public struct FoundRoute: Sendable, Equatable {
    /// The route along the roads, in order, at least two points.
    public var path: [GeoPoint]
    /// The path's own geodesic length in metres.
    public var lengthM: Double
    /// The router's travel time for the path in seconds (its speeds for the mode, not traffic).
    public var durationS: Double

    /// A route as a router found it.
    public init(path: [GeoPoint], lengthM: Double, durationS: Double) {
        self.path = path
        self.lengthM = lengthM
        self.durationS = durationS
    }
}

/// Why a search found no route. `index` is the point's position in `RouteQuery.points`, so
/// the hub can name the field (`origin`, `waypoints[i]`, `destination`).
public enum RouterError: Error, Sendable, Equatable {
    /// The point is farther than the router's snap distance from any road of the mode.
    case tooFarFromRoad(index: Int, distanceM: Double?)
    /// No path of the mode leads from the point before `index` to it.
    case noPath(index: Int)
    /// The search could not run (the queue is full, the router is shutting down, it did not
    /// start within the queue's deadline, its client had gone).
    case unavailable(String)
    /// The client's share of the router's queue is full (PROTOCOL 16: a tenth of it).
    case rateLimited(String)
    /// More points than the router routes through in one search (`Router.maxPoints`).
    case tooManyPoints(limit: Int)
    /// The router failed for a reason of its own.
    case failed(String)
}

/// What finds routes for the hub. One backend is Routino, embedded (`RoutinoRouter`); an
/// HTTP engine (OSRM, Valhalla, GraphHopper) would be another: it would map `RouteQuery` to
/// its request, its answer to `FoundRoute`, and its "no road near"/"no route" answers to
/// `RouterError` (docs/routing.md).
///
/// `findRoute` blocks; the hub calls it only through `RouterQueue`, one search at a time,
/// never on the service thread. A backend may rely on that (Routino's library keeps global
/// state and is not safe to call from two threads at once).
public protocol Router: AnyObject, Sendable {
    /// What `/metrics` and logs call the backend (`routino`).
    var name: String { get }
    /// How far a point may be from a road and still be routed from (PROTOCOL 16: 500 m).
    var maxSnapDistanceM: Double { get }
    /// The most points one search may go through (origin and destination included).
    var maxPoints: Int { get }
    /// Searches; blocks until it has a route or an error (seconds for a long route).
    func findRoute(_ query: RouteQuery) -> Result<FoundRoute, RouterError>
}
