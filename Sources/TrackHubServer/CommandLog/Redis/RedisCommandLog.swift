import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubRedis
import TrackHubStore

/// A cluster of hubs (`--cluster`, docs/cluster.md): the command log is a set of Redis
/// streams, one per partition of trip ids. A command is appended first and answered by the
/// node that appended it once it applies its own entry; every node applies every entry in
/// log order, with the entry's time as the clock (+Apply), and ticks its trips on a grid of
/// log time (+Tick), so every node sends the same frames and events.
///
/// PROTOCOL 7: a command is acked only once Redis has it; while Redis cannot take it the
/// client gets `unavailable`. The node's own store (SQLite in `--data`) keeps what it
/// applied, for trails, event replay and snapshots' trails.
///
/// Threads: like the hub, owned by the service thread; other threads hand work in with
/// `services.inbox.run`. That is why it is `@unchecked Sendable`.
final class RedisCommandLog: CommandLog, @unchecked Sendable {
    let services: HubServices
    let seeds: [RedisAddress]
    /// Set by `restore` (joining the cluster); the service thread owns it afterwards.
    var state: ClusterState!

    /// What this node did with the log, for /metrics.
    struct Counters {
        var appends = 0
        var appendFailures = 0
        var entriesApplied = 0
        var snapshotsWritten = 0
        var confirmRescues = 0
    }
    var counters = Counters()

    init(services: HubServices, seeds: [RedisAddress]) {
        self.services = services
        self.seeds = seeds
        // Stale is decided once, in the log (PROTOCOL 18): every node sends the same signal_lost.
        services.signals.reportThroughLog = { [weak self] trip, lastFixT, now in
            self?.requestSignalLost(trip: trip, lastFixT: lastFixT, now: now)
        }
    }

    func restore() throws {
        try join()
    }

    func startThreads() {
        state.writer.start()
        state.reader?.start()
        state.leases?.start()
        state.fleet?.start()
        state.watchers?.start()
        state.settingsWatch?.start()
    }

    func stopThreads() {
        state.settingsWatch?.stop()
        state.watchers?.stop()
        state.fleet?.stop()
        state.leases?.stop()
        state.reader?.stop()
        state.writer.stop()
    }

    func submit(_ command: TripCommand, reply: Reply?, now: Int64) {
        switch command {
        case .create(let id, let body, let route, let rawBody, let found):
            do throws(ProtocolError) {
                // The checks every node's applier makes, so their 400s come without a round trip.
                _ = try TripTable.makeTrip(id: "check", body, route: route, found: found, hasRouter: services.routes.hasRouter, now: now)
                if services.trips[id] != nil { throw .conflict("id: trip \(id) already exists") }
            } catch {
                if let reply { services.replies.answerFailure(reply, error) }
                return
            }
            var entry = ClusterCommand(kind: .create, trip: id, body: String(decoding: rawBody, as: UTF8.self))
            entry.routerDurationS = found?.durationS
            appendToLog(entry, reply: reply, now: now)
        case .fixes(let trip, let fixes):
            appendToLog(ClusterCommand(kind: .fixes, trip: trip, fixes: fixes), reply: reply, now: now)
        case .proceed(let trip):
            appendToLog(ClusterCommand(kind: .proceed, trip: trip), reply: reply, now: now)
        case .route(let trip, _, _, let rawBody, let reason, let found):
            var entry = ClusterCommand(kind: .route, trip: trip, body: String(decoding: rawBody, as: UTF8.self))
            entry.routerDurationS = found?.durationS
            entry.reason = reason == .client ? nil : reason.rawValue
            appendToLog(entry, reply: reply, now: now)
        case .end(let trip):
            appendToLog(ClusterCommand(kind: .end, trip: trip), reply: reply, now: now)
        }
    }

    func advanceTrips(now: Int64) {
        tickGrid(now: now)
    }

    func fleetMembers(_ local: [FleetMember], now: Int64) -> [FleetMember] {
        guard let fleet = state.fleet else { return local }
        fenceLapsedLeases()  // publishing is an owner's work
        var mine: [Int: [FleetMember]] = [:]
        for p in 0..<state.partitions where state.parts[p].owned && state.parts[p].phase == .applied { mine[p] = [] }
        for member in local {
            let p = state.partition(of: member.id)
            if mine[p] != nil { mine[p]?.append(member) }
        }
        return fleet.exchange(publish: mine)
    }

    func watchedElsewhere(_ here: Set<String>, version: UInt64, now: Int64) -> CadenceService.Elsewhere? {
        state.watchers?.exchange(here: here, version: version)
    }

    func tripStartedMoving(_ trip: String, at t: Int64, byFix: Bool) {
        // The grid is scheduled after each applied command (+Apply's `scheduleGridTicks`).
    }

