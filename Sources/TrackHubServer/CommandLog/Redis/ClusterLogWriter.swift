import Foundation
import TrackHubRedis
import TrackHubSync

/// Appends commands to the cluster log on its own thread and connection.
///
/// Everything queued while one round trip is under way goes out as the next pipeline of
/// XADDs (one write, one read of all replies), so a busy hub makes few round trips. Each
/// append completes with the entry's id or an error; completions run on this thread in the
/// order appends were made. While Redis is unreachable, appends fail at once (after at most
/// one connect attempt per backoff step), so no client waits on a dead Redis.
///
/// With `--cluster-replicas N` (PROTOCOL 15) each pipeline is followed by one `WAIT N 1000`
/// per master it wrote to (not one per entry), then by raising the confirmed position of
/// each partition it wrote (`ReplicaConfirmation`, one round trip): an entry completes
/// successfully only once that many replicas have confirmed it and readers may show it, else
/// with a shortfall error after at most 1 s. `confirm` does the same for entries already in
/// the log (a partition's owner rescuing entries held back too long).
final class ClusterLogWriter: Sendable {
    typealias Completion = @Sendable (Result<StreamID, RedisError>) -> Void

    private struct Item {
        var partition: Int
        var payload: [UInt8]
        var completion: Completion
    }

    private struct State {
        var queue: [Item] = []
        var stopping = false
        var connected = false
        /// Set when the log reader saw Redis go away: the writer's idle connection is dead
        /// too, and finding that out with a client's command would fail that command.
        var reconnectBeforeNextSend = false
        /// Partitions whose entries up to an id are to be confirmed (`confirm`).
        var rescues: [Int: StreamID] = [:]
    }

    /// Past this many queued appends, new ones fail at once (`unavailable`).
    static let maxQueued = 100_000

