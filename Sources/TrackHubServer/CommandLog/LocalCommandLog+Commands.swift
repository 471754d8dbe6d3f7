import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// A hub alone: create, proceed, reroute and end, each changed at once (TripTable+Changes),
/// stored, and answered after the commit; a change the store did not take is undone
/// (PROTOCOL 7: it changes nothing a client has seen).
extension LocalCommandLog {
    func create(id: String, _ body: CreateTripRequest, route: Route?, found: RouterTravel?, now: Int64, reply connection: ConnectionID) {
        if services.trips.isTaken(id) {
            return services.replies.respondError(connection, .conflict("id: trip \(id) already exists"))
        }
        var trip: Trip
        do {
            trip = try TripTable.makeTrip(id: id, body, route: route, found: found, hasRouter: services.routes.hasRouter, now: now)
        } catch {
            return services.replies.respondError(connection, error)
        }
        let riderJSON = body.rider.map { TripView.riderJSON($0) }
        let created = trip.created(now: now)
        let createdTrip = trip
        let payload = ServerMessages.event(trip: id, created)
        _ = services.trips.reserve(id)  // free: checked above, on this thread
        let records: [StoreRecord] = [
            .tripState(createdTrip, createdAt: now, riderJSON: riderJSON),
            .event(tripID: id, n: created.n, encoded: payload),
        ]
        services.storage.persist(records) { [self] result in
            switch result {
            case .failure(let error):
                services.trips.release(id)
                services.replies.respondError(connection, ProtocolError(.unavailable, "trip not stored: \(error)"))
            case .success:
                services.trips.add(id) { slot in TripEntry(trip: createdTrip, createdAt: now, slot: slot, riderJSON: riderJSON) }
                guard let entry = services.trips[id] else { return }
                let answerTime = services.clock.wallMillis()
                var view = TripView(id: id, entry: entry, trail: [], now: answerTime)
                view.includeRouteSource = true  // PROTOCOL 16: router or client
                services.replies.respondCreated(connection, id: id, json: HTTPBodies.trip(view))
                // Viewers who subscribed before the trip existed: the event, then the state.
                services.publisher.sendEvents([(created.n, payload)], trip: id)
                services.publisher.sendSnapshotToSubscribers(trip: id, now: answerTime)
            }
        }
    }

    func proceed(trip id: String, now: Int64, reply: Reply) {
        switch services.trips.changeProceed(id, at: now) {
        case .failure(let error):
            services.replies.answerFailure(reply, error)
        case .success(let change):
            store(change, trip: id, what: "proceed", reply: reply) { [self] in
                // Arrived right after proceed (6.7): the marker goes on to the destination.
                services.publisher.sendArrivalSegmentIfArrived(change.events, trip: id, now: services.clock.wallMillis())
                if services.trips[id]?.trip.wantsTick == true { services.trips.animating.insert(id) }
                services.tripsAPI.answerDone(reply, trip: id)
            }
        }
    }

    /// `reply` nil: the hub's own reroute (PROTOCOL 16), nobody waits for it.
    func reroute(
        trip id: String, route: Route, waypoints: [GeoPoint]?, destination: GeoPoint?, stops: [StopDetails] = [], reason: RerouteReason,
        found: RouterTravel?, now: Int64, reply: Reply?
    ) {
        switch services.trips.changeRoute(
            id, route: route, waypoints: waypoints, destination: destination, reason: reason, found: found, stops: stops, at: now) {
        case .failure(let error):
            if let reply { services.replies.answerFailure(reply, error) } else { logWarning("trip \(id): the route found was not applied (\(error.message))") }
        case .success(let change):
            let removed = services.trips[id]?.trip.removedStopIDs(comparedTo: change.before) ?? []
            store(change, trip: id, what: "route", reply: reply) { [self] in
                if let reply { services.tripsAPI.answerDone(reply, trip: id) }
                services.publisher.endStopFollowers(trip: id, removed: removed)  // PROTOCOL 17
                services.publisher.sendSnapshotToSubscribers(trip: id, now: services.clock.wallMillis())
            }
        }
    }

    func end(trip id: String, now: Int64, reply: Reply?) {
        let wasAnimating = services.trips.animating.contains(id)
        guard let change = services.trips.changeEnd(id, at: now) else {
            if let reply { services.replies.answerFailure(reply, .notFound("trip \(id) does not exist")) }
            return
        }
        if change.events.isEmpty {
            if let reply { services.tripsAPI.answerDone(reply, trip: id) }
            return
        }
        services.trips.animating.remove(id)
        store(change, trip: id, what: "end", reply: reply, undoAlso: { [self] in
            services.trips.mutate(id) { $0.endedAt = nil }
            if wasAnimating { services.trips.animating.insert(id) }
        }) { [self] in
            if let reply { services.tripsAPI.answerDone(reply, trip: id) }
        }
    }

    /// Stores a change's state and events (sent once stored), then runs `stored`; a change the
    /// store refused is undone (with `undoAlso`) and answered `unavailable`.
    private func store(
        _ change: ChangeUndo, trip id: String, what: String, reply: Reply?,
        undoAlso: @escaping @Sendable () -> Void = {}, stored: @escaping @Sendable () -> Void
    ) {
        services.publisher.storeStateAndSend(change.events, trip: id) { [self] result in
            switch result {
            case .failure(let error):
                undo(change, trip: id)
                undoAlso()
                if let reply { services.replies.answerFailure(reply, ProtocolError(.unavailable, "\(what) not stored: \(error)")) }
            case .success:
                stored()
            }
        }
    }

    /// PROTOCOL 7: a command that could not be stored changes nothing. The trip goes back to
    /// its state before the command, unless something else has happened to it since (then
    /// the later change stands; it was judged on top of this one). What fixes were judged
    /// meanwhile is kept.
    private func undo(_ change: ChangeUndo, trip id: String) {
        services.trips.mutate(id) { entry in
            guard entry.trip.lastEventNumber == (change.events.last?.n ?? change.before.lastEventNumber) else { return }
            let judged = entry.trip.judgeMemory
            entry.trip = change.before
            entry.trip.judgeMemory = judged
        }
        services.trips.animating.wake(id)
    }
}

