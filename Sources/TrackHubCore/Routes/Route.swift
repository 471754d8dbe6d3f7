import Foundation

/// A planned route: a polyline of WGS 84 points with precomputed along-route distances and a
/// spatial index for matching positions to it.
///
/// A value type whose data lives in one immutable shared object, so copying a route (into a
/// trip, a snapshot, a task) costs one reference count, not one per array.
public struct Route: Sendable {
    /// Everything derived from the points, computed once in `init`.
    final class Storage: Sendable {
        let points: [GeoPoint]
        let cumulativeM: [Double]
        /// bearings[i]: initial bearing of segment i (points[i] → points[i+1]), degrees [0, 360).
        let bearings: [Double]
        let index: RouteIndex

        init(points: [GeoPoint], cumulativeM: [Double], bearings: [Double], index: RouteIndex) {
            self.points = points
            self.cumulativeM = cumulativeM
            self.bearings = bearings
            self.index = index
        }
    }

    let storage: Storage

    /// A route through `points` in order.
    /// - Throws: `RouteError.tooFewPoints` below 2 points, `.invalidCoordinate(index:)` for a
    ///   point outside lat ±90 / lon ±180 or not finite, `.zeroLength` when the total length is 0.
    public init(points: [GeoPoint]) throws(RouteError) {
        guard points.count >= 2 else { throw .tooFewPoints }
        for (i, p) in points.enumerated() where !p.isValid { throw .invalidCoordinate(index: i) }
        var cumulative = [Double](repeating: 0, count: points.count)
        var bearings = [Double](repeating: 0, count: points.count - 1)
        for i in 1..<points.count {
            cumulative[i] = cumulative[i - 1] + Geodesy.distanceM(points[i - 1], points[i])
            bearings[i - 1] = Geodesy.initialBearingDeg(from: points[i - 1], to: points[i])
        }
        guard let total = cumulative.last, total > 0 else { throw .zeroLength }
        // A zero-length segment has no direction of its own: give it its predecessor's (or,
        // at the start, the first real segment's) so bearing(atDistance:) never reports 0 there.
        for i in 0..<bearings.count where cumulative[i + 1] == cumulative[i] {
            if i > 0 {
                bearings[i] = bearings[i - 1]
            } else if let j = (0..<bearings.count).first(where: { cumulative[$0 + 1] > cumulative[$0] }) {
                bearings[i] = bearings[j]
            }
        }
        storage = Storage(
            points: points, cumulativeM: cumulative, bearings: bearings,
            index: RouteIndex(points: points))
    }

    /// GeoJSON order, `[[lon, lat], ...]`.
    /// - Throws: as `init(points:)`; a pair that is not exactly two numbers is `.invalidCoordinate`.
    public init(lonLatPairs: [[Double]]) throws(RouteError) {
        var pts: [GeoPoint] = []
        pts.reserveCapacity(lonLatPairs.count)
        for (i, pair) in lonLatPairs.enumerated() {
            guard pair.count == 2 else { throw .invalidCoordinate(index: i) }
            pts.append(GeoPoint(lat: pair[1], lon: pair[0]))
        }
        try self.init(points: pts)
    }

    /// The route's vertices in travel order.
    public var points: [GeoPoint] { storage.points }
    /// cumulativeM[i] = along-route distance of points[i], metres; cumulativeM[0] == 0.
    public var cumulativeM: [Double] { storage.cumulativeM }
    /// Total length, metres.
    public var lengthM: Double { storage.cumulativeM[storage.cumulativeM.count - 1] }
    /// Number of segments (points.count - 1).
    public var segmentCount: Int { storage.points.count - 1 }
    /// The first point.
    public var start: GeoPoint { storage.points[0] }
    /// The last point.
    public var end: GeoPoint { storage.points[storage.points.count - 1] }

    /// GeoJSON order, `[[lon, lat], ...]`.
    public var lonLatPairs: [[Double]] { storage.points.map { [$0.lon, $0.lat] } }
}

extension Route: Codable {
    /// A route encodes as its points only; the derived data and the index are rebuilt on decode.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let pts = try container.decode([GeoPoint].self)
        do {
            try self.init(points: pts)
        } catch {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "invalid route: \(error)")
        }
    }

    /// Writes the route as its array of `{lat, lon}` points, the stored form (the wire's
    /// `[lon, lat]` pairs are written by TrackHubProtocol).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(storage.points)
    }
}

extension Route: Equatable {
    /// Two routes are equal when their points are.
    public static func == (a: Route, b: Route) -> Bool {
        a.storage === b.storage || a.storage.points == b.storage.points
    }
}
