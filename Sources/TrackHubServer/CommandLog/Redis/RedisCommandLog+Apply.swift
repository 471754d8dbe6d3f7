import TrackHubCore
import TrackHubProtocol
import TrackHubStore

/// Cluster mode: applying the log. Every node runs this for every entry, in log order, with
/// the entry's time (its stream id's ms) as the clock, so every node's trips go through the
/// same states. Only the node that appended an entry answers its client.
///
/// The node's own store (SQLite in --data) keeps what it applied, for trails, event replay
/// and snapshots' trails; the log in Redis is what makes a command durable.
extension RedisCommandLog {
    /// Applies one batch from the log reader, then lets the grid catch up to the new watermark.
    func applyLogBatch(_ batch: ClusterReadBatch) {
        for entry in batch.entries {
            if state.applied[entry.partition] < entry.id { state.applied[entry.partition] = entry.id }
            counters.entriesApplied += 1
            guard let command = ClusterCommand.decode(entry.payload) else {
                logWarning("cluster log \(ClusterLog.streamKey(entry.partition)) entry \(entry.id) is not a TrackHub command; skipped")
                continue
            }
            let mine = command.origin == state.nodeID ? command.request : nil
            if command.kind.isDeviceCommand {
                applyDeviceCommand(command, entry: entry, request: mine)
                continue
            }
            if command.kind.isShareCommand {
                applyShareCommand(command, entry: entry, request: mine)
                continue
            }
            if command.kind == .fixes { noteDeviceSighting(command, entry: entry) }
            apply(command, at: entry.id.ms, request: mine)
        }
        for (partition, id) in batch.lastIDs where state.applied[partition] < id { state.applied[partition] = id }
        state.watermark = max(state.watermark, batch.watermark)
        state.reader?.consumed()
        let now = hub.clock.wallMillis()
        runAwaitingLog(now: now)
        tickGrid(now: now)
    }

    private func apply(_ command: ClusterCommand, at t: Int64, request: Int64?) {
        guard let id = command.trip else {
            return answer(request) { [self] reply in hub.answerFailure(reply, ProtocolError(.badRequest, "trip: missing from the log entry")) }
        }
        if command.kind != .create {
            guard hub.trips[id] != nil else {
                return answer(request) { [self] reply in hub.answerFailure(reply, ProtocolError(.notFound, "trip \(id) does not exist")) }
            }
            // The trip's grid ticks before this entry come first (see Hub+ClusterTick).
            advanceTicks(of: id, through: t)
        }
        switch command.kind {
        case .create: applyCreate(command, trip: id, at: t, request: request)
        case .fixes: applyFixes(command.fixes ?? [], trip: id, at: t, request: request)
        case .proceed: applyProceed(trip: id, at: t, request: request)
        case .route: applyReroute(command, trip: id, at: t, request: request)
        case .end: applyEnd(trip: id, at: t, request: request)
        case .putDevice, .deleteDevice, .deviceSeen, .share, .revokeShare: break  // applyDeviceCommand, applyShareCommand
        }
        if hub.trips[id] != nil { scheduleGridTicks(of: id, after: t) }
    }

    /// Answers the entry's client if this node appended it (`request` set).
    func answer(_ request: Int64?, _ body: @escaping (Reply) -> Void) {
        if let request { answerPending(request, body) }
    }

