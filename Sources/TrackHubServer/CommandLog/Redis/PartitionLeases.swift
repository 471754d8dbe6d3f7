import Foundation
import TrackHubRedis
import TrackHubSync

/// Partition ownership (PROTOCOL 15) on a thread and connection of its own: each partition has
/// a lease key in Redis (`trackhub:{p<p>}:lease`, value the owner's node id), which its owner
/// renews every round; a key not renewed lapses and another hub takes it. `LeasePacing` sets
/// the key's life (half the lease) and the rounds (a tenth of it), so a dead hub's partitions
/// are taken within the lease, and `LeaseChoice` takes a dead hub's partitions in one round.
///
/// Rebalancing without a thundering herd: every hub announces itself in `trackhub:hubs` (a
/// sorted set scored by when its announcement lapses), so each knows the live hubs and every
/// lease's holder from one pipelined read per round. A hub under its fair share `ceil(N/K)`
/// takes the partitions a dead hub held up to it at once, and at most `maxTakesPerRound` other
/// free partitions, picked at random, per round; a hub over
/// it releases one per round; a hub at it releases one only while some live hub has fewer
/// than `floor(N/K)` and no partition is free. Rounds are jittered (±20 %) so hubs started
/// together do not move in step. Within three leases of a hub joining, every live hub owns
/// between half and twice its share.
///
/// A round that fails (Redis unreachable) reports nothing owned: the node stops acting as an
/// owner at once, before its leases can lapse and be taken by another. A round that stalls
/// reports nothing: each report carries the deadline (`Round.validUntil`) after which the node
/// stops acting as the owner of what it reported unless a later report moves it.
final class PartitionLeases: Sendable {
    static let hubsKey = "trackhub:hubs"
    static let maxTakesPerRound = 2
    static func leaseKey(_ partition: Int) -> String { "trackhub:{p\(partition)}:lease" }

    static let renewScript = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end"
    static let releaseScript = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end"

    /// What one round found.
    struct Round: Sendable {
        /// Partitions this node holds after the round; nil: the round failed (own nothing).
        var owned: Set<Int>?
        var liveHubs: Int
        /// Monotonic ms (`systemMonotonicMicros() / 1000`) until which `owned` may be acted on:
        /// the round's start plus `LeasePacing.fenceMs`, before any of its keys can lapse.
        var validUntil: Int64 = .max
    }

    private let seeds: [RedisAddress]
    private let nodeID: String
    private let partitions: Int
    /// The key life, round pause, fence and timeout derived from `--cluster-lease`.
    private let pacing: LeasePacing
    private let report: @Sendable (Round) -> Void
    private let stopping = HubMutex(false)
    private let stopped = DispatchSemaphore(value: 0)

    init(seeds: [RedisAddress], nodeID: String, partitions: Int, leaseMs: Int64, report: @escaping @Sendable (Round) -> Void) {
        self.seeds = seeds
        self.nodeID = nodeID
        self.partitions = partitions
        self.pacing = LeasePacing(leaseMs: leaseMs)
        self.report = report
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "trackhub-leases"
        thread.start()
    }

    /// Stops the thread, giving the leases up (a clean stop: the others take over at once).
    func stop() {
        stopping.withLock { $0 = true }
        stopped.wait()
    }

    private func run() {
        var redis = RedisReconnect(seeds: seeds, timeoutMs: pacing.timeoutMs)
        var owned = Set<Int>()
        var previousHolders: [String?] = []
        var generator = SystemRandomNumberGenerator()
        while !stopping.withLock({ $0 }) {
            do {
                let connection = try redis.get()
                do throws(RedisError) {
                    let round = try self.round(connection, owned: &owned, previousHolders: &previousHolders, random: &generator)
                    report(round)
                } catch {
                    redis.noteFailure(error)
                    throw error
                }
            } catch {
                owned = []
                report(Round(owned: nil, liveHubs: 0))
            }
            let period = Double(pacing.roundMs)
            let pause = period * Double.random(in: 0.8...1.2, using: &generator)
            if waitOrStop(milliseconds: Int64(pause)) { break }
        }
        if let connection = try? redis.get() {
            var commands: [[[UInt8]]] = owned.map { ["EVAL", Self.releaseScript, "1", Self.leaseKey($0), nodeID].map { Array(redis: $0) } }
            commands.append(["ZREM", Self.hubsKey, nodeID].map { Array(redis: $0) })
            _ = try? connection.pipeline(commands)
        }
        stopped.signal()
    }

