import Foundation
import TrackHubRedis

/// Cluster mode: watching the partitions' log lengths (PROTOCOL 15, "Trimming"). The log is
/// trimmed only below snapshots (`LogTrim`), so a partition whose snapshots stall grows
/// without bound: every node reads every stream's length (`XLEN`, one pipeline, off the
/// service thread) at most every `lengthsEveryMs`, exports it as
/// `trackhub_cluster_log_entries{partition}`, warns once when one passes
/// `ClusterLog.warnEntriesPerPartition`, and answers `/healthz` `degraded` while one does.
extension RedisCommandLog {
    /// The longest pause between two reads of the lengths (shorter when snapshots are more
    /// frequent, so what a snapshot trimmed shows within one interval).
    static let lengthsEveryMs: Int64 = 10_000

    /// Starts a read of the lengths if one is due (housekeeping).
    func readLogLengthsIfDue(now: Int64) {
        let every = min(Self.lengthsEveryMs, services.config.clusterSnapshotIntervalMs)
        guard !state.lengthsInFlight, state.lengthsReadAt == .min || now - state.lengthsReadAt >= every else { return }
        state.lengthsReadAt = now
        state.lengthsInFlight = true
        let partitions = state.partitions
        DispatchQueue.global(qos: .utility).async { [self] in
            var lengths: [Int64]?
            do {
                let redis = try RedisClient(seeds: seeds, timeoutMs: 5000)
                let replies = try redis.pipeline((0..<partitions).map { [Array(redis: "XLEN"), Array(redis: ClusterLog.streamKey($0))] })
                lengths = replies.map { $0.int ?? -1 }
            } catch {
                lengths = nil  // Redis unreachable: the reader says so already; the last lengths stay
            }
            let read = lengths
            services.inbox.run { [self] in
                state.lengthsInFlight = false
                if let read { noteLogLengths(read) }
            }
        }
    }

    /// Keeps the lengths read, warning once per partition as it passes the limit.
    func noteLogLengths(_ lengths: [Int64]) {
        let limit = Int64(ClusterLog.warnEntriesPerPartition)
        for (p, n) in lengths.enumerated() where state.logEntries.indices.contains(p) {
            if n > limit && state.logEntries[p] <= limit {
                logWarning("cluster partition \(p): its log holds \(n) entries, more than \(limit): its snapshots have stalled (the log is trimmed only below them); see trackhub_cluster_snapshots_written_total")
            }
            state.logEntries[p] = n
        }
    }

    /// Some partition's log is past `ClusterLog.warnEntriesPerPartition` (`/healthz` `degraded`).
    var hasOversizedLog: Bool { state.logEntries.contains { $0 > Int64(ClusterLog.warnEntriesPerPartition) } }
}
