import TrackHubCore
import TrackHubProtocol

/// The state before a change, for undoing it if it is not stored (LocalCommandLog).
struct ChangeUndo {
    /// The trip as it was.
    var before: Trip
    /// The events the change made, to store and send.
    var events: [TripEvent]
}

/// What each trip command changes, the same under both command logs: they differ only in
/// when a change counts as durable (`LocalCommandLog` undoes it when the store fails;
/// `RedisCommandLog` applies what the log already holds). Each returns the events to store
/// and send, or the error to answer with; the caller schedules a trip that moves. A dozing
/// trip (`TickSchedule.doze`) is woken by each: its next event may come sooner.
extension TripTable {
    /// `proceed` (PROTOCOL 6.4): 409 unless the trip is holding at a waypoint.
    func changeProceed(_ id: String, at t: Int64) -> Result<ChangeUndo, ProtocolError> {
        let outcome: Result<ChangeUndo, ProtocolError>? = mutate(id) { entry in
            let before = entry.trip
            do throws(TripCommandError) {
                return .success(ChangeUndo(before: before, events: try entry.trip.proceed(now: t)))
            } catch {
                return .failure(.conflict("trip \(id) is \(entry.trip.status.rawValue), not holding"))
            }
        }
        animating.wake(id)
        return outcome ?? .failure(.notFound("trip \(id) does not exist"))
    }

    /// A new route (PROTOCOL 5; `stops`: the new waypoints' ids, names, dwells, PROTOCOL 17): 409 for an arrived or ended trip, 400 for waypoints that do
    /// not fit it. The running animation continues along the new route.
    func changeRoute(
        _ id: String, route: Route, waypoints: [GeoPoint]?, destination: GeoPoint?, reason: RerouteReason = .client,
        found: RouterTravel? = nil, stops: [StopDetails] = [], at t: Int64
    ) -> Result<ChangeUndo, ProtocolError> {
        let outcome: Result<ChangeUndo, ProtocolError>? = mutate(id) { entry in
            let before = entry.trip
            if before.status == .arrived || before.status == .ended {
                return .failure(.conflict("route: trip \(id) is \(before.status.rawValue)"))
            }
            do throws(TripSetupError) {
                let events = try entry.trip.reroute(
                    route: route, waypoints: waypoints, destination: destination, now: t, reason: reason,
                    source: found == nil ? .client : .router, routerDurationS: found?.durationS, stops: stops)
                if let rest = entry.trip.remainingSegment(at: t) { entry.lastSegment = rest }
                return .success(ChangeUndo(before: before, events: events))
            } catch {
                return .failure(ProtocolError(error.isConflict ? .conflict : .badRequest, "\(error.field): \(error.message)"))
            }
        }
        animating.wake(id)
        return outcome ?? .failure(.notFound("trip \(id) does not exist"))
    }

    /// The end (`DELETE`, or `--end-after` after arriving): no events for a trip that had
    /// ended already; nil for one that does not exist.
    func changeEnd(_ id: String, at t: Int64) -> ChangeUndo? {
        animating.wake(id)
        return mutate(id) { entry in
            let before = entry.trip
            let events = entry.trip.end(now: t)
            if !events.isEmpty { entry.endedAt = t }
            return ChangeUndo(before: before, events: events)
        }
    }

    /// A new trip from a create request; errors name the field (PROTOCOL 5).
    /// `config.auto_reroute` not given is on exactly when the hub has a router (`hasRouter`,
    /// PROTOCOL 16).
    static func makeTrip(
        id: String, _ body: CreateTripRequest, route: Route?, found: RouterTravel? = nil, hasRouter: Bool, now: Int64
    ) throws(ProtocolError) -> Trip {
        var config = body.config
        if config.autoReroute == nil { config.autoReroute = config.autoReroute ?? hasRouter }
        do throws(TripSetupError) {
            return try Trip(
                id: id, route: route, waypoints: body.waypoints, destination: body.destination, config: config, now: now,
                routeSource: found == nil ? .client : .router, routerDurationS: found?.durationS, stops: body.stops)
        } catch {
            throw ProtocolError(.badRequest, "\(error.field): \(error.message)")
        }
    }
}
