import TrackHubCore
import TrackHubProtocol
import TrackHubStore

/// Cluster mode: applying the log. Every node runs this for every entry, in log order, with
/// the entry's time (its stream id's ms) as the clock, so every node's trips go through the
/// same states. Only the node that appended an entry answers its client.
///
/// The node's own store (SQLite in --data) keeps what it applied, for trails, event replay
/// and snapshots' trails; the log in Redis is what makes a command durable.
extension Hub {
    /// Applies one batch from the log reader, then lets the grid catch up to the new watermark.
    func applyLogBatch(_ batch: ClusterReadBatch) {
        guard let cluster else { return }
        for entry in batch.entries {
            if cluster.applied[entry.partition] < entry.id { cluster.applied[entry.partition] = entry.id }
            metrics.clusterEntriesApplied += 1
            guard let command = ClusterCommand.decode(entry.payload) else {
                logWarning("cluster log \(ClusterLog.streamKey(entry.partition)) entry \(entry.id) is not a TrackHub command; skipped")
                continue
            }
            let mine = command.origin == cluster.nodeID ? command.request : nil
            apply(command, at: entry.id.ms, request: mine)
        }
        for (partition, id) in batch.lastIDs where cluster.applied[partition] < id { cluster.applied[partition] = id }
        cluster.watermark = max(cluster.watermark, batch.watermark)
        cluster.reader?.consumed()
        tickClusterGrid(now: wallClockMillis())
    }

    private func apply(_ command: ClusterCommand, at t: Int64, request: Int64?) {
        let id = command.trip
        if command.kind != .create {
            guard trips[id] != nil else {
                return answer(request) { [self] reply in answerFailure(reply, ProtocolError(.notFound, "trip \(id) does not exist")) }
            }
            // The trip's grid ticks before this entry come first (see Hub+ClusterTick).
            advanceTicks(of: id, through: t)
        }
        switch command.kind {
        case .create: applyCreate(command, at: t, request: request)
        case .fixes: applyFixes(command.fixes ?? [], trip: id, at: t, request: request)
        case .proceed: applyProceed(trip: id, at: t, request: request)
        case .route: applyReroute(command, at: t, request: request)
        case .end: applyEnd(trip: id, at: t, request: request)
        }
        if trips[id] != nil { scheduleGridTicks(of: id, after: t) }
    }

    private func answer(_ request: Int64?, _ body: @escaping (Reply) -> Void) {
        if let request { answerPending(request, body) }
    }

    private func applyCreate(_ command: ClusterCommand, at t: Int64, request: Int64?) {
        let id = command.trip
        if trips[id] != nil {
            return answer(request) { [self] reply in answerFailure(reply, ProtocolError(.conflict, "id: trip \(id) already exists")) }
        }
        let trip: Trip
        let riderJSON: [UInt8]?
        do throws(ProtocolError) {
            let body = try CreateTripRequest.decode(Array((command.body ?? "{}").utf8), limits: config.protocolLimits)
            riderJSON = body.rider.map { riderBytes($0) }
            trip = try makeTrip(id: id, body, now: t)
        } catch {
            return answer(request) { [self] reply in answerFailure(reply, error) }
        }
        var created = trip
        let event = created.created(now: t)
        trips[id] = TripEntry(trip: created, createdAt: t, slot: nextSlot, riderJSON: riderJSON)
        nextSlot += 1
        lastBroadcastEvent[id] = 0
        storeStateAndSend([event], trip: id) { [self] _ in
            answer(request) { [self] reply in
                if case .http(let connection) = reply { respondTrip(connection, id: id, status: 201) }
            }
            sendSnapshotToSubscribers(trip: id, now: wallClockMillis())
        }
    }

