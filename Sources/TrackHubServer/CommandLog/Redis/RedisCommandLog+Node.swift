import Foundation
import TrackHubCore
import TrackHubRedis
import TrackHubStore

/// Cluster mode: joining the cluster at start-up, snapshots, and leaving.
extension RedisCommandLog {
    /// How long start-up keeps trying to reach Redis before giving up.
    static let clusterStartDeadlineMs: Int64 = 30_000

    /// Before the service thread starts: checks the partition count, loads the latest snapshot
    /// (trips, devices and share links) into memory and into the node's own store, and sets the log reader
    /// to replay from there.
    func join() throws {
        let redis = try connectForStartup(address)
        let partitions = hub.config.clusterPartitions
        // The first node fixes the partition count; every later one must agree.
        _ = try redis.command([Array(redis: "SET"), Array(redis: ClusterLog.partitionsKey), Array(redis: String(partitions)), Array(redis: "NX")])
        let stored = try redis.command([Array(redis: "GET"), Array(redis: ClusterLog.partitionsKey)]).int
        guard stored == Int64(partitions) else {
            throw ClusterStartError("--cluster-partitions: this cluster's log has \(stored.map(String.init) ?? "?") partitions (\(ClusterLog.partitionsKey) in \(address)); start every node with the same number")
        }
        var positions = Array(repeating: StreamID.zero, count: partitions)
        var watermark = Int64.min
        var devices = ClusterDevices()
        var shares: [StoredShare] = []
        if let bytes = try redis.command([Array(redis: "GET"), Array(redis: ClusterLog.snapshotKey)]).bytes {
            let snapshot: ClusterSnapshot
            do {
                snapshot = try ClusterSnapshot.decode(bytes)
            } catch {
                throw ClusterStartError("\(ClusterLog.snapshotKey) in \(address) cannot be read (\(error)); delete it to rebuild from the log")
            }
            guard snapshot.partitions == partitions, snapshot.positions.count == partitions else {
                throw ClusterStartError("\(ClusterLog.snapshotKey) was written for \(snapshot.partitions) partitions")
            }
            try install(snapshot)
            positions = snapshot.positions
            watermark = snapshot.watermark
            devices = snapshot.devices ?? ClusterDevices()
            shares = (snapshot.shares ?? []).map(\.stored)
        }
        hub.devices.replaceAll(with: Array(devices.all))
        // The node's own store was wiped: the cluster's links are the snapshot's and the log's.
        hub.shareLinks.restore(shares)
        hub.shareLinks.forgetExpired(nowMs: hub.clock.wallMillis())
        let writer = ClusterLogWriter(address: address)
        let state = ClusterState(nodeID: ClusterState.makeNodeID(), partitions: partitions, writer: writer, applied: positions, tickHz: hub.config.tickHz, phases: hub.trips.animating.phases)
        state.watermark = watermark
        state.devices = devices
        state.lastSnapshotAt = hub.clock.wallMillis()
        state.reader = ClusterLogReader(
            address: address, partitions: partitions, after: positions,
            deliver: { [self] batch in hub.runOnServiceThread { [self] in applyLogBatch(batch) } },
            connectionChanged: { [self, writer] up, why in
                if !up { logWarning("cluster log: \(why ?? "Redis unreachable"); reconnecting") }
                writer.reconnectBeforeNextSend()
                hub.runOnServiceThread { [self] in
                    self.state.readerUp = up
                    self.state.readerError = why
                }
            })
        self.state = state
    }

    private func connectForStartup(_ address: RedisAddress) throws -> RedisConnection {
        let deadline = systemMonotonicMicros() / 1000 + Self.clusterStartDeadlineMs
        while true {
            do {
                return try RedisConnection(address, timeoutMs: 5000)
            } catch {
                if systemMonotonicMicros() / 1000 >= deadline {
                    throw ClusterStartError("--cluster: \(error) (tried for \(Self.clusterStartDeadlineMs / 1000) s)")
                }
                usleep(200_000)  // start-up retry pace while Redis comes up, not synchronisation
            }
        }
    }

