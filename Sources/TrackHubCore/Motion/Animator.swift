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
            return sampleAlong(route: route, fromM: fromM, toM: toM, fraction: f)
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
        case .viaRoute(let from, let entryM, let toM):
            guard let route else { return MarkerSample(position: GeoPoint(lat: 0, lon: 0), bearingDeg: 0, alongM: nil) }
            let entry = route.point(atDistance: entryM)
            let straight = Geodesy.distanceM(from, entry)
            let travelled = f * (straight + abs(toM - entryM))
            if f < 1 && travelled < straight {
                return MarkerSample(
                    position: interpolate(from, entry, travelled / straight),
                    bearingDeg: Geodesy.initialBearingDeg(from: from, to: entry), alongM: nil)
            }
            // On the route part: as an along-route animation from the entry point.
            let rest = abs(toM - entryM)
            let g = f >= 1 || rest <= 0 ? 1 : min(1, (travelled - straight) / rest)
            return sampleAlong(route: route, fromM: entryM, toM: toM, fraction: g)
        }
    }

    /// The marker a fraction `f` of the way from along distance `fromM` to `toM` on the route.
    @inline(__always)
    static func sampleAlong(route: Route?, fromM: Double, toM: Double, fraction f: Double) -> MarkerSample {
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
    }

    /// The distance the marker travels over the whole animation, metres (6.2's catch-up limit
    /// is on this distance: along the route, or straight).
    public static func length(_ path: Animation.Path, route: Route?) -> Double {
        switch path {
        case .alongRoute(let fromM, let toM):
            return abs(toM - fromM)
        case .straight(let from, let to):
            return Geodesy.distanceM(from, to)
        case .straightToRoute(let from, let toM):
            guard let route else { return 0 }
            return Geodesy.distanceM(from, route.point(atDistance: toM))
        case .viaRoute(let from, let entryM, let toM):
            guard let route else { return 0 }
            return Geodesy.distanceM(from, route.point(atDistance: entryM)) + abs(toM - entryM)
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
        case .viaRoute(_, let entryM, let toM):
            guard let route else { return [now.position] }
            if let d = now.alongM { return route.path(from: d, to: toM) }
            return [now.position] + route.path(from: entryM, to: toM)
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
