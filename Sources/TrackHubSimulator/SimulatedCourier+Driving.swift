import Foundation
import TrackHubCore

/// Synthetic riders: moving along the route, stopping at via points and the destination,
/// off-route excursions and reroutes.
extension SimulatedCourier {
    /// One fix: moves the rider by its speed over the device time since the last fix.
    ///
    /// No fix ever lands in the approach zone just before a stop (via point or destination):
    /// the rider's fix is either well short of it or exactly at it, so the hub's marker reaches
    /// a stop only once the rider has stopped sending fixes there, and no fix is ever acked
    /// `holding` or `arrived`.
    mutating func drive(now: Int64, stats: inout SimulationStats) -> [CourierAction] {
        guard var t = trip, let route = t.route, let stop = t.nextStop else { return [] }
        let dt = t.lastFixWall.map { Double(now - $0) * settings.speedup / 1000 } ?? 0
        if t.lastFixWall != nil {
            t.speed = min(max(t.speed + motionRNG.gaussian(sigma: 0.08 * t.baseSpeed), 0.6 * t.baseSpeed), 1.25 * t.baseSpeed)
        }
        var position: GeoPoint
        var heading: Double
        var reached: Int?? = nil  // .some(index) for a via point, .some(nil) for the destination
        if var excursion = t.excursion {
            excursion.progressM += t.speed * dt
            if excursion.progressM >= excursion.path.lengthM {
                t.along = excursion.returnAlongM
                t.excursion = nil
                position = route.point(atDistance: t.along)
                heading = route.bearing(atDistance: t.along)
            } else {
                position = excursion.path.point(atDistance: excursion.progressM)
                heading = excursion.path.bearing(atDistance: excursion.progressM)
                t.excursion = excursion
            }
        } else {
            var target = t.along + t.speed * dt
            if target >= stop.along {
                target = stop.along
                reached = .some(stop.waypoint)
            } else if target > stop.along - settings.approachZoneM {
                // Too close to stop short: send the next fix when the rider is at the stop.
                let seconds = (stop.along - t.along) / t.speed
                t.nextFixAt = max(now + 1, (t.lastFixWall ?? now) + wallMs(seconds))
                trip = t
                return []
            }
            t.along = target
            position = route.point(atDistance: target)
            heading = route.bearing(atDistance: target)
        }
        let durationMs = t.lastFixWall.map { min(60_000, now - $0) } ?? 0
        t.seq += 1
        t.lastFixWall = now
        t.nextFixAt = now + nextFixDelay(t)
        trip = t
        let ts = stamp(deviceTs: t.anchorTs + Int64(Double(now - t.createdAt) * settings.speedup), now: now)
        let noisy = addNoise(position)
        let fix = SimulatedFix(
            trip: t.id, seq: t.seq, ts: ts, lat: noisy.lat, lon: noisy.lon, durationMs: durationMs,
            speedMps: reached == nil ? t.speed : 0, heading: heading, accuracyM: settings.accuracyM)
        var actions = [send(fix, stats: &stats)]
        let confirmBy = now + wallMs(settings.confirmTimeoutS)
        if let reached {
            if let index = reached {
                phase = .awaitingWaypoint(index: index, deadline: confirmBy)
            } else {
                phase = .awaitingArrival(deadline: confirmBy)
            }
        } else if t.excursion == nil, let at = t.excursionAtM, t.along >= at {
            let excursion = makeExcursion(t, route: route)
            trip?.excursionAtM = nil
            trip?.excursion = excursion
        } else if t.excursion == nil, let at = t.rerouteAtM, t.along >= at {
            trip?.rerouteAtM = nil
            actions += requestReroute(t, route: route)
        }
        return actions
    }

    /// GPS noise: a few metres in a random direction.
    mutating func addNoise(_ p: GeoPoint) -> GeoPoint {
        let distance = min(abs(motionRNG.gaussian(sigma: settings.noiseSigmaM)), settings.noiseMaxM)
        let bearing = motionRNG.uniform(0...360)
        return Geodesy.destination(from: p, bearingDeg: bearing, distanceM: distance)
    }

    /// Stops (unvisited via points and the destination) as along-route distances.
    private func stops(_ t: ActiveTrip, route: Route) -> [Double] {
        t.waypoints.filter { !$0.visited }.map(\.along) + [route.lengthM]
    }

    /// A detour from the rider's position about `offset` metres to one side of the route and
    /// back to it `span` metres further on; nil when a stop is near or the detour would pass
    /// close to another part of the route (the hub would see it on the route, or snap it there).
    func makeExcursion(_ t: ActiveTrip, route: Route) -> ActiveTrip.Excursion? {
        guard let plan = plannedTrip else { return nil }
        let a = t.along
        let span = plan.excursionSpanM
        let b = a + span
        guard stops(t, route: route).allSatisfy({ $0 < a - 150 || $0 > b + 250 }) else { return nil }
        let middle = a + span / 2
        let apex = Geodesy.destination(
            from: route.point(atDistance: middle), bearingDeg: route.bearing(atDistance: middle) + 90 * plan.excursionSide,
            distanceM: plan.excursionOffsetM)
        guard let path = try? Route(points: [route.point(atDistance: a), apex, route.point(atDistance: b)]) else { return nil }
        var s = 0.0
        while s <= path.lengthM {
            let match = route.nearest(to: path.point(atDistance: s))
            if (match.alongM < a - 60 || match.alongM > b + 60) && match.offsetM < 150 { return nil }
            s += 10
        }
        return ActiveTrip.Excursion(path: path, progressM: 0, returnAlongM: b)
    }

    /// Asks the hub for a new route from here: on a graph route with no via point left, a
    /// detour that avoids the rest of the planned path; otherwise the rest of the route.
    mutating func requestReroute(_ t: ActiveTrip, route: Route) -> [CourierAction] {
        let a = t.along
        guard route.lengthM - a > 350, stops(t, route: route).allSatisfy({ $0 < a - 100 || $0 > a + 250 }) else { return [] }
        var newRoute: Route?
        var shift: Double?
        if let path = t.graphPath, t.waypoints.allSatisfy(\.visited) {
            newRoute = catalog.makeDetour(on: path, route: route, atM: a)
        }
        if newRoute == nil {
            newRoute = try? Route(points: route.path(from: a, to: route.lengthM))
            shift = a
        }
        guard let newRoute else { return [] }
        pendingRoute = (newRoute, shift)
        let request = takeRequestID()
        phase = .rerouting(request: request)
        return [.http(HTTPCall(id: request, method: "PUT", path: "/v1/trips/\(t.id)/route", body: CourierMessages.reroute(newRoute)))]
    }
}
