/// Redis, one server or a Redis Cluster, behind the same blocking calls; used by one thread
/// at a time.
///
/// hiredis speaks to one server and knows nothing of clusters, so this does what a cluster
/// client must: at the start (and after a `MOVED`) it reads `CLUSTER SLOTS` from any node
/// that answers, keeps one connection per master, and sends each command to the master of
/// its key's slot (`RedisSlot.routingKey`). A pipeline is written to every master it touches
/// before any reply is read, so it costs one round trip however many masters it spans; its
/// replies come back in the order of the commands. A `MOVED` reply updates the slot and the
/// command goes again to its new master; an `ASK` reply sends it once to the named node
/// after `ASKING` (a slot being migrated), at most `maxRedirects` times.
///
/// A server without cluster support answers `CLUSTER SLOTS` with an error: every command
/// then goes to it, exactly as a plain connection would.
///
/// After an `.io` error every connection is closed (a pipeline's other replies may be
/// unread) and the client is dead: make a new one, which reads the slots again (a failover
/// may have moved them).
public final class RedisClient {
    /// The addresses it was given to find the cluster from.
    public let seeds: [RedisAddress]
    private let timeoutMs: Int
    /// The slot map of a cluster; nil for a server without cluster support.
    public private(set) var slotMap: RedisSlotMap?
    /// The server, when it is not a cluster.
    private var single: RedisAddress?
    private var connections: [RedisAddress: RedisConnection] = [:]
    private var dead = false

    /// Redirects followed for one command before its `MOVED`/`ASK` reply is returned as is.
    public static let maxRedirects = 5

    /// Connects to the first seed that answers and learns whether it is a cluster.
    public init(seeds: [RedisAddress], timeoutMs: Int) throws(RedisError) {
        self.seeds = seeds
        self.timeoutMs = timeoutMs
        try refreshSlots()
    }

    /// A client of one server or cluster reached through `address` alone.
    public convenience init(_ address: RedisAddress, timeoutMs: Int) throws(RedisError) {
        try self.init(seeds: [address], timeoutMs: timeoutMs)
    }

    /// True for a Redis Cluster (keys are then spread over `masters` by slot).
    public var isCluster: Bool { slotMap != nil }

    /// The masters commands go to: the cluster's, or the one server.
    public var masters: [RedisAddress] { slotMap?.masters ?? single.map { [$0] } ?? [] }

    /// The master that serves `key`.
    public func master(forKey key: [UInt8]) throws(RedisError) -> RedisAddress {
        guard let slotMap else {
            guard let single else { throw .io("connection closed") }
            return single
        }
        let slot = RedisSlot.of(key)
        guard let master = slotMap.master(ofSlot: slot) else { throw .refused("CLUSTERDOWN: no master serves slot \(slot)") }
        return master
    }

    /// Reads which master serves each slot from the first known node that answers (the
    /// masters last known, then the seeds).
    public func refreshSlots() throws(RedisError) {
        guard !dead else { throw .io("connection closed") }
        var lastError = RedisError.connect("no Redis address given")
        var tried = Set<RedisAddress>()
        for address in masters + seeds where tried.insert(address).inserted {
            do {
                let reply = try connection(to: address).command([Array(redis: "CLUSTER"), Array(redis: "SLOTS")])
                if case .error(let message) = reply {
                    if message.contains("cluster support disabled") {
                        single = address
                        slotMap = nil
                        return
                    }
                    lastError = .refused("\(address): \(message)")
                    continue
                }
                guard let map = RedisSlotMap(clusterSlots: reply, askedHost: address.host), !map.masters.isEmpty else {
                    lastError = .refused("\(address): unexpected CLUSTER SLOTS reply")
                    continue
                }
                slotMap = map
                single = nil
                return
            } catch {
                connections[address] = nil
                lastError = error
            }
        }
        throw lastError
    }

    /// Sends one command to the master of its key and waits for its reply.
    public func command(_ arguments: [[UInt8]]) throws(RedisError) -> RedisValue {
        try pipeline([arguments])[0]
    }