    private let seeds: [RedisAddress]
    /// `--cluster-replicas`: replicas that must confirm an entry before it completes.
    private let replicasRequired: Int
    private let state = HubMutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)

    init(seeds: [RedisAddress], replicasRequired: Int = 0) {
        self.seeds = seeds
        self.replicasRequired = replicasRequired
    }

    /// How long a `WAIT` waits for the replicas (PROTOCOL 15: `unavailable` after 1 s).
    static let replicaWaitMs = 1000
    private static let shortfallPrefix = "WAIT: "

    /// True for the error of an entry its replicas did not confirm in time (the entry is in
    /// the log all the same, and may take effect).
    static func isReplicaShortfall(_ error: RedisError) -> Bool {
        if case .refused(let message) = error { return message.hasPrefix(shortfallPrefix) }
        return false
    }

    /// True while the last round trip (or connect) succeeded.
    var isConnected: Bool { state.withLock { $0.connected } }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "trackhub-log-writer"
        thread.start()
    }

    func append(partition: Int, payload: [UInt8], completion: @escaping Completion) {
        let accepted = state.withLock { s -> Bool in
            guard !s.stopping, s.queue.count < Self.maxQueued else { return false }
            s.queue.append(Item(partition: partition, payload: payload, completion: completion))
            return true
        }
        if accepted {
            wake.signal()
        } else {
            completion(.failure(.io("too many commands waiting for Redis (\(Self.maxQueued))")))
        }
    }

    /// Confirms a partition's entries up to `id` on the replicas and raises its confirmed
    /// position (with `--cluster-replicas`; nothing otherwise). Done on this thread, soon.
    func confirm(partition: Int, upTo id: StreamID) {
        guard replicasRequired > 0 else { return }
        state.withLock { s in s.rescues[partition] = max(s.rescues[partition] ?? id, id) }
        wake.signal()
    }

    /// The log reader saw Redis go away (or come back): drop the current connection and
    /// make a fresh one, without backoff, for the next batch.
    func reconnectBeforeNextSend() {
        state.withLock { $0.reconnectBeforeNextSend = true }
    }

    /// Fails what is still queued and ends the thread.
    func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
        stopped.wait()
    }

    private func run() {
        var redis = RedisReconnect(seeds: seeds, timeoutMs: 2000)
        while true {
            wake.wait()
            let (batch, rescues, stopping, reconnect) = state.withLock { s -> ([Item], [Int: StreamID], Bool, Bool) in
                let taken = s.queue
                s.queue.removeAll(keepingCapacity: true)
                let rescues = s.rescues
                s.rescues = [:]
                let reconnect = s.reconnectBeforeNextSend && !(taken.isEmpty && rescues.isEmpty)
                if reconnect { s.reconnectBeforeNextSend = false }
                return (taken, rescues, s.stopping, reconnect)
            }
            if reconnect { redis = RedisReconnect(seeds: seeds, timeoutMs: 2000) }
            if !batch.isEmpty { send(batch, over: &redis) }
            if !rescues.isEmpty { rescue(rescues, over: &redis) }
            if stopping {
                let rest = state.withLock { s -> [Item] in
                    let taken = s.queue
                    s.queue.removeAll()
                    return taken
                }
                for item in rest { item.completion(.failure(.io("hub stopping"))) }
                stopped.signal()
                return
            }
        }
    }

    private func send(_ batch: [Item], over redis: inout RedisReconnect) {
        let commands: [[[UInt8]]] = batch.map { item in
            // No MAXLEN: a length knows nothing of the snapshots; the owner trims below them (`LogTrim`).
            [Array(redis: "XADD"), Array(redis: ClusterLog.streamKey(item.partition)), Array(redis: "*"), Array(redis: ClusterLog.entryField), item.payload]
        }
        let replies: [RedisValue]
        do throws(RedisError) {
            // `get` keeps its own backoff; only a broken round trip is a new failure.
            let connection = try redis.get()
            do throws(RedisError) {
                replies = try connection.pipeline(commands)
            } catch {
                redis.noteFailure(error)
                throw error
            }
        } catch {
            state.withLock { $0.connected = false }
            for item in batch { item.completion(.failure(error)) }
            return
        }
        state.withLock { $0.connected = true }
        var shortfalls: [Int: String] = [:]
        if replicasRequired > 0 {
            // Per partition, the last entry this pipeline appended: the confirmed position's new value.
            var appended: [Int: StreamID] = [:]
            for (item, reply) in zip(batch, replies) {
                if let text = reply.text, let id = StreamID(text) { appended[item.partition] = max(appended[item.partition] ?? id, id) }
            }
            shortfalls = confirmOnReplicas(Set(batch.map(\.partition)), upTo: appended, over: &redis)
        }
        for (item, reply) in zip(batch, replies) {
            if let shortfall = shortfalls[item.partition] {
                item.completion(.failure(.refused(Self.shortfallPrefix + shortfall)))
            } else if let text = reply.text, let id = StreamID(text) {
                item.completion(.success(id))
            } else if case .error(let message) = reply {
                item.completion(.failure(.refused(message)))
            } else {
                item.completion(.failure(.refused("unexpected XADD reply \(reply)")))
            }
        }
    }

    /// One `WAIT` per master the batch wrote to, then on each master that confirmed, the raise
    /// of each partition's confirmed position to `upTo`; per partition that fell short, why.
    /// `probe`: write to each partition first (`ReplicaConfirmation.probeKey`), so that the
    /// `WAIT` covers entries other connections appended (a rescue).
    private func confirmOnReplicas(_ partitions: Set<Int>, upTo: [Int: StreamID], probe: Bool = false, over redis: inout RedisReconnect) -> [Int: String] {
        var shortfalls: [Int: String] = [:]
        guard let client = redis.connection else {
            for p in partitions { shortfalls[p] = "no connection to Redis for WAIT" }
            return shortfalls
        }
        var partitionsByMaster: [RedisAddress: [Int]] = [:]
        for p in partitions.sorted() {
            let master: RedisAddress
            do throws(RedisError) {
                master = try client.master(forKey: Array(redis: ClusterLog.streamKey(p)))
            } catch {
                shortfalls[p] = "\(error)"
                continue
            }
            partitionsByMaster[master, default: []].append(p)
        }
        let wait = [Array(redis: "WAIT"), Array(redis: String(replicasRequired)), Array(redis: String(Self.replicaWaitMs))]
        for (master, served) in partitionsByMaster {
            do throws(RedisError) {
                let probes = probe ? served.map { [Array(redis: "INCR"), Array(redis: ReplicaConfirmation.probeKey($0))] } : []
                let confirmed = try client.pipeline(probes + [wait], at: master).last?.int ?? 0
                guard confirmed >= Int64(replicasRequired) else {
                    let why = "\(confirmed) of \(replicasRequired) replicas confirmed the entry within \(Self.replicaWaitMs / 1000) s (--cluster-replicas); it may still take effect: a resent fix is then a duplicate"
                    for p in served { shortfalls[p] = why }
                    continue
                }
                let raises = served.compactMap { p in upTo[p].map { ReplicaConfirmation.raise(p, to: $0) } }
                let replies = raises.isEmpty ? [] : try client.pipeline(raises, at: master)
                if let failed = replies.first(where: { if case .error = $0 { true } else { false } }) {
                    for p in served { shortfalls[p] = "the confirmed position was not raised: \(failed)" }
                }
            } catch {
                redis.noteFailure(error)
                for p in served { shortfalls[p] = "\(error)" }
            }
        }
        return shortfalls
    }

    /// Confirms entries already in the log (`confirm`); what falls short is asked for again
    /// by the partition's owner while the entries stay held back.
    private func rescue(_ upTo: [Int: StreamID], over redis: inout RedisReconnect) {
        do throws(RedisError) { _ = try redis.get() } catch { return }
        _ = confirmOnReplicas(Set(upTo.keys), upTo: upTo, probe: true, over: &redis)
    }
}