    func housekeeping(now: Int64) {
        fenceLapsedLeases()  // before any owner's work, should the fence's timer not have run yet
        requestEndsOfArrivedTrips(now: now)
        expirePendingCommands(now: now)
        rescueHeldEntries(now: now)
        runAwaitingLog(now: now)
        runWaitingForPartitions(now: now)
        stopApplyingIdlePartitions(now: now)
        readLogLengthsIfDue(now: now)
        if now / 30_000 != (now - 500) / 30_000 {
            state.endsRequested.removeAll()  // a lost end is asked again
            state.devices.pruneSightings(appliedBefore: state.watermark)
        }
        if !state.snapshotInFlight, state.readerUp, state.isCaughtUp(now: now),
            now - state.lastSnapshotAt >= services.config.clusterSnapshotIntervalMs
        {
            state.lastSnapshotAt = now
            writePartitionSnapshots(now: now)
        }
    }

    func afterAnsweredWrites(_ then: @escaping @Sendable () -> Void) {
        // A fix is acked once Redis has it, before this node's own copy of the trail is
        // written: read after every write queued so far (an empty batch completes after them).
        services.storage.persist([]) { _ in then() }
    }

    func connectionClosed(_ id: ConnectionID) {
        forgetPendingAnswers(of: id)
    }

    func health(now: Int64) -> CommandLogHealth {
        if !state.isHealthy { return .unavailable }
        if syncFullRefusal != nil { return .unavailable }  // --sync full without an ack that survives a power cut
        if !state.startedUp {
            // At start: until it knows what it owns and has caught up on it.
            guard state.isCaughtUpOnOwned(now: now) else { return .catchingUp }
            state.startedUp = true
        }
        guard state.isCaughtUp(now: now) else { return .catchingUp }  // the log reader is behind
        return hasOversizedLog ? .degraded : .ok
    }

    var hasUnansweredCommands: Bool { !state.pending.isEmpty || !state.awaitingLog.isEmpty }
    /// Another node's command may still be on its way here (PROTOCOL 15).
    var appliesCommandsOnArrival: Bool { false }
    var movingTripCount: Int { state.schedule.count }
    var keepsRecentEvents: Bool { true }

    func metricsText(now: Int64) -> String {
        Self.metricsText(up: state.isHealthy, lagMs: state.watermark == .min ? nil : now - state.watermark, counters: counters)
            + PrometheusText.metric("trackhub_cluster_partitions_owned", "gauge", "Partitions of the log this node owns (applies, snapshots, delivers the webhooks of, publishes the fleet positions of).", Double(state.parts.filter(\.owned).count))
            + PrometheusText.metric("trackhub_cluster_partitions_applied", "gauge", "Partitions this node applies now: those it owns and those its own clients use.", Double(state.parts.filter { $0.phase == .applied }.count))
            + PrometheusText.gauges(
                "trackhub_cluster_log_entries", "Entries in each partition's log stream (XLEN, read every few seconds); it is trimmed only below the partition's snapshots.",
                label: "partition", state.logEntries.enumerated().filter { $0.element >= 0 }.map { (String($0.offset), Double($0.element)) })
            + PrometheusText.counters(
                "trackhub_cluster_partition_loads_total", "Times this node started applying each partition (its latest snapshot, then the log after it); one that keeps rising means its lease keeps moving.",
                label: "partition", Dictionary(uniqueKeysWithValues: state.parts.enumerated().filter { $0.element.loads > 0 }.map { (String($0.offset), $0.element.loads) }))
            + ackSurvivalMetrics
    }

    /// The cluster's lines of /metrics. `lagMs` nil: nothing applied yet (no log time), -1.
    static func metricsText(up: Bool, lagMs: Int64?, counters: Counters) -> String {
        let lag = lagMs.map { Double($0) / 1000 } ?? -1
        return PrometheusText.metric("trackhub_cluster_redis_up", "gauge", "1 while the cluster log in Redis answers.", up ? 1 : 0)
            + PrometheusText.metric("trackhub_cluster_lag_seconds", "gauge", "This node's clock minus the log time it has applied up to, in seconds.", lag)
            + PrometheusText.metric("trackhub_cluster_log_appends_total", "counter", "Commands appended to the cluster log.", Double(counters.appends))
            + PrometheusText.metric("trackhub_cluster_append_failures_total", "counter", "Appends Redis did not take (answered unavailable).", Double(counters.appendFailures))
            + PrometheusText.metric("trackhub_cluster_entries_applied_total", "counter", "Log entries applied.", Double(counters.entriesApplied))
            + PrometheusText.metric("trackhub_cluster_snapshots_written_total", "counter", "Snapshots this node wrote to Redis.", Double(counters.snapshotsWritten))
            + PrometheusText.metric("trackhub_cluster_confirm_rescues_total", "counter", "With --cluster-replicas: times this node confirmed entries of a partition it owns that readers held back for more than a second (a WAIT that fell short, or a writer that died before confirming).", Double(counters.confirmRescues))
    }
}