    /// Sends commands, each to the master of its key (a command without a key to the first
    /// master), one write per master, and returns the replies in the commands' order.
    /// `MOVED` and `ASK` are followed (see the type's comment).
    public func pipeline(_ commands: [[[UInt8]]]) throws(RedisError) -> [RedisValue] {
        var replies = [RedisValue](repeating: .null, count: commands.count)
        var pending = commands.indices.map { Routed(index: $0, target: nil, asking: false) }
        for round in 0...Self.maxRedirects {
            var groups: [(address: RedisAddress, items: [Routed])] = []
            for var item in pending {
                let target: RedisAddress
                if let chosen = item.target {
                    target = chosen
                } else if let key = RedisSlot.routingKey(of: commands[item.index]) {
                    target = try master(forKey: key)
                } else {
                    target = try firstMaster()
                }
                item.target = target
                if let g = groups.firstIndex(where: { $0.address == target }) {
                    groups[g].items.append(item)
                } else {
                    groups.append((target, [item]))
                }
            }
            var retry: [Routed] = []
            var moved = false
            try guarded { () throws(RedisError) in
                for group in groups {
                    var sent: [[[UInt8]]] = []
                    for item in group.items {
                        if item.asking { sent.append([Array(redis: "ASKING")]) }
                        sent.append(commands[item.index])
                    }
                    try connection(to: group.address).send(sent)
                }
                for group in groups {
                    let count = group.items.reduce(0) { $0 + ($1.asking ? 2 : 1) }
                    let got = try connection(to: group.address).receive(count)
                    var k = 0
                    for item in group.items {
                        if item.asking { k += 1 }  // ASKING's own OK
                        let reply = got[k]
                        k += 1
                        if round < Self.maxRedirects, case .error(let message) = reply,
                            let redirect = Redirect(message, askedHost: group.address.host)
                        {
                            switch redirect {
                            case .moved(let slot, let to):
                                slotMap?.move(slot: slot, to: to)
                                moved = true
                                retry.append(Routed(index: item.index, target: to, asking: false))
                            case .ask(let to):
                                retry.append(Routed(index: item.index, target: to, asking: true))
                            }
                        } else {
                            replies[item.index] = reply
                        }
                    }
                }
            }
            if retry.isEmpty { break }
            if moved { try? refreshSlots() }  // the MOVED target is used meanwhile
            pending = retry
        }
        return replies
    }

    /// Sends commands to one node as they are, following no redirect: for reads that
    /// must run back to back on one master (`TIME` then `XREAD`).
    public func pipeline(_ commands: [[[UInt8]]], at node: RedisAddress) throws(RedisError) -> [RedisValue] {
        try guarded { () throws(RedisError) in try connection(to: node).pipeline(commands) }
    }

    private struct Routed {
        var index: Int
        var target: RedisAddress?
        var asking: Bool
    }

    /// A `MOVED slot host:port` or `ASK slot host:port` error reply.
    enum Redirect: Equatable {
        case moved(slot: Int, to: RedisAddress)
        case ask(to: RedisAddress)

        init?(_ message: String, askedHost: String) {
            let words = message.split(separator: " ")
            guard words.count == 3, let slot = Int(words[1]), (0..<RedisSlot.count).contains(slot),
                let to = RedisAddress(node: String(words[2]), defaultHost: askedHost)
            else { return nil }
            switch words[0] {
            case "MOVED": self = .moved(slot: slot, to: to)
            case "ASK": self = .ask(to: to)
            default: return nil
            }
        }
    }

    private func firstMaster() throws(RedisError) -> RedisAddress {
        guard let first = masters.first else { throw .io("connection closed") }
        return first
    }

    private func connection(to address: RedisAddress) throws(RedisError) -> RedisConnection {
        guard !dead else { throw .io("connection closed") }
        if let c = connections[address] { return c }
        let c = try RedisConnection(address, timeoutMs: timeoutMs)
        connections[address] = c
        return c
    }

    /// Runs `body`; an `.io` or connect error closes every connection for good.
    private func guarded<T>(_ body: () throws(RedisError) -> T) throws(RedisError) -> T {
        do {
            return try body()
        } catch {
            if case .refused = error { throw error }
            connections.removeAll()
            dead = true
            throw error
        }
    }
}
