import Foundation
import TrackHubRedis
import TrackHubSync

/// Partition ownership (PROTOCOL 15) on a thread and connection of its own: each partition has
/// a lease key in Redis (`trackhub:{p<p>}:lease`, value the owner's node id, `PX` the lease),
/// which its owner renews every fifth of the lease; a lease not renewed lapses and another
/// hub takes it.
///
/// Rebalancing without a thundering herd: every hub announces itself in `trackhub:hubs` (a
/// sorted set scored by when its announcement lapses), so each knows the live hubs and every
/// lease's holder from one pipelined read per round. A hub under its fair share `ceil(N/K)`
/// takes at most `maxTakesPerRound` free partitions, picked at random, per round; a hub over
/// it releases one per round; a hub at it releases one only while some live hub has fewer
/// than `floor(N/K)` and no partition is free. Rounds are jittered (±20 %) so hubs started
/// together do not move in step. Within three leases of a hub joining, every live hub owns
/// between half and twice its share.
///
/// A round that fails (Redis unreachable) reports nothing owned: the node stops acting as an
/// owner at once, before its leases can lapse and be taken by another.
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
    }

    private let seeds: [RedisAddress]
    private let nodeID: String
    private let partitions: Int
    private let leaseMs: Int64
    private let report: @Sendable (Round) -> Void
    private let stopping = HubMutex(false)
    private let stopped = DispatchSemaphore(value: 0)

    init(seeds: [RedisAddress], nodeID: String, partitions: Int, leaseMs: Int64, report: @escaping @Sendable (Round) -> Void) {
        self.seeds = seeds
        self.nodeID = nodeID
        self.partitions = partitions
        self.leaseMs = leaseMs
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
        var redis = RedisReconnect(seeds: seeds, timeoutMs: Int(min(leaseMs / 2, 2000)))
        var owned = Set<Int>()
        var generator = SystemRandomNumberGenerator()
        while !stopping.withLock({ $0 }) {
            do {
                let connection = try redis.get()
                do throws(RedisError) {
                    let round = try self.round(connection, owned: &owned, random: &generator)
                    report(round)
                } catch {
                    redis.noteFailure(error)
                    throw error
                }
            } catch {
                owned = []
                report(Round(owned: nil, liveHubs: 0))
            }
            let period = Double(leaseMs) / 5
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
    private func round(_ redis: RedisClient, owned: inout Set<Int>, random: inout SystemRandomNumberGenerator) throws(RedisError) -> Round {
        let now = systemWallClockMillis()
        var read: [[[UInt8]]] = [
            ["ZADD", Self.hubsKey, String(now + leaseMs), nodeID].map { Array(redis: $0) },
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
            let renewed = try redis.pipeline(mine.map { ["EVAL", Self.renewScript, "1", Self.leaseKey($0), nodeID, String(leaseMs)].map { Array(redis: $0) } })
            for (p, reply) in zip(mine, renewed) where reply.int != 1 { holders[p] = nil }
        }
        owned = Set((0..<partitions).filter { holders[$0] == nodeID })
        let hubs = max(1, live.union([nodeID]).count)
        let high = (partitions + hubs - 1) / hubs
        let low = partitions / hubs
        let free = (0..<partitions).filter { holders[$0] == nil }
        if owned.count < high && !free.isEmpty {
            let want = min(Self.maxTakesPerRound, high - owned.count)
            let picks = Array(free.shuffled(using: &random).prefix(want))
            let taken = try redis.pipeline(picks.map { ["SET", Self.leaseKey($0), nodeID, "NX", "PX", String(leaseMs)].map { Array(redis: $0) } })
            for (p, reply) in zip(picks, taken) where reply.text == "OK" { owned.insert(p) }
        } else {
            var counts: [String: Int] = [:]
            for hub in live { counts[hub] = 0 }
            for case let holder? in holders { counts[holder, default: 0] += 1 }
            let starved = counts.values.contains { $0 < low }
            if owned.count > high || (owned.count == high && high > low && starved && free.isEmpty), let give = owned.randomElement(using: &random) {
                _ = try redis.command(["EVAL", Self.releaseScript, "1", Self.leaseKey(give), nodeID].map { Array(redis: $0) })
                owned.remove(give)
            }
        }
        return Round(owned: owned, liveHubs: hubs)
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
