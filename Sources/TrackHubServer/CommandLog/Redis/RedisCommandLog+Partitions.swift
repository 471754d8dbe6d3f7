import Foundation
import TrackHubCore
import TrackHubProtocol
import TrackHubRedis
import TrackHubStore

/// Cluster mode (PROTOCOL 15): which partitions this node applies. It applies those it owns
/// (`PartitionLeases`) and those one of its own clients uses (`usingTrip`); it starts one from
/// its owner's latest snapshot of it plus the log after it, and forgets it once it is neither
/// owned nor used for `ClusterPartition.idleAfterMs`.
///
/// Why the frames agree: a partition's trips depend only on that partition's entries and the
/// shared grid of log time (+Tick), and its snapshot holds each trip's whole state (frame and
/// segment counters, next grid tick). A node that starts from the snapshot at entry X and
/// applies the entries after X, ticking each trip only up to that partition's own watermark,
/// makes the same calls to `Trip.tick` and `apply` in the same order as the owner, so it sends
/// the same frames (t, seq, position) and events (n) from then on.
extension RedisCommandLog {
    /// PROTOCOL 15, "Late joiners see the present": a request about a trip is run once this
    /// node applies the trip's partition and has read it to its end in a read round begun
    /// after the request arrived (`ClusterLogReader.roundsStarted`), with the trip's grid
    /// ticks caught up to that point: so a subscribe or GET here shows what every other hub
    /// has shown, not the partition's snapshot (a partition just taken over or tailed) nor a
    /// trip whose ticks since its last entry have not run yet. A partition that is applied and
    /// has been read to its end since it was installed answers a trip it knows at once.
    func usingTrip(_ trip: String, reply: Reply, now: Int64, _ then: @escaping () -> Void) {
        let p = state.partition(of: trip)
        state.parts[p].lastUsed = now
        let run = { [self] in
            catchUpTicks(of: trip)
            then()
        }
        let part = state.parts[p]
        if part.isPresent && part.waiting.isEmpty && state.readyAfterStore.isEmpty && services.trips[trip] != nil {
            return run()
        }
        guard state.parts[p].waiting.count < ClusterPartition.maxWaiting else {
            return services.replies.answerFailure(reply, ProtocolError(.unavailable, "too many requests waiting for partition \(p) of the cluster log; try again"))
        }
        let round = state.reader?.roundsStarted ?? 0
        state.parts[p].waiting.append(ClusterPartition.Awaiting(afterRound: round, since: now, reply: reply, then: run))
        if state.parts[p].phase == .idle { startApplying(p) }
    }

    /// Runs the requests waiting for partitions that are now applied up to their arrival;
    /// those waiting too long are answered `unavailable` (after each batch and in housekeeping).
    func runWaitingForPartitions(now: Int64) {
        var ready: [() -> Void] = []
        defer {
            // After the store has what was just applied: a subscribe then gets its snapshot
            // after the trip's creation has been sent, not in the middle of it.
            if !ready.isEmpty {
                state.readyAfterStore += ready
                services.storage.persist([]) { [self] _ in runReadyAfterStore() }
            }
        }
        for p in 0..<state.partitions where !state.parts[p].waiting.isEmpty {
            let part = state.parts[p]
            var still: [ClusterPartition.Awaiting] = []
            state.parts[p].waiting = []
            for item in part.waiting {
                if part.hasApplied(arrivedAtRound: item.afterRound) {
                    ready.append(item.then)
                } else if now - item.since > ClusterPartition.loadTimeoutMs {
                    services.replies.answerFailure(item.reply, ProtocolError(.unavailable, "this hub has not caught up with partition \(p) of the cluster log within \(ClusterPartition.loadTimeoutMs / 1000) s; try again"))
                } else {
                    still.append(item)
                }
            }
            state.parts[p].waiting = still + state.parts[p].waiting
        }
    }

    private func runReadyAfterStore() {
        let ready = state.readyAfterStore
        state.readyAfterStore = []
        for then in ready { then() }
    }

