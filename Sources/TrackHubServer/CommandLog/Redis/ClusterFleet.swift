import Foundation
import TrackHubCore
import TrackHubRedis
import TrackHubSync

/// The fleet view in a cluster (PROTOCOL 15: "the fleet view on any hub shows the whole
/// fleet"): each partition's owner publishes its trips' markers at every fleet tick, one key
/// per partition (`trackhub:{p<p>}:fleet`, a line `id lat lon status bearing` per rider,
/// expiring after `ttlMs` so a dead owner's markers go), and every hub reads all partitions'
/// latest and builds its index from them. A hub applies only some partitions, but its fleet
/// view counts every rider, at most one fleet tick plus one round trip old.
///
/// Threads: `exchange` (service thread) hands over what to publish and takes the latest read;
/// the round trips run on this class's own thread and connection.
final class ClusterFleet: Sendable {
    static func key(_ partition: Int) -> String { "trackhub:{p\(partition)}:fleet" }

    private struct Shared {
        var publish: [Int: [FleetMember]]?
        var latest: [Int: [FleetMember]] = [:]
        var stopping = false
    }

    private let seeds: [RedisAddress]
    private let partitions: Int
    private let ttlMs: Int64
    private let shared = HubMutex(Shared())
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)

    init(seeds: [RedisAddress], partitions: Int, ttlMs: Int64) {
        self.seeds = seeds
        self.partitions = partitions
        self.ttlMs = ttlMs
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "trackhub-fleet"
        thread.start()
    }

    func stop() {
        shared.withLock { $0.stopping = true }
        wake.signal()
        stopped.wait()
    }

    /// Publishes `publish` (the owned partitions' markers, an empty list for an owned
    /// partition without riders) and returns every partition's latest: those given here, the
    /// others as last read.
    func exchange(publish: [Int: [FleetMember]]) -> [FleetMember] {
        let latest = shared.withLock { s -> [Int: [FleetMember]] in
            s.publish = publish
            return s.latest
        }
        wake.signal()
        var all: [FleetMember] = []
        for (p, members) in latest where publish[p] == nil { all += members }
        for members in publish.values { all += members }
        return all
    }

    private func run() {
        var redis = RedisReconnect(seeds: seeds, timeoutMs: 2000)
        while true {
            _ = wake.wait(timeout: .now() + 1)
            let (publish, stopping) = shared.withLock { s -> ([Int: [FleetMember]]?, Bool) in
                defer { s.publish = nil }
                return (s.publish, s.stopping)
            }
            if stopping { break }
            var commands: [[[UInt8]]] = []
            for (p, members) in publish ?? [:] {
                commands.append([Array(redis: "SET"), Array(redis: Self.key(p)), Self.encode(members), Array(redis: "PX"), Array(redis: String(ttlMs))])
            }
            let sets = commands.count
            for p in 0..<partitions { commands.append([Array(redis: "GET"), Array(redis: Self.key(p))]) }
            do {
                let connection = try redis.get()
                let replies: [RedisValue]
                do throws(RedisError) {
                    replies = try connection.pipeline(commands)
                } catch {
                    redis.noteFailure(error)
                    continue
                }
                var latest: [Int: [FleetMember]] = [:]
                for p in 0..<partitions {
                    if let bytes = replies[sets + p].bytes { latest[p] = Self.decode(bytes) }
                }
                shared.withLock { $0.latest = latest }
            } catch {
                continue  // `get` keeps its backoff; the fleet view keeps the last read meanwhile
            }
        }
        stopped.signal()
    }

    /// `id lat lon status bearing stale` per line (trip ids and statuses have no spaces;
    /// `stale` is `1` or `0`, PROTOCOL 18; a line without it, from a hub before it, is not stale).
    static func encode(_ members: [FleetMember]) -> [UInt8] {
        var out = ""
        out.reserveCapacity(members.count * 50)
        for m in members {
            out += "\(m.id) \(m.position.lat) \(m.position.lon) \(m.status) \(m.bearing) \(m.stale ? 1 : 0)\n"
        }
        return Array(out.utf8)
    }

    static func decode(_ bytes: [UInt8]) -> [FleetMember] {
        var members: [FleetMember] = []
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count == 5 || fields.count == 6, let lat = Double(String(decoding: fields[1], as: UTF8.self)),
                let lon = Double(String(decoding: fields[2], as: UTF8.self)),
                let bearing = Double(String(decoding: fields[4], as: UTF8.self))
            else { continue }
            members.append(FleetMember(id: String(decoding: fields[0], as: UTF8.self), position: GeoPoint(lat: lat, lon: lon),
                                       status: String(decoding: fields[3], as: UTF8.self), bearing: bearing,
                                       stale: fields.count == 6 && fields[5].first == UInt8(ascii: "1")))
        }
        return members
    }
}
