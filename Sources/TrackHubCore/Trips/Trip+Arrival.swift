/// After `arrived` (PROTOCOL 6.7): the marker goes on to the destination, so the trip's last
/// frame and segment are there, with progress 1, remaining_m 0 and eta_s 0.
extension Trip {
    /// The slowest the marker goes on to the destination, m/s.
    static let minArrivalSpeedMps = 2.0

    /// Replaces the animation by one from the marker `s` to the destination (its projection
    /// on a routed trip: along the route from the route, straight from off it; straight without
    /// a route), at the running animation's speed but at least 2 m/s and within the catch-up
    /// limit. A running animation that already ends there is kept. Either way the next tick
    /// sends a frame, even if the marker is already there: the one that says `arrived` at the
    /// destination.
    mutating func goOnToDestination(from s: MarkerSample, now: Int64) {
        frameDue = true
        framedThrough = .min
        let path: Animation.Path
        if let route, let destAlong = destinationAlongM {
            if !isOffRoute, let along = s.alongM {
                path = .alongRoute(fromM: along, toM: destAlong)
            } else {
                path = .straightToRoute(from: s.position, toM: destAlong)
            }
            // The marker ends on the route: from here on the numbers are its own again.
            isOffRoute = false
            if let a = animation, now < a.endT, Self.target(of: a.path, on: route) == route.point(atDistance: destAlong) {
                return
            }
        } else if let destination {
            path = .straight(from: s.position, to: destination)
            if let a = animation, now < a.endT, Self.target(of: a.path, on: nil) == destination { return }
        } else {
            return
        }
        let metres = Animator.length(path, route: route)
        let running = animation.map { a in
            a.durationMs > 0 ? Animator.length(a.path, route: route) / (Double(a.durationMs) / 1000) : 0
        } ?? 0
        let speed = min(max(running, Self.minArrivalSpeedMps), catchUpLimitMps())
        let durationMs = metres > 0 ? Int64((metres / speed * 1000).rounded(.up)) : 0
        // Already there (a zero-length move): it keeps facing the way it came.
        restingBearing = s.bearingDeg
        animation = Animation(path: path, startT: now, durationMs: durationMs)
    }

    /// Where an animation ends (nil when that needs a route and there is none).
    static func target(of path: Animation.Path, on route: Route?) -> GeoPoint? {
        switch path {
        case .straight(_, let to): return to
        case .alongRoute(_, let toM), .straightToRoute(_, let toM), .viaRoute(_, _, let toM):
            return route?.point(atDistance: toM)
        }
    }
}
