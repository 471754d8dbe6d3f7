/// A set of Int64 keys (fix seqs, or the ts of stored fixes) with a fixed bound on memory.
///
/// Holds at most `capacity` keys (default 100 000 per set, about 3 MB for a trip that reaches
/// it). Past that, the oldest inserted key is forgotten (FIFO). Once full, a key it does not
/// hold may have been forgotten (`mayHaveForgotten`): the hub then asks the store before
/// judging (PROTOCOL 7: a stored fix is a `duplicate` however old), and tells the trip what
/// the store holds (`Trip.rememberStoredFixKeys`). Codable: keys encode in insertion order.
struct SeenFixKeys: Sendable, Codable, Equatable {
    /// The bound used for trips: at most this many keys per set.
    static let defaultCapacity = 100_000

    let capacity: Int
    private var members: Set<Int64> = []
    /// Insertion order, as a ring buffer once full; `head` is the oldest slot then.
    private var order: [Int64] = []
    private var head = 0

    init(capacity: Int = SeenFixKeys.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    var count: Int { members.count }

    /// True once the set is full: a key it does not hold may be one it forgot.
    var mayHaveForgotten: Bool { order.count >= capacity }

    func contains(_ key: Int64) -> Bool { members.contains(key) }

    mutating func insert(_ key: Int64) {
        guard !members.contains(key) else { return }
        if order.count < capacity {
            order.append(key)
        } else {
            members.remove(order[head])
            order[head] = key
            head = (head + 1) % capacity
        }
        members.insert(key)
    }

    private enum CodingKeys: String, CodingKey { case capacity, keys }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(capacity: try c.decode(Int.self, forKey: .capacity))
        for k in try c.decode([Int64].self, forKey: .keys) { insert(k) }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(capacity, forKey: .capacity)
        // Oldest first, so decoding re-inserts in the same order and evicts the same keys next.
        try c.encode(Array(order[head...] + order[..<head]), forKey: .keys)
    }

    static func == (a: SeenFixKeys, b: SeenFixKeys) -> Bool {
        a.capacity == b.capacity && a.members == b.members
    }
}
