import Foundation
import TrackHubCore
import TrackHubRedis
import TrackHubStore

/// Cluster mode: joining the cluster at start-up, snapshots, and leaving.
extension RedisCommandLog {
    /// How long start-up keeps trying to reach Redis before giving up.
    static let clusterStartDeadlineMs: Int64 = 30_000

    /// Before the service thread starts: checks the partition count, loads the latest snapshot
    /// of the devices and share links, and sets the log reader to replay from there. Trips
    /// come per partition, as the node starts applying one (+Partitions).
    func join() throws {
        let redis = try connectForStartup()
        let partitions = services.config.clusterPartitions
        if !redis.isCluster { try renameLegacyStreams(redis, partitions: partitions) }
        // The first node fixes the partition count; every later one must agree.
        _ = try redis.command([Array(redis: "SET"), Array(redis: ClusterLog.partitionsKey), Array(redis: String(partitions)), Array(redis: "NX")])
        let stored = try redis.command([Array(redis: "GET"), Array(redis: ClusterLog.partitionsKey)]).int
        guard stored == Int64(partitions) else {
            throw ClusterStartError("--cluster-partitions: this cluster's log has \(stored.map(String.init) ?? "?") partitions (\(ClusterLog.partitionsKey) in \(seedsText)); start every node with the same number")
        }
        var positions = Array(repeating: StreamID.zero, count: partitions)
        var watermark = Int64.min
        var devices = ClusterDevices()
        var shares: [StoredShare] = []
        // The devices and links; trips come per partition as this node starts applying one.
        // (A one-key snapshot from before partitions had their own serves both.)
        let metaBytes = try redis.command([Array(redis: "GET"), Array(redis: ClusterLog.metaSnapshotKey)]).bytes
        let oldBytes = metaBytes == nil ? try redis.command([Array(redis: "GET"), Array(redis: ClusterLog.snapshotKey)]).bytes : nil
        if let bytes = metaBytes ?? oldBytes {
            let key = metaBytes != nil ? ClusterLog.metaSnapshotKey : ClusterLog.snapshotKey
            let snapshot: ClusterSnapshot
            do {
                snapshot = try ClusterSnapshot.decode(bytes)
            } catch {
                throw ClusterStartError("\(key) in \(seedsText) cannot be read (\(error)); delete it to rebuild from the log")
            }
            guard snapshot.partitions == partitions, snapshot.positions.count == partitions else {
                throw ClusterStartError("\(key) was written for \(snapshot.partitions) partitions")
            }
            positions = snapshot.positions
            watermark = snapshot.watermark
            devices = snapshot.devices ?? ClusterDevices()
            shares = (snapshot.shares ?? []).map(\.stored)
        }
        services.devices.registry.replaceAll(with: Array(devices.all))
        // The node's own store was wiped: the cluster's links are the snapshot's and the log's.
        services.shares.links.restore(shares)
        services.shares.links.forgetExpired(nowMs: services.clock.wallMillis())
        let writer = ClusterLogWriter(seeds: seeds, replicasRequired: services.config.clusterReplicas)
        let nodeID = ClusterState.makeNodeID()
        let state = ClusterState(nodeID: nodeID, partitions: partitions, writer: writer, applied: positions, tickHz: services.config.tickHz, phases: services.trips.animating.phases)
        state.watermark = watermark
        state.devices = devices
        state.lastSnapshotAt = services.clock.wallMillis()
        state.reader = ClusterLogReader(
            seeds: seeds, partitions: partitions, after: positions, gated: services.config.clusterReplicas > 0,
            deliver: { [self] batch in services.inbox.run { [self] in applyLogBatch(batch) } },
            connectionChanged: { [self, writer] up, why in
                if !up { logWarning("cluster log: \(why ?? "Redis unreachable"); reconnecting") }
                writer.reconnectBeforeNextSend()
                services.inbox.run { [self] in
                    self.state.readerUp = up
                    self.state.readerError = why
                }
            })
        state.leases = PartitionLeases(seeds: seeds, nodeID: nodeID, partitions: partitions, leaseMs: services.config.clusterLeaseMs) { [self] round in
            services.inbox.run { [self] in leasesReported(round) }
        }
        state.fleet = ClusterFleet(seeds: seeds, partitions: partitions, ttlMs: max(3 * services.config.clusterLeaseMs, 3000))
        if services.cadence.isEnabled { state.watchers = ClusterWatchers(seeds: seeds, nodeID: nodeID) }
        state.settingsWatch = RedisSettingsWatch(seeds: seeds, replicasRequired: services.config.clusterReplicas) { [self] survival in
            services.inbox.run { [self] in ackSurvivalRead(survival) }
        }
        self.state = state
    }

    /// The seeds as the `--cluster` flag gave them, for messages.
    var seedsText: String { seeds.map(\.description).joined(separator: ",") }

    /// Partition streams were `trackhub:log:<n>` before they were hash-tagged for Redis
    /// Cluster: on a single Redis (where a rename may cross slots) the first node of the new
    /// version renames them, so an upgraded cluster keeps its log. `RENAMENX` does nothing
    /// where the new key exists already; a missing old key is an error reply, ignored.
    private func renameLegacyStreams(_ redis: RedisClient, partitions: Int) throws {
        let renames = (0..<partitions).map { p in
            ["RENAMENX", ClusterLog.legacyStreamKey(p), ClusterLog.streamKey(p)].map { Array(redis: $0) }
        }
        let replies = try redis.pipeline(renames)
        let renamed = replies.filter { $0 == .integer(1) }.count
        if renamed > 0 { logWarning("cluster log: renamed \(renamed) partition streams to their hash-tagged keys (trackhub:{p<n>}:log)") }
    }

    private func connectForStartup() throws -> RedisClient {
        let deadline = systemMonotonicMicros() / 1000 + Self.clusterStartDeadlineMs
        while true {
            do {
                return try RedisClient(seeds: seeds, timeoutMs: 5000)
            } catch {
                if systemMonotonicMicros() / 1000 >= deadline {
                    throw ClusterStartError("--cluster: \(error) (tried for \(Self.clusterStartDeadlineMs / 1000) s)")
                }
                usleep(200_000)  // start-up retry pace while Redis comes up, not synchronisation
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
