/// Samples animations. Pure functions, no allocation in `sample` (it runs for every animating
/// trip on every tick).
public enum Animator {
    /// Samples an animation at time t (clamped to the animation's interval; at t >= endT the
    /// result equals the target exactly). `route` is required for .alongRoute/.straightToRoute;
    /// without it those sample as a point at (0, 0) (a programming error, never data-reachable
    /// from `Trip`, which always passes its route).
    public static func sample(_ a: Animation, route: Route?, at t: Int64) -> MarkerSample {
        let f = a.fraction(at: t)
        switch a.path {
        case .alongRoute(let fromM, let toM):
            // At the end use toM itself, not from + (to - from) * 1, so the target is exact.
            let d = f >= 1 ? toM : fromM + (toM - fromM) * f
            guard let route else { return MarkerSample(position: GeoPoint(lat: 0, lon: 0), bearingDeg: 0, alongM: d) }
            let clamped = route.clampedDistance(d)
            let bearing: Double
            if toM >= fromM {
                bearing = route.bearing(atDistance: clamped)
            } else {
                // Running backwards: the segment that ends here, reversed.
                bearing = Geodesy.normalizedBearing(route.bearing(atDistance: max(0, clamped - 1e-6)) + 180)
            }
            return MarkerSample(position: route.point(atDistance: clamped), bearingDeg: bearing, alongM: clamped)
        case .straight(let from, let to):
            return MarkerSample(
                position: interpolate(from, to, f), bearingDeg: Geodesy.initialBearingDeg(from: from, to: to),
                alongM: nil)
        case .straightToRoute(let from, let toM):
            guard let route else { return MarkerSample(position: GeoPoint(lat: 0, lon: 0), bearingDeg: 0, alongM: nil) }
            let target = route.point(atDistance: toM)
            let bearing = Geodesy.initialBearingDeg(from: from, to: target)
            if f >= 1 { return MarkerSample(position: target, bearingDeg: bearing, alongM: route.clampedDistance(toM)) }
            return MarkerSample(position: interpolate(from, target, f), bearingDeg: bearing, alongM: nil)
        }
    }

    /// The polyline the marker follows from time t to the end (for `segment` messages): starts at
    /// the marker's position at t and ends exactly at the target (one point once finished).
    public static func remainingPath(_ a: Animation, route: Route?, from t: Int64) -> [GeoPoint] {
        let now = sample(a, route: route, at: t)
        let f = a.fraction(at: t)
        switch a.path {
        case .alongRoute(_, let toM):
            guard let route, let d = now.alongM else { return [now.position] }
            return route.path(from: d, to: toM)
        case .straight(_, let to):
            return f >= 1 || now.position == to ? [to] : [now.position, to]
        case .straightToRoute(_, let toM):
            guard let route else { return [now.position] }
            let target = route.point(atDistance: toM)
            return f >= 1 || now.position == target ? [target] : [now.position, target]
        }
    }

    /// Linear interpolation in degrees; exactly `b` at f == 1. Animations are short (seconds of
    /// travel), so linear in degrees is linear in distance to well under a centimetre.
    @inline(__always)
    static func interpolate(_ a: GeoPoint, _ b: GeoPoint, _ f: Double) -> GeoPoint {
        if f >= 1 { return b }
        if f <= 0 { return a }
        return GeoPoint(lat: a.lat + (b.lat - a.lat) * f, lon: a.lon + (b.lon - a.lon) * f)
    }
}