    private func applyCreate(_ command: ClusterCommand, trip id: String, at t: Int64, request: Int64?) {
        if hub.trips[id] != nil {
            return answer(request) { [self] reply in hub.answerFailure(reply, ProtocolError(.conflict, "id: trip \(id) already exists")) }
        }
        let trip: Trip
        let riderJSON: [UInt8]?
        do throws(ProtocolError) {
            let body = try CreateTripRequest.decode(Array((command.body ?? "{}").utf8), limits: hub.config.protocolLimits)
            riderJSON = body.rider.map { TripView.riderJSON($0) }
            trip = try hub.makeTrip(id: id, body, route: try hub.makeRoute(body.route), found: command.found, now: t)
        } catch {
            return answer(request) { [self] reply in hub.answerFailure(reply, error) }
        }
        var created = trip
        let event = created.created(now: t)
        hub.trips.add(id) { slot in TripEntry(trip: created, createdAt: t, slot: slot, riderJSON: riderJSON) }
        hub.storeStateAndSend([event], trip: id) { [self] _ in
            answer(request) { [self] reply in
                if case .http(let connection) = reply { hub.respondTrip(connection, id: id, status: 201) }
            }
            hub.sendSnapshotToSubscribers(trip: id, now: hub.clock.wallMillis())
        }
    }

    private func applyFixes(_ fixes: [FixInput], trip id: String, at t: Int64, request: Int64?) {
        var verdicts: [FixVerdict] = []
        var records: [StoreRecord] = []
        verdicts.reserveCapacity(fixes.count)
        for fix in fixes {
            let verdict = hub.trips.mutate(id) { $0.trip.judge(fix) } ?? .refused(.ended)
            verdicts.append(verdict)
            if verdict.refusal != .duplicate {
                records.append(.fix(tripID: id, fix: fix, refusal: verdict.refusal, receivedAt: t))
            }
            if verdict.isApplied { hub.applyCommittedFix(trip: id, fix: fix, now: t, receivedAt: t) }
        }
        // PROTOCOL 16: the node that appended the fixes (its courier's) looks for a new route,
        // so one search runs, not one per node; its result goes into the log like a PUT.
        if request != nil { hub.considerAutoReroute(trip: id, now: t) }
        // The log has the fixes: the ack goes now, before the first frame of their animation
        // (as on a hub alone). The node's own copy follows; a trail read waits for it
        // (`respondTrailAfterPendingWrites`), so it still shows every acked fix.
        answer(request) { [self] reply in hub.answerFixes(reply, trip: id, fixes: fixes, verdicts: verdicts) }
        hub.persist(records) { _ in }
    }

    private func applyProceed(trip id: String, at t: Int64, request: Int64?) {
        let change: ChangeUndo
        switch hub.changeProceed(id, at: t) {
        case .success(let done): change = done
        case .failure(let error): return answer(request) { [self] reply in hub.answerFailure(reply, error) }
        }
        // Now, not once stored locally: every node numbers this segment alike.
        hub.sendArrivalSegmentIfArrived(change.events, trip: id, now: t)
        hub.storeStateAndSend(change.events, trip: id) { [self] _ in
            answer(request) { [self] reply in hub.answerDone(reply, trip: id) }
        }
    }

    private func applyReroute(_ command: ClusterCommand, trip id: String, at t: Int64, request: Int64?) {
        let change: ChangeUndo
        do throws(ProtocolError) {
            let body = try RerouteRequest.decode(Array((command.body ?? "{}").utf8), limits: hub.config.protocolLimits)
            guard let route = try hub.makeRoute(body.route) else { throw .badRequest("route is required") }
            let reason = command.reason.flatMap(RerouteReason.init(rawValue:)) ?? .client
            change = try hub.changeRoute(
                id, route: route, waypoints: body.waypoints, destination: body.destination, reason: reason,
                found: command.found, at: t).get()
        } catch {
            return answer(request) { [self] reply in hub.answerFailure(reply, error) }
        }
        hub.storeStateAndSend(change.events, trip: id) { [self] _ in
            answer(request) { [self] reply in hub.answerDone(reply, trip: id) }
            hub.sendSnapshotToSubscribers(trip: id, now: hub.clock.wallMillis())
        }
    }

    private func applyEnd(trip id: String, at t: Int64, request: Int64?) {
        let events = hub.changeEnd(id, at: t)?.events ?? []
        state.endsRequested.remove(id)
        hub.storeStateAndSend(events, trip: id) { [self] _ in
            answer(request) { [self] reply in hub.answerDone(reply, trip: id) }
        }
    }
}
