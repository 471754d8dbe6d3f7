import Foundation
import TrackHubRedis
import TrackHubSync

/// What one read of the log brought: entries in log order per partition, and the watermark.
struct ClusterReadBatch: Sendable {
    struct Entry: Sendable {
        var partition: Int
        var id: StreamID
        var payload: [UInt8]
    }
    var entries: [Entry]
    /// Per partition, the last id read (also of entries skipped as not ours).
    var lastIDs: [Int: StreamID]
    /// Every entry whose id's ms is below this has been read (in this batch or an earlier one).
    var watermark: Int64
    /// The `TIME` of this read: every partition not in `full` has been read up to it.
    var time: Int64 = .min
    /// Partitions whose read brought a full `COUNT` (more may wait), with the ms below which
    /// they are read.
    var full: [Int: Int64] = [:]
    /// Per partition, the reset epoch the read was made in (`ClusterLogReader.reset`): entries
    /// read before a partition was reset to an older position are not part of its new start.
    var epochs: [Int] = []
    /// The number of the read round that brought this batch (`ClusterLogReader.roundsStarted`):
    /// its pipelines were sent after every request that saw a lower count, so a partition it
    /// read to the end has every entry appended before those requests arrived.
    var round = 0
    /// With `--cluster-replicas`: per partition, the last entry read but held back as not yet
    /// confirmed by the replicas (`ReplicaConfirmation`).
    var held: [Int: StreamID] = [:]

    /// This batch and one read from another master in the same round: the watermark and
    /// time are the lower (each master stamps its own streams' entries).
    func merged(with other: ClusterReadBatch) -> ClusterReadBatch {
        var out = self
        out.entries += other.entries
        out.lastIDs.merge(other.lastIDs) { max($0, $1) }
        out.watermark = min(watermark, other.watermark)
        out.time = min(time, other.time)
        out.full.merge(other.full) { min($0, $1) }
        out.held.merge(other.held) { max($0, $1) }
        return out
    }
}

/// Tails every partition of the cluster log on its own thread and connection.
///
/// Each round is one pipeline per master: `TIME`, then `XREAD COUNT n` of the partitions it
/// serves from the last ids read (`readOnce`). Redis runs them back to back, so every entry
/// added before the `TIME` answer is in this reply or an earlier one: `TIME` (the lowest
/// over the masters of a Redis Cluster) is the watermark that lets a node tick the shared
/// grid without ever missing an entry before it (docs/cluster.md).
///
/// The read does not block in Redis: a blocked XREAD's timeout is only checked `hz` times a
/// second (10 by default), which held the watermark 100–200 ms behind and every frame with
/// it. Instead, a read that brings nothing is followed by a pause of `idlePauseMicros`; so an
/// idle node costs Redis about 400 small round trips a second, and the watermark stays
/// within a few ms of the clock.
///
/// At most two batches wait for the hub (`consumed()`): a hub that falls behind slows the
/// reader, never the other way round, and memory stays bounded.
final class ClusterLogReader: Sendable {
    static let entriesPerRead = 1000
    static let idlePauseMicros: UInt32 = 2000

    private let seeds: [RedisAddress]
    private let partitions: Int
    private let keys: [[UInt8]]
    private let deliver: @Sendable (ClusterReadBatch) -> Void
    private let connectionChanged: @Sendable (Bool, String?) -> Void
    /// `--cluster-replicas` > 0: entries past their partition's confirmed position are held
    /// back (`ReplicaConfirmation`).
    private let gated: Bool
    /// Batches the hub may hold at once. Starts at 0 and is signalled twice in `init`:
    /// libdispatch traps when a semaphore is freed below its initial value.
    private let credits = DispatchSemaphore(value: 0)
    private let positions: HubMutex<(ids: [StreamID], epochs: [Int])>
    private let stopping = HubMutex(false)
    private let stopped = DispatchSemaphore(value: 0)
    /// Read rounds begun so far (see `roundsStarted`).
    private let rounds = HubMutex(0)

    /// How many read rounds have begun. A request that reads n here arrived before round n + 1
    /// sent its `XREAD`s, so once a batch of round n + 1 or later has read a partition to its
    /// end, everything appended to that partition before the request is in hand: "the log up
    /// to the request's arrival" (PROTOCOL 15, late joiners) without reading the stream's last
    /// id or trusting any clock.
    var roundsStarted: Int { rounds.withLock { $0 } }

