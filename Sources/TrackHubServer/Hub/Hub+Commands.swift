import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// Trip commands: create, proceed, reroute, end. Each is answered once stored.
extension Hub {
    /// A trip to create, already validated by the protocol layer.
    struct NewTrip {
        var id: String?
        var route: Route?
        var waypoints: [GeoPoint]
        var destination: GeoPoint?
        var config: TripConfig
        var riderJSON: [UInt8]?
    }

    /// PROTOCOL 1: at most `--max-trips` trips not `ended` (creates in flight included). The
    /// exact count walks every trip, so it is taken only when the cheap upper bound (every
    /// trip held, ended ones too) reaches the limit.
    func checkTripCapacity() throws(ProtocolError) {
        if trips.count + pendingCreates.count < config.maxTrips { return }
        var open = pendingCreates.count
        for entry in trips.values where entry.trip.status != .ended { open += 1 }
        if open >= config.maxTrips {
            throw .tooLarge("trips: \(open) trips have not ended; the limit is \(config.maxTrips) (--max-trips)")
        }
    }

    /// A new trip from a create request; errors name the field (PROTOCOL 5).
    func makeTrip(id: String, _ body: CreateTripRequest, now: Int64) throws(ProtocolError) -> Trip {
        let route = try makeRoute(body.route)
        do throws(TripSetupError) {
            return try Trip(id: id, route: route, waypoints: body.waypoints, destination: body.destination, config: body.config, now: now)
        } catch {
            throw ProtocolError(.badRequest, "\(error.field): \(error.message)")
        }
    }

    func createTrip(_ request: NewTrip, now: Int64, reply connection: ConnectionID) {
        let id = request.id ?? makeTripID()
        if trips[id] != nil || pendingCreates.contains(id) {
            respondError(connection, ProtocolError(.conflict, "id: trip \(id) already exists"))
            return
        }
        var trip: Trip
        do {
            trip = try Trip(id: id, route: request.route, waypoints: request.waypoints, destination: request.destination, config: request.config, now: now)
        } catch {
            respondError(connection, ProtocolError(.badRequest, "\(error.field): \(error.message)"))
            return
        }
        let created = trip.created(now: now)
        let createdTrip = trip
        let payload = ServerMessages.event(trip: id, created)
        pendingCreates.insert(id)
        let records: [StoreRecord] = [
            .tripState(createdTrip, createdAt: now, riderJSON: request.riderJSON),
            .event(tripID: id, n: created.n, encoded: payload),
        ]
        persist(records) { [self] result in
            pendingCreates.remove(id)
            switch result {
            case .failure(let error):
                respondError(connection, ProtocolError(.unavailable, "trip not stored: \(error)"))
            case .success:
                let entry = TripEntry(trip: createdTrip, createdAt: now, slot: nextSlot, riderJSON: request.riderJSON)
                nextSlot += 1
                trips[id] = entry
                let answerTime = wallClockMillis()
                respondCreated(connection, id: id, json: HTTPBodies.trip(TripView(id: id, entry: entry, trail: [], now: answerTime)))
                // Viewers who subscribed before the trip existed: the event, then the state.
                sendEvents([(created.n, payload)], trip: id)
                sendSnapshotToSubscribers(trip: id, now: answerTime)
            }
        }
    }

    func proceed(trip id: String, now: Int64, reply: Reply) {
        guard var entry = trips[id] else {
            answerFailure(reply, ProtocolError(.notFound, "trip \(id) does not exist"))
            return
        }
        let before = entry.trip
        let events: [TripEvent]
        do {
            events = try entry.trip.proceed(now: now)
        } catch {
            answerFailure(reply, ProtocolError(.conflict, "trip \(id) is \(entry.trip.status.rawValue), not holding"))
            return
        }
        trips[id] = entry
        storeStateAndSend(events, trip: id) { [self] result in
            switch result {
            case .failure(let error):
                undoUnstoredCommand(trip: id, before: before, events: events)
                answerFailure(reply, ProtocolError(.unavailable, "proceed not stored: \(error)"))
            case .success:
                // Arrived right after proceed (6.7): the marker goes on to the destination.
                sendArrivalSegmentIfArrived(events, trip: id, now: wallClockMillis())
                if trips[id]?.trip.wantsTick == true { animating.insert(id) }
                switch reply {
                case .webSocket(let connection, let re):
                    enqueue(payload: ServerReplies.ack(re: re, trip: id, seq: nil, applied: true, reason: nil), to: connection)
                case .http(let connection):
                    respondTrip(connection, id: id, status: 200)
                }
            }
        }
    }

