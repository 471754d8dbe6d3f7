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
            let p = entry.partition
            let part = state.parts[p]
            let current = part.phase == .applied && batch.epochs.indices.contains(p) && batch.epochs[p] == part.epoch
            let isTripEntry = !Self.mayBeDeviceOrShare(entry.payload)
            let appliesAsTrip = current && part.tripApplied < entry.id
            let appliesAsMeta = state.applied[p] < entry.id
            // A partition not applied here: its trip commands are skipped without decoding.
            if isTripEntry && !appliesAsTrip { continue }
            if !isTripEntry && !appliesAsTrip && !appliesAsMeta { continue }
            guard let command = ClusterCommand.decode(entry.payload) else {
                logWarning("cluster log \(ClusterLog.streamKey(entry.partition)) entry \(entry.id) is not a TrackHub command; skipped")
                continue
            }
            let mine = command.origin == state.nodeID ? command.request : nil
            if command.kind.isDeviceCommand || command.kind.isShareCommand {
                guard appliesAsMeta else { continue }
                state.applied[p] = entry.id
                counters.entriesApplied += 1
                if command.kind.isDeviceCommand { applyDeviceCommand(command, entry: entry, request: mine) } else { applyShareCommand(command, entry: entry, request: mine) }
                continue
            }
            // A device's fix moves its last_seen on every node (kept by log position, so
            // noting it twice or late changes nothing).
            if command.kind == .fixes { noteDeviceSighting(command, entry: entry) }
            guard appliesAsTrip else { continue }
            state.parts[p].tripApplied = entry.id
            counters.entriesApplied += 1
            apply(command, at: entry.id.ms, request: mine)
        }
        for (partition, id) in batch.lastIDs {
            if state.applied[partition] < id { state.applied[partition] = id }
            let part = state.parts[partition]
            if part.phase == .applied && batch.epochs.indices.contains(partition) && batch.epochs[partition] == part.epoch && part.tripApplied < id {
                state.parts[partition].tripApplied = id
            }
        }
        // Each applied partition's own watermark: the read's time, unless it brought a full COUNT;
        // and, unless it did, the round it was read to its end in (late joiners wait for it).
        for p in 0..<state.partitions where state.parts[p].phase == .applied && batch.epochs.indices.contains(p) && batch.epochs[p] == state.parts[p].epoch {
            state.parts[p].watermark = max(state.parts[p].watermark, batch.full[p] ?? batch.time)
            if batch.full[p] == nil { state.parts[p].drainedRound = max(state.parts[p].drainedRound, batch.round) }
        }
        state.readTime = max(state.readTime, batch.time)
        state.watermark = max(state.watermark, batch.watermark)
        state.reader?.consumed()
        let now = services.clock.wallMillis()
        noteHeldEntries(batch.held, now: now)
        runAwaitingLog(now: now)
        runWaitingForPartitions(now: now)
        tickGrid(now: now)
    }

    /// Whether an entry may be a device or share command or a device's fix: their JSON has
    /// `"k":"device…`, `"k":"share…` or `"d":` unescaped (inside a string every `"` is escaped).
    static func mayBeDeviceOrShare(_ payload: [UInt8]) -> Bool {
        contains(payload, Self.deviceKind) || contains(payload, Self.shareKind) || contains(payload, Self.deviceField)
    }

    private static let deviceKind = Array(#""k":"device"#.utf8)
    private static let shareKind = Array(#""k":"share"#.utf8)
    private static let deviceField = Array(#""d":"#.utf8)

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count, let first = needle.first else { return false }
        var i = 0
        let last = haystack.count - needle.count
        while i <= last {
            if haystack[i] == first {
                var j = 1
                while j < needle.count && haystack[i + j] == needle[j] { j += 1 }
                if j == needle.count { return true }
            }
            i += 1
        }
        return false
    }

    private func apply(_ command: ClusterCommand, at t: Int64, request: Int64?) {
        guard let id = command.trip else {
            return answer(request) { [self] reply in services.replies.answerFailure(reply, ProtocolError(.badRequest, "trip: missing from the log entry")) }
        }
        if command.kind != .create {
            guard services.trips[id] != nil else {
                return answer(request) { [self] reply in services.replies.answerFailure(reply, ProtocolError(.notFound, "trip \(id) does not exist")) }
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
        case .signalLost: applySignalLost(command, trip: id, at: t)
        case .putDevice, .deleteDevice, .deviceSeen, .share, .revokeShare: break  // applyDeviceCommand, applyShareCommand
        }
        if services.trips[id] != nil { scheduleGridTicks(of: id, after: t) }
    }

    /// Answers the entry's client if this node appended it (`request` set).
    func answer(_ request: Int64?, _ body: @escaping (Reply) -> Void) {
        if let request { answerPending(request, body) }
    }

    private func applyCreate(_ command: ClusterCommand, trip id: String, at t: Int64, request: Int64?) {
        if services.trips[id] != nil {
            return answer(request) { [self] reply in services.replies.answerFailure(reply, ProtocolError(.conflict, "id: trip \(id) already exists")) }
        }
        let trip: Trip
        let riderJSON: [UInt8]?
        do throws(ProtocolError) {
            let body = try CreateTripRequest.decode(Array((command.body ?? "{}").utf8), limits: services.config.protocolLimits)
            riderJSON = body.rider.map { TripView.riderJSON($0) }
            trip = try TripTable.makeTrip(id: id, body, route: try services.tripsAPI.makeRoute(body.route), found: command.found, hasRouter: services.routes.hasRouter, now: t)
        } catch {
            return answer(request) { [self] reply in services.replies.answerFailure(reply, error) }
        }
        var created = trip
        let event = created.created(now: t)
        services.trips.add(id) { slot in TripEntry(trip: created, createdAt: t, slot: slot, riderJSON: riderJSON) }
        services.publisher.storeStateAndSend([event], trip: id) { [self] _ in
            answer(request) { [self] reply in
                if case .http(let connection) = reply { services.tripsAPI.respondTrip(connection, id: id, status: 201) }
            }
            services.publisher.sendSnapshotToSubscribers(trip: id, now: services.clock.wallMillis())
        }
    }

    private func applyFixes(_ fixes: [FixInput], trip id: String, at t: Int64, request: Int64?) {
        var verdicts: [FixVerdict] = []
        var records: [StoreRecord] = []
        verdicts.reserveCapacity(fixes.count)
        for fix in fixes {
            let verdict = services.trips.mutate(id) { $0.trip.judge(fix) } ?? .refused(.ended)
            verdicts.append(verdict)
            if verdict.refusal != .duplicate {
                records.append(.fix(tripID: id, fix: fix, refusal: verdict.refusal, receivedAt: t))
                // PROTOCOL 18: the entry's log time is the fix's arrival on every node; its
                // signal_back (and battery_low) go out ahead of its segment and frames.
                let signalEvents = services.trips.mutate(id) { $0.trip.noteStoredFix(fix, arrivedAt: t, now: t) } ?? []
                services.publisher.storeAndSendAhead(signalEvents, trip: id)
            }
            if verdict.isApplied { services.publisher.applyCommittedFix(trip: id, fix: fix, now: t, receivedAt: t) }
        }
        if !records.isEmpty {
            services.trips.markStateUnstored(id)  // refused fixes change last_fix_t and battery too
            services.signals.watch(id)
        }
        // PROTOCOL 16: the node that appended the fixes (its courier's) looks for a new route,
        // so one search runs, not one per node; its result goes into the log like a PUT.
        if request != nil { services.routes.considerAutoReroute(trip: id, now: t) }
        // The log has the fixes: the ack goes now, before the first frame of their animation
        // (as on a hub alone). The node's own copy follows; a trail read waits for it
        // (`respondTrailAfterPendingWrites`), so it still shows every acked fix.
        answer(request) { [self] reply in services.replies.answerFixes(reply, trip: id, fixes: fixes, verdicts: verdicts) }
        services.storage.persist(records) { _ in }
    }

    private func applyProceed(trip id: String, at t: Int64, request: Int64?) {
        let change: ChangeUndo
        switch services.trips.changeProceed(id, at: t) {
        case .success(let done): change = done
        case .failure(let error): return answer(request) { [self] reply in services.replies.answerFailure(reply, error) }
        }
        // Now, not once stored locally: every node numbers this segment alike.
        services.publisher.sendArrivalSegmentIfArrived(change.events, trip: id, now: t)
        services.publisher.storeStateAndSend(change.events, trip: id) { [self] _ in
            answer(request) { [self] reply in services.tripsAPI.answerDone(reply, trip: id) }
        }
    }

    private func applyReroute(_ command: ClusterCommand, trip id: String, at t: Int64, request: Int64?) {
        let change: ChangeUndo
        do throws(ProtocolError) {
            let body = try RerouteRequest.decode(Array((command.body ?? "{}").utf8), limits: services.config.protocolLimits)
            guard let route = try services.tripsAPI.makeRoute(body.route) else { throw .badRequest("route is required") }
            let reason = command.reason.flatMap(RerouteReason.init(rawValue:)) ?? .client
            change = try services.trips.changeRoute(
                id, route: route, waypoints: body.waypoints, destination: body.destination, reason: reason,
                found: command.found, stops: body.stops, at: t).get()
        } catch {
            return answer(request) { [self] reply in services.replies.answerFailure(reply, error) }
        }
        let removed = services.trips[id]?.trip.removedStopIDs(comparedTo: change.before) ?? []
        services.publisher.storeStateAndSend(change.events, trip: id) { [self] _ in
            answer(request) { [self] reply in services.tripsAPI.answerDone(reply, trip: id) }
            services.publisher.endStopFollowers(trip: id, removed: removed)  // PROTOCOL 17
            services.publisher.sendSnapshotToSubscribers(trip: id, now: services.clock.wallMillis())
        }
    }

    /// PROTOCOL 18: the partition's owner found the trip stale; every node sends
    /// `signal_lost` at this log time, unless a fix arrived since the silence it judged (or
    /// this silence was reported already: a command asked twice changes nothing).
    private func applySignalLost(_ command: ClusterCommand, trip id: String, at t: Int64) {
        guard let silence = command.lastFixT,
            let event = services.trips.mutate(id, { $0.trip.signalLost(now: t, silenceSince: silence) }) ?? nil
        else { return }
        services.publisher.storeStateAndSend([event], trip: id)
    }

    private func applyEnd(trip id: String, at t: Int64, request: Int64?) {
        let events = services.trips.changeEnd(id, at: t)?.events ?? []
        state.endsRequested.remove(id)
        services.publisher.storeStateAndSend(events, trip: id) { [self] _ in
            answer(request) { [self] reply in services.tripsAPI.answerDone(reply, trip: id) }
        }
    }
}