    /// - Parameters:
    ///   - after: per partition, the last id already applied (`StreamID.zero`: from the start).
    ///   - deliver: called on the reader's thread with each batch; call `consumed()` once applied.
    ///   - connectionChanged: called when the connection comes up (true) or breaks (false, why).
    ///   - gated: hold back entries the replicas have not confirmed (`ReplicaConfirmation`).
    init(
        seeds: [RedisAddress], partitions: Int, after: [StreamID], gated: Bool = false,
        deliver: @escaping @Sendable (ClusterReadBatch) -> Void,
        connectionChanged: @escaping @Sendable (Bool, String?) -> Void
    ) {
        self.seeds = seeds
        self.partitions = partitions
        self.keys = (0..<partitions).map { Array(redis: ClusterLog.streamKey($0)) }
        self.positions = HubMutex((after, Array(repeating: 0, count: partitions)))
        self.deliver = deliver
        self.connectionChanged = connectionChanged
        self.gated = gated
        credits.signal()
        credits.signal()
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "trackhub-log-reader"
        thread.start()
    }

    /// The hub applied a batch: the reader may hand over another.
    func consumed() { credits.signal() }

    /// Reads `partition` again from just after `id` (when that is before where the reader is),
    /// in a new `epoch`: a node that starts applying a partition from its owner's snapshot
    /// replays the log after it (docs/cluster.md, "Tailing on demand").
    func reset(partition: Int, after id: StreamID, epoch: Int) {
        positions.withLock { p in
            if id < p.ids[partition] { p.ids[partition] = id }
            p.epochs[partition] = epoch
        }
    }

    func stop() {
        stopping.withLock { $0 = true }
        credits.signal()
        stopped.wait()
    }

    private func run() {
        var redis = RedisReconnect(seeds: seeds, timeoutMs: 2000)
        var wasUp: Bool?
        while !stopping.withLock({ $0 }) {
            let (after, epochs) = positions.withLock { ($0.ids, $0.epochs) }
            // Counted before the pipelines go out (see `roundsStarted`).
            let round = rounds.withLock { count in
                count += 1
                return count
            }
            var batch: ClusterReadBatch
            do {
                let client = try redis.get()
                do throws(RedisError) {
                    guard let read = try readOnce(client, after: after) else {
                        // A slot moved (a reshard): the map is read again; so is the log, at the poll pace.
                        try client.refreshSlots()
                        usleep(Self.idlePauseMicros)
                        continue
                    }
                    batch = read
                } catch {
                    if case .io = error { redis.noteFailure(error) }  // `get` keeps its own backoff; this is a new failure
                    throw error
                }
                batch.epochs = epochs
                batch.round = round
            } catch {
                if wasUp != false { connectionChanged(false, "\(error)") }
                wasUp = false
                // Wait out the backoff on the stop flag rather than spinning on connect.
                _ = stoppedProbe(milliseconds: 100)
                continue
            }
            if wasUp != true { connectionChanged(true, nil) }
            wasUp = true
            positions.withLock { p in
                // Not past a reset made while this read was under way (its epoch moved on).
                for (partition, id) in batch.lastIDs where p.epochs[partition] == epochs[partition] && p.ids[partition] < id {
                    p.ids[partition] = id
                }
            }
            credits.wait()
            if stopping.withLock({ $0 }) { break }
            let idle = batch.entries.isEmpty
            deliver(batch)
            if idle { usleep(Self.idlePauseMicros) }  // poll pace when the log is quiet (see above)
        }
        stopped.signal()
    }

