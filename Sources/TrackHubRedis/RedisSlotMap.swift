/// Which master of a Redis Cluster serves each of the 16 384 hash slots, as `CLUSTER SLOTS`
/// told it. A slot no master serves (a cluster being set up) maps to no node.
public struct RedisSlotMap: Sendable, Equatable {
    /// The masters, in the order `CLUSTER SLOTS` first named them.
    public private(set) var masters: [RedisAddress] = []
    /// Per slot, an index into `masters`, or −1.
    private var owners = [Int16](repeating: -1, count: RedisSlot.count)

    /// Reads a `CLUSTER SLOTS` reply: `[[start, end, [host, port, id, ...], replicas...], ...]`.
    /// An empty host means the node that was asked (`askedHost`). Nil when the reply has
    /// another shape.
    public init?(clusterSlots reply: RedisValue, askedHost: String) {
        guard let ranges = reply.elements else { return nil }
        for range in ranges {
            guard let fields = range.elements, fields.count >= 3, let start = fields[0].int, let end = fields[1].int,
                let master = fields[2].elements, master.count >= 2, let host = master[0].text, let port = master[1].int,
                0 <= start, start <= end, end < RedisSlot.count, (1...65535).contains(port)
            else { return nil }
            let address = RedisAddress(host: host.isEmpty || host == "?" ? askedHost : host, port: Int(port))
            let index: Int
            if let known = masters.firstIndex(of: address) {
                index = known
            } else {
                index = masters.count
                masters.append(address)
            }
            for slot in Int(start)...Int(end) { owners[slot] = Int16(index) }
        }
    }

    /// The master serving `slot`, if any.
    public func master(ofSlot slot: Int) -> RedisAddress? {
        let index = owners[slot]
        return index < 0 ? nil : masters[Int(index)]
    }

    /// A `MOVED` reply said `slot` is now served by `address`: believe it until the next refresh.
    mutating func move(slot: Int, to address: RedisAddress) {
        if let known = masters.firstIndex(of: address) {
            owners[slot] = Int16(known)
        } else {
            owners[slot] = Int16(masters.count)
            masters.append(address)
        }
    }
}