    /// One round: announce, read every lease, renew ours, then take or release at most a few.
    private func round(
        _ redis: RedisClient, owned: inout Set<Int>, previousHolders: inout [String?], random: inout SystemRandomNumberGenerator
    ) throws(RedisError) -> Round {
        // Before anything is sent: every renewal and take of this round runs in Redis after it.
        let started = systemMonotonicMicros() / 1000
        let now = systemWallClockMillis()
        let ttl = String(pacing.keyTTLMs)
        var read: [[[UInt8]]] = [
            ["ZADD", Self.hubsKey, String(now + pacing.keyTTLMs), nodeID].map { Array(redis: $0) },
            ["ZREMRANGEBYSCORE", Self.hubsKey, "-inf", String(now)].map { Array(redis: $0) },
            ["ZRANGE", Self.hubsKey, "0", "-1"].map { Array(redis: $0) },
        ]
        for p in 0..<partitions { read.append([Array(redis: "GET"), Array(redis: Self.leaseKey(p))]) }
        let replies = try redis.pipeline(read)
        if let bad = replies.first(where: { if case .error = $0 { return true } else { return false } }) {
            throw .refused("\(bad)")
        }
        let live = Set((replies[2].elements ?? []).compactMap(\.text))
        var holders: [String?] = (0..<partitions).map { replies[3 + $0].text }
        // Ours: renew. A lease that lapsed meanwhile and was taken is no longer ours.
        let mine = (0..<partitions).filter { holders[$0] == nodeID }
        if !mine.isEmpty {
            let renewed = try redis.pipeline(mine.map { ["EVAL", Self.renewScript, "1", Self.leaseKey($0), nodeID, ttl].map { Array(redis: $0) } })
            for (p, reply) in zip(mine, renewed) where reply.int != 1 { holders[p] = nil }
        }
        owned = Set((0..<partitions).filter { holders[$0] == nodeID })
        let hubs = max(1, live.union([nodeID]).count)
        let high = (partitions + hubs - 1) / hubs
        let low = partitions / hubs
        let free = (0..<partitions).filter { holders[$0] == nil }
        defer { previousHolders = holders }
        if owned.count < high && !free.isEmpty {
            let choice = LeaseChoice(
                live: live.union([nodeID]), me: nodeID, previousHolders: previousHolders, holders: holders,
                owned: owned.count, high: high, capPerRound: Self.maxTakesPerRound)
            let picks = choice.takes(using: &random)
            let taken = try redis.pipeline(picks.map { ["SET", Self.leaseKey($0), nodeID, "NX", "PX", ttl].map { Array(redis: $0) } })
            for (p, reply) in zip(picks, taken) where reply.text == "OK" {
                owned.insert(p)
                holders[p] = nodeID
            }
        } else {
            var counts: [String: Int] = [:]
            for hub in live { counts[hub] = 0 }
            for case let holder? in holders { counts[holder, default: 0] += 1 }
            let starved = counts.values.contains { $0 < low }
            if owned.count > high || (owned.count == high && high > low && starved && free.isEmpty), let give = owned.randomElement(using: &random) {
                _ = try redis.command(["EVAL", Self.releaseScript, "1", Self.leaseKey(give), nodeID].map { Array(redis: $0) })
                owned.remove(give)
                holders[give] = nil  // given up, not lost: not an orphan to take back next round
            }
        }
        return Round(owned: owned, liveHubs: hubs, validUntil: started + pacing.fenceMs)
    }

    private func waitOrStop(milliseconds: Int64) -> Bool {
        let deadline = systemMonotonicMicros() / 1000 + milliseconds
        while systemMonotonicMicros() / 1000 < deadline {
            if stopping.withLock({ $0 }) { return true }
            usleep(20_000)
        }
        return false
    }
}