    /// Reads the partition's latest snapshot off the service thread, then installs it and
    /// has the reader replay the partition after it.
    func startApplying(_ p: Int) {
        guard state.parts[p].phase == .idle else { return }
        state.parts[p].phase = .loading
        let partitions = state.partitions
        let store = services.storage.store
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let loaded: Result<PartitionSnapshot, Error>
            do {
                let redis = try RedisClient(seeds: seeds, timeoutMs: 5000)
                let snapshot = try PartitionSnapshot.load(p, partitions: partitions, from: redis) ?? PartitionSnapshot(partition: p)
                loaded = .success(snapshot)
            } catch {
                loaded = .failure(error)
            }
            let records = (try? loaded.get()).map { PartitionSnapshot.newStoreRecords($0.trips, store: store) } ?? []
            services.inbox.run { [self] in
                switch loaded {
                case .success(let snapshot): install(snapshot, records: records)
                case .failure(let error):
                    logWarning("cluster partition \(p): its snapshot cannot be read (\(error)); trying again")
                    state.parts[p].phase = .idle
                    if state.parts[p].owned || !state.parts[p].waiting.isEmpty {
                        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [self] in
                            services.inbox.run { [self] in if state.parts[p].phase == .idle { startApplying(p) } }
                        }
                    }
                }
            }
        }
    }

    private func install(_ snapshot: PartitionSnapshot, records: [StoreRecord]) {
        let p = snapshot.partition
        guard state.parts[p].phase == .loading else { return }
        for record in snapshot.trips where services.trips[record.trip.id] == nil {
            services.trips.add(record.trip.id, lastEventSent: record.trip.lastEventNumber) { slot in
                var entry = TripEntry(trip: record.trip, createdAt: record.createdAt, slot: slot, riderJSON: record.rider.map { Array($0.utf8) })
                entry.frameSeq = record.frameSeq
                entry.segmentSeq = record.segmentSeq
                entry.nextTickAt = record.nextTickAt
                entry.endedAt = record.endedAt
                entry.recentEvents = record.events.map { Array($0.utf8) }
                return entry
            }
            if let next = record.nextTickAt { state.schedule.insert(record.trip.id, phase: state.phase(at: next)) }
            services.signals.watch(record.trip.id)  // judged from the snapshot's last_fix_t (PROTOCOL 18)
            let firstN = record.trip.lastEventNumber - record.events.count + 1
            services.publisher.webhooks?.eventsStored(record.events.enumerated().map { (firstN + $0.offset, Array($0.element.utf8)) }, trip: record.trip.id)
        }
        if !records.isEmpty { services.storage.persist(records) { _ in } }
        state.parts[p].epoch += 1
        state.parts[p].loads += 1
        state.parts[p].snapshotPosition = snapshot.position
        state.parts[p].tripApplied = snapshot.position
        state.parts[p].watermark = snapshot.watermark
        state.parts[p].phase = .applied
        // Read before the reset: a round counted after this may read from the snapshot's position.
        state.parts[p].installedRound = state.reader?.roundsStarted ?? 0
        state.reader?.reset(partition: p, after: snapshot.position, epoch: state.parts[p].epoch)
        updateWebhookScope()
    }

    /// Forgets a partition nobody here owns or uses (housekeeping).
    func stopApplyingIdlePartitions(now: Int64) {
        var used = Set<Int>()
        for trip in services.fanout.subscriptions.trips { used.insert(state.partition(of: trip)) }
        for p in 0..<state.partitions where state.parts[p].phase == .applied && !state.parts[p].owned {
            if used.contains(p) { state.parts[p].lastUsed = now }
            guard state.parts[p].waiting.isEmpty, now - state.parts[p].lastUsed > ClusterPartition.idleAfterMs else { continue }
            let ids = services.trips.entries.keys.filter { state.partition(of: $0) == p }
            for id in ids {
                services.trips.remove(id)
                state.schedule.remove(id)
                state.endsRequested.remove(id)
            }
            state.parts[p].phase = .idle
            state.parts[p].epoch += 1
            state.parts[p].watermark = .min
        }
    }

    /// Every interval: the snapshots of the partitions this node owns (and, for the owner of
    /// partition 0, the devices and links), written off the service thread.
    func writePartitionSnapshots(now: Int64) {
        let owned = (0..<state.partitions).filter { state.parts[$0].owned && state.parts[$0].isCaughtUp(now: now) }
        guard !owned.isEmpty else { return }
        var byPartition: [Int: [(Trip, Int64, [UInt8]?, Int, Int, Int64?, Int64?, [[UInt8]])]] = [:]
        let ownedSet = Set(owned)
        for (id, entry) in services.trips.entries {
            let p = state.partition(of: id)
            guard ownedSet.contains(p) else { continue }
            byPartition[p, default: []].append((entry.trip, entry.createdAt, entry.riderJSON, entry.frameSeq, entry.segmentSeq, entry.nextTickAt, entry.endedAt, entry.recentEvents))
        }
        let heads = owned.map { (p: $0, position: state.parts[$0].tripApplied, watermark: state.parts[$0].watermark, replaced: state.parts[$0].snapshotPosition) }
        var metaSnapshot: ClusterSnapshot?
        if ownedSet.contains(0) {
            let shares = services.shares.links.all.filter { !ShareLinks.hasExpired($0, nowMs: now) }.map(ClusterSnapshot.ShareRecord.init)
            metaSnapshot = ClusterSnapshot(partitions: state.partitions, positions: state.applied, watermark: state.watermark, writtenBy: state.nodeID, trips: [], devices: state.devices, shares: shares)
        }
        let captured = byPartition
        let meta = metaSnapshot
        let metaReplaced = state.metaPositions
        let nodeID = state.nodeID
        let store = services.storage.store
        state.snapshotInFlight = true
        DispatchQueue.global(qos: .utility).async { [self] in
            var written: [(p: Int, position: StreamID, replaced: StreamID)] = []
            var metaWritten = false
            var redis: RedisClient?
            do {
                let client = try RedisClient(seeds: seeds, timeoutMs: 5000)
                redis = client
                for head in heads {
                    let trips = try (captured[head.p] ?? []).map { item in
                        ClusterSnapshot.TripRecord(
                            trip: item.0, createdAt: item.1, rider: item.2.map { String(decoding: $0, as: UTF8.self) },
                            frameSeq: item.3, segmentSeq: item.4, nextTickAt: item.5, endedAt: item.6,
                            events: item.7.map { String(decoding: $0, as: UTF8.self) },
                            trail: try store.recentFixes(tripID: item.0.id, count: 100).map { .init(fix: $0.fix, refusal: $0.refusal) })
                    }
                    let snapshot = PartitionSnapshot(partition: head.p, position: head.position, watermark: head.watermark, writtenBy: nodeID, trips: trips)
                    let reply = try client.command([Array(redis: "SET"), Array(redis: PartitionSnapshot.key(head.p)), try snapshot.encoded()])
                    if reply.text == "OK" { written.append((head.p, head.position, head.replaced)) }
                }
                if let meta {
                    let reply = try client.command([Array(redis: "SET"), Array(redis: ClusterLog.metaSnapshotKey), try meta.encoded()])
                    // The floor follows the meta snapshot it protects readers of (`LogTrim`).
                    if reply.text == "OK" { metaWritten = try client.command(LogTrim.writeMetaFloorCommand(metaReplaced)).text == "OK" }
                }
            } catch {
                logWarning("cluster snapshot not written: \(error)")
            }
            if let redis, !written.isEmpty { trimBelowSnapshots(written, over: redis) }
            let done = written
            let newMeta = metaWritten ? meta : nil
            services.inbox.run { [self] in
                state.snapshotInFlight = false
                if !done.isEmpty { counters.snapshotsWritten += 1 }
                for head in done where state.parts[head.p].snapshotPosition < head.position { state.parts[head.p].snapshotPosition = head.position }
                if let newMeta { state.metaPositions = newMeta.positions }
            }
        }
    }

    /// Off the service thread, after the snapshots were written: each written partition's log
    /// trimmed below the snapshot it replaced and the meta floor (`LogTrim`), in one pipeline.
    private func trimBelowSnapshots(_ written: [(p: Int, position: StreamID, replaced: StreamID)], over redis: RedisClient) {
        do {
            let metaFloor = try LogTrim.readMetaFloor(redis)
            let trims = written.compactMap { head in
                LogTrim.floor(partition: head.p, replacedSnapshot: head.replaced, metaFloor: metaFloor).map { LogTrim.command(partition: head.p, below: $0) }
            }
            if !trims.isEmpty { _ = try redis.pipeline(trims) }
        } catch {
            logWarning("cluster log not trimmed below its snapshots: \(error)")
        }
    }
}