    /// Puts a snapshot's trips in memory and their trails and events in the node's store.
    private func install(_ snapshot: ClusterSnapshot) throws {
        var records: [StoreRecord] = []
        for record in snapshot.trips {
            hub.trips.add(record.trip.id, lastEventSent: record.trip.lastEventNumber) { slot in
                var entry = TripEntry(trip: record.trip, createdAt: record.createdAt, slot: slot, riderJSON: record.rider.map { Array($0.utf8) })
                entry.frameSeq = record.frameSeq
                entry.segmentSeq = record.segmentSeq
                entry.nextTickAt = record.nextTickAt
                entry.endedAt = record.endedAt
                entry.recentEvents = record.events.map { Array($0.utf8) }
                return entry
            }
            records += ClusterSnapshot.storeRecords(for: record)
        }
        let done = DispatchSemaphore(value: 0)
        let outcome = ResultBox()
        hub.store.append(records) { result in
            outcome.set(result)
            done.signal()
        }
        done.wait()
        if case .failure(let error) = outcome.get() { throw ClusterStartError("loading the snapshot into the node's store: \(error)") }
    }

    /// Captures the state on the service thread (cheap copies), encodes and writes it on a
    /// background queue. Only the node holding `trackhub:snapshot-lock` writes, so the nodes
    /// of a cluster write one snapshot per interval between them.
    func writeSnapshot() {
        let captured = hub.trips.entries.values.map { entry in
            (entry.trip, entry.createdAt, entry.riderJSON, entry.frameSeq, entry.segmentSeq, entry.nextTickAt, entry.endedAt, entry.recentEvents)
        }
        let positions = state.applied
        let watermark = state.watermark
        let devices = state.devices
        let shares = hub.shareLinks.all.filter { !ShareLinks.hasExpired($0, nowMs: hub.clock.wallMillis()) }.map(ClusterSnapshot.ShareRecord.init)
        let nodeID = state.nodeID
        let partitions = state.partitions
        let lockMs = max(1000, hub.config.clusterSnapshotIntervalMs * 9 / 10)
        let store = hub.store
        DispatchQueue.global(qos: .utility).async { [self] in
            let written: Bool
            do {
                let redis = try RedisConnection(address, timeoutMs: 5000)
                let lock = try redis.command([Array(redis: "SET"), Array(redis: ClusterLog.snapshotLockKey), Array(redis: nodeID),
                                              Array(redis: "NX"), Array(redis: "PX"), Array(redis: String(lockMs))])
                if lock.text != "OK" {
                    written = false  // another node holds this interval's lock
                } else {
                    let records = try captured.map { item in
                        ClusterSnapshot.TripRecord(
                            trip: item.0, createdAt: item.1, rider: item.2.map { String(decoding: $0, as: UTF8.self) },
                            frameSeq: item.3, segmentSeq: item.4, nextTickAt: item.5, endedAt: item.6,
                            events: item.7.map { String(decoding: $0, as: UTF8.self) },
                            trail: try store.recentFixes(tripID: item.0.id, count: 100).map { .init(fix: $0.fix, refusal: $0.refusal) })
                    }
                    let snapshot = ClusterSnapshot(partitions: partitions, positions: positions, watermark: watermark, writtenBy: nodeID, trips: records, devices: devices, shares: shares)
                    let reply = try redis.command([Array(redis: "SET"), Array(redis: ClusterLog.snapshotKey), try snapshot.encoded()])
                    written = reply.text == "OK"
                }
            } catch {
                logWarning("cluster snapshot not written: \(error)")
                written = false
            }
            hub.runOnServiceThread { [self] in
                state.snapshotInFlight = false
                if written { counters.snapshotsWritten += 1 }
            }
        }
    }
}

/// Start-up of a cluster node failed; the message names the flag or key at fault.
struct ClusterStartError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A store completion's result, handed from the writer thread to the waiting start-up.
private final class ResultBox: @unchecked Sendable {
    private var result: Result<Void, StoreError> = .success(())
    private let lock = NSLock()
    func set(_ r: Result<Void, StoreError>) { lock.lock(); result = r; lock.unlock() }
    func get() -> Result<Void, StoreError> { lock.lock(); defer { lock.unlock() }; return result }
}
