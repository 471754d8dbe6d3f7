import Foundation

/// The privacy rules of a link for one stop (PROTOCOL 17 "A link for one stop"): when the
/// courier may be shown to that stop's customer, which segments may reach them, and which
/// stretch of the route they may see. Pure functions of points and along-route distances, so
/// every hub of a cluster, given the same trip state, decides the same.
///
/// Why: a customer must never learn where the other customers are (their waypoints) nor when
/// the courier is at their doors. So nothing that lies within `privacyRadiusM` of another stop
/// ever reaches them, and the courier stays hidden until only a few stops remain before theirs.
public enum StopVisibility {
    /// The radius around every other waypoint, straight line, inside which nothing is shown.
    public static let privacyRadiusM: Double = 200

    /// How much farther than `privacyRadiusM` the shown route stretch keeps from another stop:
    /// the stretch is cut on a local projection (accurate to well under 0.5 %, 1 m at 200 m) and
    /// its cut point is later written with rounded coordinates, so a small margin keeps every
    /// point of it strictly outside the radius by the contract's own (great-circle) measure.
    public static let routeCutMarginM: Double = 2

    /// How much farther than `privacyRadiusM` a shown point keeps from another stop: positions
    /// go out rounded to 7 decimals (about 1 cm), so a marker 200.0003 m away could be sent at
    /// 199.998 m; the margin keeps what is sent strictly outside by the contract's measure.
    public static let shownMarginM: Double = 1

    /// True when `point` is more than `privacyRadiusM` (plus `shownMarginM`), straight line,
    /// from every one of `otherStops` (true when there are none).
    public static func isClear(_ point: GeoPoint, of otherStops: [GeoPoint]) -> Bool {
        for stop in otherStops where Geodesy.distanceM(point, stop) <= privacyRadiusM + shownMarginM { return false }
        return true
    }

    /// Whether the courier is shown: the trip has a marker, at most `visibleWithinStops` unvisited
    /// waypoints lie before the followed stop, and the marker is clear of every other waypoint
    /// (visited or not).
    public static func isShown(marker: GeoPoint?, stopsBefore: Int, visibleWithinStops: Int,
                               otherStops: [GeoPoint]) -> Bool {
        guard let marker, stopsBefore <= visibleWithinStops else { return false }
        return isClear(marker, of: otherStops)
    }

    /// Whether a segment may reach a shown customer: every point of its `path` is clear of every
    /// other waypoint. An empty path qualifies trivially (it shows nothing).
    public static func segmentQualifies(path: [GeoPoint], otherStops: [GeoPoint]) -> Bool {
        for point in path where !isClear(point, of: otherStops) { return false }
        return true
    }

    /// The route a shown customer sees: the longest stretch of `route` that ends at the stop's
    /// along distance `stopAlongM`, starts at or after the marker's `markerAlongM`, and has no
    /// point (anywhere along it, not only its vertices) within `privacyRadiusM` of one of
    /// `otherStops`. The stop's own end point is always included: when another stop lies within
    /// the radius of it, the stretch is that one point. Nil when the marker is past the stop.
    public static func routeStretch(route: Route, markerAlongM: Double, stopAlongM: Double,
                                    otherStops: [GeoPoint]) -> [GeoPoint]? {
        let end = min(max(stopAlongM, 0), route.lengthM)
        let start = max(markerAlongM, 0)
        guard start <= end else { return nil }
        guard let blockedUpTo = lastBlockedAlong(route: route, from: start, to: end, otherStops: otherStops) else {
            return route.path(from: start, to: end)
        }
        let cut = blockedUpTo + routeCutMarginM
        if cut >= end { return [route.point(atDistance: end)] }
        return route.path(from: max(start, cut), to: end)
    }

    /// The greatest along distance in `[from, to]` at which the route comes within
    /// `privacyRadiusM + routeCutMarginM` of one of `otherStops`; nil when it never does.
    static func lastBlockedAlong(route: Route, from: Double, to: Double, otherStops: [GeoPoint]) -> Double? {
        guard !otherStops.isEmpty, from <= to else { return nil }
        let radius = privacyRadiusM + routeCutMarginM
        let cumulative = route.cumulativeM
        var last: Double?
        var segment = route.segmentIndex(atDistance: route.clampedDistance(to))
        // Walk backwards from the stop: the first segment that is blocked anywhere holds the answer.
        while segment >= 0 && cumulative[segment + 1] >= from {
            let a = max(cumulative[segment], from), b = min(cumulative[segment + 1], to)
            if a <= b {
                for stop in otherStops {
                    if let hit = lastAlongWithin(radius, of: stop, from: a, to: b, route: route),
                       hit > (last ?? -Double.infinity) { last = hit }
                }
                if last != nil { return last }
            }
            if segment == 0 { break }
            segment -= 1
        }
        return last
    }

    /// On the straight piece of `route` between along distances `a` and `b` (one segment), the
    /// greatest along distance within `radius` of `stop`, solved on a local projection around it.
    static func lastAlongWithin(_ radius: Double, of stop: GeoPoint, from a: Double, to b: Double,
                                route: Route) -> Double? {
        let projection = LocalProjection(origin: stop)
        let p = projection.project(route.point(atDistance: a))
        let q = projection.project(route.point(atDistance: b))
        let dx = q.x - p.x, dy = q.y - p.y
        let lengthSquared = dx * dx + dy * dy
        if lengthSquared < 1e-12 {
            return p.x * p.x + p.y * p.y <= radius * radius ? b : nil
        }
        // |p + t·(q − p)|² = r²  →  t² L² + 2 t (p·d) + |p|² − r² = 0; the larger root, clipped.
        let half = p.x * dx + p.y * dy
        let c = p.x * p.x + p.y * p.y - radius * radius
        let discriminant = half * half - lengthSquared * c
        guard discriminant >= 0 else { return nil }
        let root = discriminant.squareRoot()
        let tLow = (-half - root) / lengthSquared, tHigh = (-half + root) / lengthSquared
        guard tHigh >= 0, tLow <= 1 else { return nil }
        return a + min(tHigh, 1) * (b - a)
    }
}