/// One partition's trips at one point of its log (`trackhub:{p<p>}:snapshot`), written by its
/// owner: a node that starts applying the partition loads it and replays the log after `position`.
struct PartitionSnapshot: Codable, Sendable {
    static let version = 1
    static func key(_ partition: Int) -> String { "trackhub:{p\(partition)}:snapshot" }

    var version = PartitionSnapshot.version
    var partition: Int
    /// The last entry of the partition the trips include.
    var position = StreamID.zero
    /// Every entry of the partition stamped below this is included.
    var watermark = Int64.min
    var writtenBy = ""
    var trips: [ClusterSnapshot.TripRecord] = []

    init(partition: Int, position: StreamID = .zero, watermark: Int64 = .min, writtenBy: String = "", trips: [ClusterSnapshot.TripRecord] = []) {
        self.partition = partition
        self.position = position
        self.watermark = watermark
        self.writtenBy = writtenBy
        self.trips = trips
    }

    func encoded() throws -> [UInt8] { Array(try JSONEncoder().encode(self)) }

    /// The partition's snapshot, or its trips in a one-key snapshot written before
    /// partitions had their own (`trackhub:snapshot`); nil: neither (start from the log's start).
    static func load(_ p: Int, partitions: Int, from redis: RedisClient) throws -> PartitionSnapshot? {
        if let bytes = try redis.command([Array(redis: "GET"), Array(redis: key(p))]).bytes {
            let snapshot = try JSONDecoder().decode(PartitionSnapshot.self, from: Data(bytes))
            guard snapshot.partition == p else { throw ClusterStartError("\(key(p)) holds partition \(snapshot.partition)") }
            return snapshot
        }
        guard let bytes = try redis.command([Array(redis: "GET"), Array(redis: ClusterLog.snapshotKey)]).bytes else { return nil }
        let old = try ClusterSnapshot.decode(bytes)
        guard old.positions.count == partitions else { return nil }
        let trips = old.trips.filter { ClusterLog.partition(of: $0.trip.id, partitions: partitions) == p }
        return PartitionSnapshot(partition: p, position: old.positions[p], watermark: old.watermark, writtenBy: old.writtenBy, trips: trips)
    }

    /// What the node's own store needs of these trips and does not have yet (a node that
    /// applied the partition before keeps its trail and events; a trail row or event twice
    /// would show twice).
    static func newStoreRecords(_ trips: [ClusterSnapshot.TripRecord], store: TripStore) -> [StoreRecord] {
        var out: [StoreRecord] = []
        for record in trips {
            let id = record.trip.id
            let rider = record.rider.map { Array($0.utf8) }
            out.append(.tripState(record.trip.withoutSeenFixes, createdAt: record.createdAt, riderJSON: rider))
            for fix in record.trail where !((try? store.hasFix(tripID: id, seq: fix.fix.seq, ts: fix.fix.ts)) ?? false) {
                out.append(.fix(tripID: id, fix: fix.fix, refusal: fix.refusal, receivedAt: record.createdAt))
            }
            let firstN = record.trip.lastEventNumber - record.events.count + 1
            let have = (try? store.events(tripID: id, after: firstN - 1, limit: record.events.count).count) ?? 0
            for (offset, event) in record.events.enumerated() where offset >= have {
                out.append(.event(tripID: id, n: firstN + offset, encoded: Array(event.utf8)))
            }
        }
        return out
    }
}