    func reroute(trip id: String, route: Route, waypoints: [GeoPoint]?, destination: GeoPoint?, now: Int64, reply connection: ConnectionID) {
        guard var entry = trips[id] else {
            respondError(connection, ProtocolError(.notFound, "trip \(id) does not exist"))
            return
        }
        if entry.trip.status == .arrived || entry.trip.status == .ended {
            respondError(connection, ProtocolError(.conflict, "route: trip \(id) is \(entry.trip.status.rawValue)"))
            return
        }
        let before = entry.trip
        let events: [TripEvent]
        do {
            events = try entry.trip.reroute(route: route, waypoints: waypoints, destination: destination, now: now)
        } catch {
            respondError(connection, ProtocolError(error.isConflict ? .conflict : .badRequest, "\(error.field): \(error.message)"))
            return
        }
        if let rest = entry.trip.remainingSegment(at: now) { entry.lastSegment = rest }
        trips[id] = entry
        if entry.trip.isAnimating(at: now) { animating.insert(id) }
        storeStateAndSend(events, trip: id) { [self] result in
            switch result {
            case .failure(let error):
                undoUnstoredCommand(trip: id, before: before, events: events)
                respondError(connection, ProtocolError(.unavailable, "route not stored: \(error)"))
            case .success:
                respondTrip(connection, id: id, status: 200)
                sendSnapshotToSubscribers(trip: id, now: wallClockMillis())
            }
        }
    }

    func endTrip(_ id: String, now: Int64, reply connection: ConnectionID?) {
        guard var entry = trips[id] else {
            if let connection { respondError(connection, ProtocolError(.notFound, "trip \(id) does not exist")) }
            return
        }
        let before = entry.trip
        let wasAnimating = animating.contains(id)
        let events = entry.trip.end(now: now)
        if events.isEmpty {
            if let connection { respondTrip(connection, id: id, status: 200) }
            return
        }
        entry.endedAt = now
        trips[id] = entry
        animating.remove(id)
        storeStateAndSend(events, trip: id) { [self] result in
            if case .failure = result {
                undoUnstoredCommand(trip: id, before: before, events: events)
                trips[id]?.endedAt = nil
                if wasAnimating { animating.insert(id) }
            }
            guard let connection else { return }
            switch result {
            case .failure(let error):
                respondError(connection, ProtocolError(.unavailable, "end not stored: \(error)"))
            case .success:
                respondTrip(connection, id: id, status: 200)
            }
        }
    }

    /// PROTOCOL 7: a command that could not be stored changes nothing. The trip goes back to
    /// its state before the command, unless something else has happened to it since (then
    /// the later change stands; it was judged on top of this one). What fixes were judged
    /// meanwhile is kept.
    func undoUnstoredCommand(trip id: String, before: Trip, events: [TripEvent]) {
        mutateTrip(id) { entry in
            guard entry.trip.lastEventNumber == (events.last?.n ?? before.lastEventNumber) else { return }
            let judged = entry.trip.judgeMemory
            entry.trip = before
            entry.trip.judgeMemory = judged
        }
    }

    /// A fresh snapshot to every subscriber (after creation or a new route).
    func sendSnapshotToSubscribers(trip id: String, now: Int64) {
        guard let followers = subscribers[id], !followers.isEmpty else { return }
        let trail = recentTrailForAnswer(trip: id)
        let message = OutboundMessage.snapshot(TripView(id: id, entry: trips[id], trail: trail, now: now), re: nil, recovered: nil)
        _ = broadcast(message, trip: id)
    }

    /// A fresh random trip id (`t-` and 10 characters) no trip here has.
    func makeTripID() -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
        var generator = SystemRandomNumberGenerator()
        var id: String
        repeat {
            id = "t-" + String((0..<10).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
        } while trips[id] != nil || pendingCreates.contains(id)
        return id
    }

    /// The last 100 fixes for a trip body or snapshot that follows a command already carried
    /// out: the command stands, so a failed read is logged and counted, and the answer goes
    /// out with an empty trail rather than not at all.
    func recentTrailForAnswer(trip id: String) -> [StoredFix] {
        do {
            return try store.recentFixes(tripID: id, count: 100)
        } catch {
            metrics.storeReadFailures += 1
            logWarning("trip \(id): its trail could not be read for an answer (\(error)); sent without it")
            return []
        }
    }
}
