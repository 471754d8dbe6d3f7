import Foundation
import TrackHubCore

/// How the SQLite store writes a `Trip` (its whole state machine, via its `Codable`
/// conformance) and reads it back.
///
/// A trip's state is written once per transaction that touched it, so this is on the hot
/// path. Two parts of `Trip` grow with its life and are left out of the stored state:
/// - `seenSeqs` / `seenTimestamps` (up to 100 000 keys each): every fix the trip judged new
///   is in the `fixes` table, in judging order (its `id`), so on load they are rebuilt from
///   there, exactly as `judge` filled them;
/// - `route` (up to `--max-route-points`): stored in its own column, only when it changed.
/// The rest goes through `StateEncoder`, a small JSON encoder that is several times faster
/// than `JSONEncoder` and skips those keys. Loading splices them back in and decodes with
/// `JSONDecoder`, so the format is plain JSON of `Trip`'s own coding keys.
enum SQLiteTripCodec {
    /// Top-level coding keys of `Trip` that are stored elsewhere.
    static let skippedKeys: Set<String> = ["route", "seenSeqs", "seenTimestamps"]
    /// The capacity `Trip` gives its seen-key sets (`SeenFixKeys.defaultCapacity`).
    static let seenCapacity = 100_000

    /// The trip's state without the skipped keys, as a JSON object.
    static func encodeState(_ trip: Trip) throws -> [UInt8] {
        let encoder = StateEncoder(codingPath: [], skipping: skippedKeys)
        try trip.encode(to: encoder)
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        JSONNode.write(encoder.node ?? .object(JSONObjectBox()), to: &out)
        return out
    }

    /// The route as its points (Route's own coding), or nil.
    static func encodeRoute(_ route: Route?) throws -> [UInt8]? {
        guard let route else { return nil }
        let encoder = StateEncoder(codingPath: [], skipping: [])
        try route.encode(to: encoder)
        var out: [UInt8] = []
        out.reserveCapacity(route.points.count * 40 + 16)
        JSONNode.write(encoder.node ?? .null, to: &out)
        return out
    }

    /// Rebuilds a trip: the stored state, its route, and the seen keys of its stored fixes
    /// (seqs and timestamps in judging order).
    static func decode(state: [UInt8], route: [UInt8]?, seenSeqs: [Int64], seenTimestamps: [Int64]) throws -> Trip {
        guard state.last == UInt8(ascii: "}") else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "stored trip state is not a JSON object"))
        }
        var json = state
        json.removeLast()
        json.reserveCapacity(json.count + (route?.count ?? 0) + (seenSeqs.count + seenTimestamps.count) * 14 + 128)
        let isEmptyObject = json.count == 1
        func appendKeys(_ name: String, _ keys: [Int64]) {
            json.append(contentsOf: Array(",\"\(name)\":{\"capacity\":\(seenCapacity),\"keys\":[".utf8))
            for (i, key) in keys.enumerated() {
                if i > 0 { json.append(UInt8(ascii: ",")) }
                json.append(contentsOf: Array(String(key).utf8))
            }
            json.append(contentsOf: Array("]}".utf8))
        }
        appendKeys("seenSeqs", seenSeqs)
        appendKeys("seenTimestamps", seenTimestamps)
        if let route {
            json.append(contentsOf: Array(",\"route\":".utf8))
            json.append(contentsOf: route)
        }
        json.append(UInt8(ascii: "}"))
        if isEmptyObject { json.remove(at: 1) }  // "{," → "{"
        return try JSONDecoder().decode(Trip.self, from: Data(json))
    }
}

// MARK: - A small JSON encoder

final class JSONObjectBox {
    var items: [(String, JSONNode)] = []
}

final class JSONArrayBox {
    var items: [JSONNode] = []
}

enum JSONNode {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array(JSONArrayBox)
    case object(JSONObjectBox)

