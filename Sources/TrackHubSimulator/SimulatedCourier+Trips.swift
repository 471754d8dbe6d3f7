import TrackHubCore

/// Starting and ending trips, and the device clock.
extension SimulatedCourier {
    /// Plans the next trip and asks the hub to create it.
    mutating func requestTrip(now: Int64, stats: inout SimulationStats) -> [CourierAction] {
        let request = takeRequestID()
        let body: [UInt8]
        switch kind {
        case .synthetic:
            guard let plan = TripPlan.make(catalog: catalog, settings: settings, rng: &planRNG) else {
                stats.recordError("rider \(rider + 1): no route could be planned")
                phase = .failed
                return []
            }
            plannedTrip = plan
            let stops = plan.waypointAlongs.map { plan.route.point(atDistance: $0) }
            // PROTOCOL 16: some Helsinki trips give only their stops; the rider still drives its
            // own plan, and where the hub's route differs the hub reroutes it.
            let routed = settings.fromStopsShare > 0 && plan.graphPath != nil && planRNG.chance(settings.fromStopsShare)
            if let planned = plan.stops(rider: rider) {
                body = CourierMessages.createTrip(
                    route: plan.route, stops: planned, routed: routed, riderID: "sim-\(rider + 1)", riderName: riderName)
            } else if routed {
                body = CourierMessages.createTripFromStops(
                    origin: plan.route.points[0], waypoints: stops, destination: plan.route.end,
                    riderID: "sim-\(rider + 1)", riderName: riderName)
            } else {
                body = CourierMessages.createTrip(route: plan.route, waypoints: stops, riderID: "sim-\(rider + 1)", riderName: riderName)
            }
        case .trace:
            plannedTrip = nil
            body = CourierMessages.createTrip(route: nil, waypoints: [], riderID: "sim-\(rider + 1)", riderName: riderName)
        }
        phase = .creating(request: request)
        return [.http(HTTPCall(id: request, method: "POST", path: "/v1/trips", body: body))]
    }

    /// The hub created trip `id`: follow it (segments mode: events without a frame stream)
    /// and start sending fixes.
    mutating func beginTrip(id: String, now: Int64, stats: inout SimulationStats) -> [CourierAction] {
        stats.tripsStarted += 1
        var actions: [CourierAction] = []
        if let previous = previousTripID {
            actions.append(.send(CourierMessages.unsubscribe(trip: previous, id: takeMessageID(.other))))
        }
        actions.append(.send(CourierMessages.subscribe(trip: id, id: takeMessageID(.other))))
        previousTripID = id
        let slowdown = 1 - 1 / settings.speedup
        switch kind {
        case .synthetic:
            guard let plan = plannedTrip else { return actions }
            // The device clock runs `speedup` times faster than the wall clock. Anchored this far
            // in the past, it reaches the hub's "now" only after a generous estimate of the trip's
            // length, so no fix is ever ahead of the hub's clock (PROTOCOL 3).
            let anchor = now - Int64(Double(plan.estimatedDurationMs(settings: settings)) * slowdown)
            var t = ActiveTrip(id: id, route: plan.route, graphPath: plan.graphPath, createdAt: now, anchorTs: anchor, nextFixAt: now)
            t.waypoints = plan.waypointAlongs.enumerated().map { k, along in
                ActiveTrip.Waypoint(index: k, along: along, visited: false, plannedDwellS: k < plan.stopDwellS.count ? plan.stopDwellS[k] : nil)
            }
            t.baseSpeed = plan.baseSpeedMps
            t.speed = plan.baseSpeedMps
            t.excursionAtM = plan.excursionAtM
            t.rerouteAtM = plan.rerouteAtM
            trip = t
            actions += followStops(trip: id, plan: plan, now: now, stats: &stats)
        case .trace(let track, let repeats):
            // A replay's first point is "now" and the others keep their spacing; only a track
            // too long for the allowed skew at this speedup is shifted back, just enough.
            let ahead = Int64(Double(track.spanMs) * slowdown)
            let shift = repeats ? ahead : max(0, ahead - settings.skewBudgetMs)
            trip = ActiveTrip(id: id, route: nil, createdAt: now, anchorTs: now - shift, nextFixAt: now)
        }
        phase = .driving
        if settings.fixProtocol != .trackhub {
            // A phone: its device is bound to the trip before its first fix.
            let request = takeRequestID()
            deviceRequest = request
            trip?.nextFixAt = .max
            actions.append(.http(HTTPCall(id: request, method: "PUT", path: "/v1/devices/\(deviceID)", body: CourierMessages.bindDevice(trip: id))))
        }
        return actions
    }

    /// The rider's phone (`--protocol osmand|owntracks`): 16 characters or more, as a secured hub wants.
    var deviceID: String { "sim-rider-\(rider + 1)-device" }

    /// Ends the trip with `DELETE /v1/trips/{id}`.
    mutating func endTrip(now: Int64) -> [CourierAction] {
        guard let id = trip?.id else {
            phase = .idle(until: now + wallMs(planRNG.uniform(settings.pauseBetweenTripsS)))
            return []
        }
        let request = takeRequestID()
        phase = .ending(request: request)
        return [.http(HTTPCall(id: request, method: "DELETE", path: "/v1/trips/\(id)", body: nil))]
    }

    /// The `ts` of a fix taken now, `deviceMs` after the trip's anchor: never more than the
    /// skew budget ahead of `now`, always after the trip's previous fix.
    mutating func stamp(deviceTs: Int64, now: Int64) -> Int64 {
        guard var t = trip else { return deviceTs }
        let ts = max(min(deviceTs, now + settings.skewBudgetMs), t.lastTs + 1)
        t.lastTs = ts
        trip = t
        return ts
    }

    /// Sends one fix and counts it.
    mutating func send(_ fix: SimulatedFix, stats: inout SimulationStats) -> CourierAction {
        stats.fixesSent += 1
        switch settings.fixProtocol {
        case .trackhub:
            return .send(CourierMessages.fix(fix, id: takeMessageID(.fix)))
        case .osmand:
            let request = takeRequestID()
            deviceFixRequests.insert(request)
            return .http(HTTPCall(id: request, method: "GET", path: CourierMessages.osmandPath(fix, device: deviceID), body: nil))
        case .owntracks:
            let request = takeRequestID()
            deviceFixRequests.insert(request)
            return .http(HTTPCall(id: request, method: "POST", path: "/v1/owntracks/\(deviceID)", body: CourierMessages.ownTracks(fix)))
        }
    }
}