    /// One read of every partition: per master, one pipeline of `TIME` then the reads of the
    /// partitions it serves (Redis runs them back to back, so its `TIME` bounds what they
    /// missed). On one Redis that is one `XREAD` of every stream; in a Redis Cluster, where
    /// one command may only name keys of one slot, one `XREAD` per partition. The batch's
    /// watermark and time are the lowest over the masters (each stamps its own entries).
    /// Nil when a read was redirected (`MOVED`/`ASK`: its slot is moving to another master).
    private func readOnce(_ client: RedisClient, after: [StreamID]) throws(RedisError) -> ClusterReadBatch? {
        var byMaster: [(master: RedisAddress, partitions: [Int])] = []
        for p in 0..<partitions {
            let master = try client.master(forKey: keys[p])
            if let i = byMaster.firstIndex(where: { $0.master == master }) {
                byMaster[i].partitions.append(p)
            } else {
                byMaster.append((master, [p]))
            }
        }
        var merged: ClusterReadBatch?
        for (master, served) in byMaster {
            let reads: [[[UInt8]]]
            if client.isCluster {
                reads = served.map { xread(keys: [keys[$0]], after: [after[$0]]) }
            } else {
                reads = [xread(keys: served.map { keys[$0] }, after: served.map { after[$0] })]
            }
            // The confirmed positions are read before the streams: an entry at or below one is on the replicas.
            let confirmations = gated ? served.map { [Array(redis: "GET"), Array(redis: ReplicaConfirmation.confirmedKey($0))] } : []
            let replies = try client.pipeline([[Array(redis: "TIME")]] + confirmations + reads, at: master)
            let readReplies = Array(replies.dropFirst(1 + confirmations.count))
            if readReplies.contains(where: Self.isRedirect) || replies.dropFirst().prefix(confirmations.count).contains(where: Self.isRedirect) { return nil }
            var batch = try Self.parse(time: replies[0], reads: readReplies, partitions: partitions)
            if gated {
                var confirmed: [Int: StreamID] = [:]
                for (i, p) in served.enumerated() { confirmed[p] = ReplicaConfirmation.position(in: replies[1 + i]) }
                ReplicaConfirmation.holdUnconfirmed(&batch, confirmed: confirmed, after: after)
            }
            merged = merged.map { $0.merged(with: batch) } ?? batch
        }
        return merged
    }

    private func xread(keys: [[UInt8]], after: [StreamID]) -> [[UInt8]] {
        [Array(redis: "XREAD"), Array(redis: "COUNT"), Array(redis: String(Self.entriesPerRead)), Array(redis: "STREAMS")]
            + keys + after.map { Array(redis: $0.description) }
    }

    private static func isRedirect(_ reply: RedisValue) -> Bool {
        if case .error(let message) = reply { return message.hasPrefix("MOVED ") || message.hasPrefix("ASK ") }
        return false
    }

    /// Waits up to `milliseconds`, returning early (true) when asked to stop.
    private func stoppedProbe(milliseconds: Int) -> Bool {
        let deadline = systemMonotonicMicros() / 1000 + Int64(milliseconds)
        while systemMonotonicMicros() / 1000 < deadline {
            if stopping.withLock({ $0 }) { return true }
            usleep(10_000)
        }
        return false
    }

    /// Turns `TIME` and `XREAD` replies into a batch. A partition that returned a full
    /// `COUNT` may have more entries waiting: the watermark then stops at its last entry's ms.
    static func parse(time: RedisValue, read: RedisValue, partitions: Int) throws(RedisError) -> ClusterReadBatch {
        try parse(time: time, reads: [read], partitions: partitions)
    }

    /// `parse` for a `TIME` followed by several `XREAD`s on one master.
    static func parse(time: RedisValue, reads: [RedisValue], partitions: Int) throws(RedisError) -> ClusterReadBatch {
        guard let parts = time.elements, parts.count == 2, let seconds = parts[0].int, let micros = parts[1].int else {
            throw .refused("unexpected TIME reply \(time)")
        }
        // TIME is taken before XREAD; minus one ms so an entry in the same ms as TIME counts as unread.
        let time = seconds * 1000 + micros / 1000 - 1
        var watermark = time
        var full: [Int: Int64] = [:]
        var entries: [ClusterReadBatch.Entry] = []
        var lastIDs: [Int: StreamID] = [:]
        for read in reads {
        if case .error(let message) = read { throw .refused(message) }
        for stream in read.elements ?? [] {
            guard let pair = stream.elements, pair.count == 2, let key = pair[0].text,
                let partition = ClusterLog.partition(ofStreamKey: key, partitions: partitions),
                let items = pair[1].elements
            else { throw .refused("unexpected XREAD reply") }
            var last: StreamID?
            for item in items {
                guard let fields = item.elements, fields.count == 2, let idText = fields[0].text, let id = StreamID(idText) else {
                    throw .refused("unexpected stream entry")
                }
                last = id
                let values = fields[1].elements ?? []
                var payload: [UInt8]?
                var i = 0
                while i + 1 < values.count {
                    if values[i].text == ClusterLog.entryField { payload = values[i + 1].bytes }
                    i += 2
                }
                // An entry without our field (written by something else) is skipped, not fatal.
                if let payload { entries.append(.init(partition: partition, id: id, payload: payload)) }
            }
            if let last { lastIDs[partition] = last }
            if items.count >= entriesPerRead, let last {
                watermark = min(watermark, last.ms - 1)
                full[partition] = last.ms - 1
            }
        }
        }
        return ClusterReadBatch(entries: entries, lastIDs: lastIDs, watermark: watermark, time: time, full: full)
    }
}
