/// A JSON object: its members in the order first seen, each key once (a later duplicate
/// replaces the earlier value: last wins). Lookups are a short scan for small objects and
/// a hash lookup for larger ones.
public struct JSONObject: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// One member.
    public typealias Element = (key: String, value: JSONValue)

    /// The members, in the order their keys first appeared.
    public private(set) var entries: [Element] = []
    private var index: [String: Int]? = nil
    private static let indexThreshold = 12

    /// An empty object.
    public init() {}

    /// An object of these members; a later duplicate key replaces the earlier value.
    public init(_ members: [(String, JSONValue)]) {
        entries.reserveCapacity(members.count)
        for (key, value) in members { self[key] = value }
    }

    /// An object literal; a later duplicate key replaces the earlier value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    /// The number of members.
    public var count: Int { entries.count }

    /// True when there are no members.
    public var isEmpty: Bool { entries.isEmpty }

    /// The keys, in order.
    public var keys: [String] { entries.map(\.key) }

    /// The value of `key`, or nil when absent. Setting nil removes the member.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let position = position(of: key) else { return nil }
            return entries[position].value
        }
        set {
            if let newValue {
                if let position = position(of: key) {
                    entries[position].value = newValue
                } else {
                    entries.append((key, newValue))
                    if index != nil {
                        index?[key] = entries.count - 1
                    } else if entries.count > Self.indexThreshold {
                        buildIndex()
                    }
                }
            } else if let position = position(of: key) {
                entries.remove(at: position)
                index = nil
                if entries.count > Self.indexThreshold { buildIndex() }
            }
        }
    }

    /// Iterates the members in order.
    public func makeIterator() -> IndexingIterator<[Element]> { entries.makeIterator() }

    /// Equal when both have the same keys with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (key, value) in lhs.entries where rhs[key] != value { return false }
        return true
    }

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        var position = 0
        while position < entries.count {
            if entries[position].key == key { return position }
            position += 1
        }
        return nil
    }

    private mutating func buildIndex() {
        var built = [String: Int](minimumCapacity: entries.count * 2)
        for (position, entry) in entries.enumerated() { built[entry.key] = position }
        index = built
    }
}
