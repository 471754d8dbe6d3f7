import Foundation
import TrackHubRedis
import TrackHubSync

/// Which trips are watched on the other hubs of a cluster (PROTOCOL 18: "in cluster mode on
/// any hub, known to the others within 5 s"), so that the hub holding a courier's connection
/// asks it for fixes as often as a subscriber anywhere needs them.
///
/// Each hub writes the trips it watches to its own key, `trackhub:watched:<node>` (a 16-digit
/// hex version and a newline, then a trip id a line), expiring after `ttlMs` unless renewed,
/// so a dead hub's set goes by itself; a hub that stops cleanly deletes it. Each round a hub
/// reads the live hubs from `trackhub:hubs` (the partition leases' announcements), then the
/// first 17 bytes of each other hub's key, and the whole key only when its version changed:
/// an unchanged cluster costs one small read per hub per round, however many trips it watches.
///
/// Timing: the hub hands its set over at every housekeeping (every 500 ms), which wakes this
/// thread; a round also runs at least once a second. A subscriber on one hub is thus known to
/// the others within about 1.5 s (their next round, then their next housekeeping).
///
/// Threads: `exchange` (service thread) hands over this hub's set and takes the others'
/// latest; the round trips run on this class's own thread and connection. Bounds: one cached
/// set per live hub (each at most that hub's subscriptions).
final class ClusterWatchers: Sendable {
    /// The keys' common start; a hub's key ends with its node id.
    static let keyPrefix = "trackhub:watched:"
    /// The key holding `node`'s watched trips.
    static func key(_ node: String) -> String { keyPrefix + node }
    /// How long a hub's set outlives its last renewal (a round renews it at least every second).
    static let ttlMs: Int64 = 5000
    /// The version line at the head of a hub's key: 16 hex digits and a newline.
    static let headerBytes = 17

    /// What the service thread and this class's thread share, behind `shared`'s lock.
    private struct Shared {
        /// This hub's latest set and its version, as `exchange` last gave it.
        var here: (trips: Set<String>, version: UInt64) = ([], 0)
        var latest = CadenceService.Elsewhere(trips: [], version: 0)
        var stopping = false
    }

    private let seeds: [RedisAddress]
    private let nodeID: String
    private let shared = HubMutex(Shared())
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)

    init(seeds: [RedisAddress], nodeID: String) {
        self.seeds = seeds
        self.nodeID = nodeID
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "trackhub-watched"
        thread.start()
    }

    /// Stops the thread; this hub's key is deleted (its subscribers are gone).
    func stop() {
        shared.withLock { $0.stopping = true }
        wake.signal()
        stopped.wait()
    }

    /// Hands over this hub's watched trips (`version` changes whenever they do) and returns
    /// the other hubs' as last read.
    func exchange(here: Set<String>, version: UInt64) -> CadenceService.Elsewhere {
        let latest = shared.withLock { s -> CadenceService.Elsewhere in
            if s.here.version != version { s.here = (here, version) }
            return s.latest
        }
        wake.signal()
        return latest
    }

    private func run() {
        var redis = RedisReconnect(seeds: seeds, timeoutMs: 2000)
        var written: UInt64?  // the version of this hub's key in Redis; nil: not known
        var others: [String: (version: String, trips: Set<String>)] = [:]
        var unionVersion: UInt64 = 0
        while true {
            _ = wake.wait(timeout: .now() + 1)
            let (here, stopping) = shared.withLock { ($0.here, $0.stopping) }
            if stopping { break }
            do {
                let connection = try redis.get()
                do throws(RedisError) {
                    try publish(here, written: &written, connection)
                    if try read(connection, into: &others) {
                        unionVersion &+= 1
                        let union = others.values.reduce(into: Set<String>()) { $0.formUnion($1.trips) }
                        shared.withLock { $0.latest = CadenceService.Elsewhere(trips: union, version: unionVersion) }
                    }
                } catch {
                    redis.noteFailure(error)
                    written = nil
                }
            } catch {
                continue  // `get` keeps its backoff; the hub keeps the last read meanwhile
            }
        }
        if let connection = try? redis.get() {
            _ = try? connection.command([Array(redis: "DEL"), Array(redis: Self.key(nodeID))])
        }
        stopped.signal()
    }

    /// Writes this hub's set when its version changed (deletes the key for an empty one),
    /// else renews its expiry.
    private func publish(_ here: (trips: Set<String>, version: UInt64), written: inout UInt64?, _ redis: RedisClient) throws(RedisError) {
        let key = Array(redis: Self.key(nodeID))
        if written == here.version {
            if !here.trips.isEmpty {
                _ = try redis.command([Array(redis: "PEXPIRE"), key, Array(redis: String(Self.ttlMs))])
            }
            return
        }
        if here.trips.isEmpty {
            _ = try redis.command([Array(redis: "DEL"), key])
        } else {
            _ = try redis.command([Array(redis: "SET"), key, Self.encode(here.trips, version: here.version), Array(redis: "PX"), Array(redis: String(Self.ttlMs))])
        }
        written = here.version
    }

    /// Reads the other live hubs' sets into `others` (whole only when a version changed).
    /// True when what they watch changed.
    private func read(_ redis: RedisClient, into others: inout [String: (version: String, trips: Set<String>)]) throws(RedisError) -> Bool {
        let hubs = try redis.command(["ZRANGE", PartitionLeases.hubsKey, "0", "-1"].map { Array(redis: $0) })
        let live = (hubs.elements ?? []).compactMap(\.text).filter { $0 != nodeID }
        var changed = false
        for gone in others.keys where !live.contains(gone) {
            others[gone] = nil
            changed = true
        }
        guard !live.isEmpty else { return changed }
        let headers = try redis.pipeline(live.map { ["GETRANGE", Self.key($0), "0", String(Self.headerBytes - 1)].map { Array(redis: $0) } })
        var stale: [String] = []
        for (node, reply) in zip(live, headers) {
            let version = reply.text ?? ""
            if version.isEmpty {
                if others.removeValue(forKey: node) != nil { changed = true }  // no key: watches nothing
            } else if others[node]?.version != version {
                stale.append(node)
            }
        }
        guard !stale.isEmpty else { return changed }
        let bodies = try redis.pipeline(stale.map { [Array(redis: "GET"), Array(redis: Self.key($0))] })
        for (node, reply) in zip(stale, bodies) {
            guard let bytes = reply.bytes, bytes.count >= Self.headerBytes else {
                others[node] = nil
                changed = true
                continue
            }
            let version = String(decoding: bytes.prefix(Self.headerBytes), as: UTF8.self)
            others[node] = (version, Self.decode(bytes))
            changed = true
        }
        return changed
    }

    /// The key's value: the version line, then one trip id a line (ids have no newline).
    static func encode(_ trips: Set<String>, version: UInt64) -> [UInt8] {
        let hex = String(version, radix: 16)
        var out = String(repeating: "0", count: max(0, 16 - hex.count)) + hex + "\n"
        out.reserveCapacity(out.utf8.count + trips.count * 24)
        for trip in trips { out += trip + "\n" }
        return Array(out.utf8)
    }

    /// The trip ids of a key's value (its version line skipped).
    static func decode(_ bytes: [UInt8]) -> Set<String> {
        var trips = Set<String>()
        for line in bytes.dropFirst(headerBytes).split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            trips.insert(String(decoding: line, as: UTF8.self))
        }
        return trips
    }
}