    static func write(_ node: JSONNode, to out: inout [UInt8]) {
        switch node {
        case .null: out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(let b): out.append(contentsOf: b ? Array("true".utf8) : Array("false".utf8))
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .uint(let u): out.append(contentsOf: String(u).utf8)
        case .double(let d): out.append(contentsOf: d.description.utf8)
        case .string(let s): writeString(s, to: &out)
        case .array(let box):
            out.append(UInt8(ascii: "["))
            for (i, item) in box.items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let box):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in box.items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ s: String, to out: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0..<0x20:
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// Encodes any `Encodable` into a `JSONNode` tree; at the top level, keys in `skipping` are left out.
final class StateEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    let skipping: Set<String>
    var node: JSONNode?

    init(codingPath: [any CodingKey], skipping: Set<String>) {
        self.codingPath = codingPath
        self.skipping = skipping
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: JSONObjectBox
        if case .object(let existing) = node { box = existing } else {
            box = JSONObjectBox()
            node = .object(box)
        }
        return KeyedEncodingContainer(StateKeyedContainer<Key>(box: box, codingPath: codingPath, skipping: skipping))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: JSONArrayBox
        if case .array(let existing) = node { box = existing } else {
            box = JSONArrayBox()
            node = .array(box)
        }
        return StateUnkeyedContainer(box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        StateSingleContainer(encoder: self)
    }

    /// A value as a node: primitives directly, anything else through a child encoder.
    static func box<T: Encodable>(_ value: T, path: [any CodingKey]) throws -> JSONNode {
        switch value {
        case let v as Double: return try double(v, path: path)
        case let v as Int: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as String: return .string(v)
        case let v as Bool: return .bool(v)
        case let v as Float: return try double(Double(v), path: path)
        case let v as Int32: return .int(Int64(v))
        case let v as UInt64: return .uint(v)
        case let v as UInt: return .uint(UInt64(v))
        default:
            let child = StateEncoder(codingPath: path, skipping: [])
            try value.encode(to: child)
            return child.node ?? .object(JSONObjectBox())
        }
    }

    static func double(_ v: Double, path: [any CodingKey]) throws -> JSONNode {
        guard v.isFinite else {
            throw EncodingError.invalidValue(v, .init(codingPath: path, debugDescription: "a non-finite number cannot be stored as JSON"))
        }
        return .double(v)
    }
}

private struct IndexKey: CodingKey {
    var stringValue: String { "\(intValue ?? 0)" }
    var intValue: Int?
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { return nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct StateKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: JSONObjectBox
    let codingPath: [any CodingKey]
    let skipping: Set<String>

    private func put(_ node: JSONNode, _ key: Key) { box.items.append((key.stringValue, node)) }

    mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(try StateEncoder.double(value, path: codingPath + [key]), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(try StateEncoder.double(Double(value), path: codingPath + [key]), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.uint(UInt64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(.uint(value), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if !skipping.isEmpty && skipping.contains(key.stringValue) { return }
        put(try StateEncoder.box(value, path: codingPath + [key]), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = JSONObjectBox()
        put(.object(nested), key)
        return KeyedEncodingContainer(StateKeyedContainer<NestedKey>(box: nested, codingPath: codingPath + [key], skipping: []))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = JSONArrayBox()
        put(.array(nested), key)
        return StateUnkeyedContainer(box: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: "super") }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key.stringValue) }

    private func superEncoder(named name: String) -> any Encoder {
        let child = StateEncoder(codingPath: codingPath, skipping: [])
        let nested = JSONObjectBox()
        child.node = .object(nested)
        box.items.append((name, .object(nested)))
        return child
    }
}

private struct StateUnkeyedContainer: UnkeyedEncodingContainer {
    let box: JSONArrayBox
    let codingPath: [any CodingKey]
    var count: Int { box.items.count }

    private var path: [any CodingKey] { codingPath + [IndexKey(box.items.count)] }

    mutating func encodeNil() throws { box.items.append(.null) }
    mutating func encode(_ value: Bool) throws { box.items.append(.bool(value)) }
    mutating func encode(_ value: String) throws { box.items.append(.string(value)) }
    mutating func encode(_ value: Double) throws { box.items.append(try StateEncoder.double(value, path: path)) }
    mutating func encode(_ value: Float) throws { box.items.append(try StateEncoder.double(Double(value), path: path)) }
    mutating func encode(_ value: Int) throws { box.items.append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { box.items.append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { box.items.append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { box.items.append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { box.items.append(.int(value)) }
    mutating func encode(_ value: UInt) throws { box.items.append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { box.items.append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { box.items.append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { box.items.append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { box.items.append(.uint(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { box.items.append(try StateEncoder.box(value, path: path)) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = JSONObjectBox()
        let nestedPath = path
        box.items.append(.object(nested))
        return KeyedEncodingContainer(StateKeyedContainer<NestedKey>(box: nested, codingPath: nestedPath, skipping: []))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = JSONArrayBox()
        let nestedPath = path
        box.items.append(.array(nested))
        return StateUnkeyedContainer(box: nested, codingPath: nestedPath)
    }

    mutating func superEncoder() -> any Encoder {
        let child = StateEncoder(codingPath: path, skipping: [])
        let nested = JSONObjectBox()
        child.node = .object(nested)
        box.items.append(.object(nested))
        return child
    }
}

private struct StateSingleContainer: SingleValueEncodingContainer {
    let encoder: StateEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ node: JSONNode) { encoder.node = node }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(try StateEncoder.double(value, path: codingPath)) }
    mutating func encode(_ value: Float) throws { set(try StateEncoder.double(Double(value), path: codingPath)) }
    mutating func encode(_ value: Int) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { set(.int(value)) }
    mutating func encode(_ value: UInt) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { set(.uint(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { set(try StateEncoder.box(value, path: codingPath)) }
}