    private func applyFixes(_ fixes: [FixInput], trip id: String, at t: Int64, request: Int64?) {
        var verdicts: [FixVerdict] = []
        var records: [StoreRecord] = []
        verdicts.reserveCapacity(fixes.count)
        for fix in fixes {
            let verdict = mutateTrip(id) { $0.trip.judge(fix) } ?? .refused(.ended)
            verdicts.append(verdict)
            if verdict.refusal != .duplicate {
                records.append(.fix(tripID: id, fix: fix, refusal: verdict.refusal, receivedAt: t))
            }
            if verdict.isApplied { applyCommittedFix(trip: id, fix: fix, now: t, receivedAt: t) }
        }
        // The log has the fixes: the ack goes now, before the first frame of their animation
        // (as on a hub alone). The node's own copy follows; a trail read waits for it
        // (`respondTrailAfterPendingWrites`), so it still shows every acked fix.
        answer(request) { [self] reply in answerFixes(reply, trip: id, fixes: fixes, verdicts: verdicts) }
        persist(records) { _ in }
    }

    private func applyProceed(trip id: String, at t: Int64, request: Int64?) {
        let outcome: Result<[TripEvent], TripCommandError>? = mutateTrip(id) { entry in
            do throws(TripCommandError) {
                return .success(try entry.trip.proceed(now: t))
            } catch {
                return .failure(error)
            }
        }
        guard case .success(let events) = outcome else {
            let status = trips[id]?.trip.status.rawValue ?? "unknown"
            return answer(request) { [self] reply in
                answerFailure(reply, ProtocolError(.conflict, "trip \(id) is \(status), not holding"))
            }
        }
        // Now, not once stored locally: every node numbers this segment alike.
        sendArrivalSegmentIfArrived(events, trip: id, now: t)
        storeStateAndSend(events, trip: id) { [self] _ in
            answer(request) { [self] reply in
                switch reply {
                case .webSocket(let connection, let re):
                    enqueue(payload: ServerReplies.ack(re: re, trip: id, seq: nil, applied: true, reason: nil), to: connection)
                case .http(let connection):
                    respondTrip(connection, id: id, status: 200)
                }
            }
        }
    }

    private func applyReroute(_ command: ClusterCommand, at t: Int64, request: Int64?) {
        let id = command.trip
        guard let status = trips[id]?.trip.status, status != .arrived, status != .ended else {
            let status = trips[id]?.trip.status.rawValue ?? "unknown"
            return answer(request) { [self] reply in answerFailure(reply, ProtocolError(.conflict, "route: trip \(id) is \(status)")) }
        }
        let events: [TripEvent]
        do throws(ProtocolError) {
            let body = try RerouteRequest.decode(Array((command.body ?? "{}").utf8), limits: config.protocolLimits)
            guard let route = try makeRoute(body.route) else { throw .badRequest("route is required") }
            let outcome: Result<[TripEvent], TripSetupError>? = mutateTrip(id) { entry in
                do throws(TripSetupError) {
                    let events = try entry.trip.reroute(route: route, waypoints: body.waypoints, destination: body.destination, now: t)
                    if let rest = entry.trip.remainingSegment(at: t) { entry.lastSegment = rest }
                    return .success(events)
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success(let e): events = e
            case .failure(let error): throw ProtocolError(error.isConflict ? .conflict : .badRequest, "\(error.field): \(error.message)")
            case nil: throw ProtocolError(.notFound, "trip \(id) does not exist")
            }
        } catch {
            return answer(request) { [self] reply in answerFailure(reply, error) }
        }
        storeStateAndSend(events, trip: id) { [self] _ in
            answer(request) { [self] reply in
                if case .http(let connection) = reply { respondTrip(connection, id: id, status: 200) }
            }
            sendSnapshotToSubscribers(trip: id, now: wallClockMillis())
        }
    }

    private func applyEnd(trip id: String, at t: Int64, request: Int64?) {
        let events = mutateTrip(id) { entry -> [TripEvent] in
            let events = entry.trip.end(now: t)
            if !events.isEmpty { entry.endedAt = t }
            return events
        } ?? []
        cluster?.endsRequested.remove(id)
        storeStateAndSend(events, trip: id) { [self] _ in
            answer(request) { [self] reply in
                if case .http(let connection) = reply { respondTrip(connection, id: id, status: 200) }
            }
        }
    }
}
