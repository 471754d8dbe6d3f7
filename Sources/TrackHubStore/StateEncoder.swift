/// Encodes any `Encodable` straight into JSON bytes, as it is asked: no tree of nodes, no
/// copy of the coding path per value. At the top level, keys in `skipping` are left out.
///
/// Why: it wrote every stored trip state, once per fix at a hub with many moving trips, where
/// building a tree of boxed nodes first (and a coding path array for every nested value) had
/// been 22 µs a trip (BENCHMARKS.md, "Durability"). States are now written by hand
/// (`Trip.storedStateJSON`, about a quarter of this encoder's time again); this encoder writes
/// the routes (once per route change) and is the reference the hand-written states are held
/// to (`StoredStateJSONTests`).
///
/// How it stays streaming: every open object or array is a frame on one stack (its depth is
/// its place). A container writes only at its own depth, so before it writes, the frames
/// above it (nested values it opened and has finished with, as `Codable` always encodes them
/// in order) are closed; the end of `encode` closes the rest. A value that encodes nothing is
/// `{}`, as `JSONEncoder` writes it. What a stream cannot honour throws instead of writing
/// doubtful JSON: a container used after its object closed, and any super encoder.
final class StateEncoder {
    /// One open object or array.
    fileprivate struct Frame {
        var isObject: Bool
        var count: Int
        /// The key (or index) this frame's value has in its parent, for error paths.
        var key: (any CodingKey)?
        /// Unique in this encoding: a container holds its frame's, so one that outlived its
        /// object is told from the object opened in its place.
        var id: Int
    }

    // Unchecked: these are touched on every value, and the runtime's exclusivity checks of a
    // class's stored properties had been a fifth of the encoding's time. Only this file's
    // code reaches them, one call at a time.
    @exclusivity(unchecked) private(set) var out: [UInt8] = []
    @exclusivity(unchecked) fileprivate var frames: [Frame] = []
    let skipping: Set<String>
    /// Why the bytes are not valid JSON, when they are not: `encode` then throws it.
    fileprivate var failure: String?
    private var framesOpened = 0

    init(skipping: Set<String>, capacity: Int = 1024) {
        self.skipping = skipping
        out.reserveCapacity(capacity)
    }

    /// The bytes of `value`.
    static func encode<T: Encodable>(_ value: T, skipping: Set<String> = [], capacity: Int = 1024) throws -> [UInt8] {
        let encoder = StateEncoder(skipping: skipping, capacity: capacity)
        try encoder.encodeValue(value, depth: 0, key: nil)
        encoder.close(above: 0)
        if let failure = encoder.failure {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: failure))
        }
        return encoder.out
    }

    /// Writes `value` as the next thing at `depth` (its key, if any, written already).
    fileprivate func encodeValue<T: Encodable>(_ value: T, depth: Int, key: (any CodingKey)?) throws {
        let before = out.count
        try value.encode(to: ValueEncoder(state: self, depth: depth, key: key))
        close(above: depth)
        if out.count == before { out.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")]) }
    }

    /// Closes every frame deeper than `depth` frames (those a container at `depth − 1` has finished with).
    fileprivate func close(above depth: Int) {
        while frames.count > depth {
            let frame = frames.removeLast()
            out.append(frame.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
        }
    }

    /// Opens an object or array at `depth` (which must be the next frame); returns its id.
    @discardableResult
    fileprivate func open(object: Bool, depth: Int, key: (any CodingKey)?) -> Int {
        close(above: depth)
        framesOpened += 1
        frames.append(Frame(isObject: object, count: 0, key: key, id: framesOpened))
        out.append(object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        return framesOpened
    }

    /// Starts the next element of the frame at `index`: closes what is above it, writes the comma.
    fileprivate func nextElement(frame index: Int, id: Int) {
        guard index < frames.count, frames[index].id == id else {
            // A container written to after a shallower one wrote again (its object is closed
            // already): `Codable`'s own code never does this; a stream cannot honour it.
            failure = failure ?? "a container was written to after its object was closed"
            return
        }
        close(above: index + 1)
        if frames[index].count > 0 { out.append(UInt8(ascii: ",")) }
        frames[index].count += 1
    }

    /// A stream cannot tell whether a super encoder will be given one value, an object or
    /// nothing (the key would need `{}`), nor keep it in place if its parent writes first. No
    /// stored type uses one: the encoding fails rather than write JSON that might be wrong.
    fileprivate func refuseSuperEncoder() {
        failure = failure ?? "superEncoder is not supported when storing a state"
    }

    fileprivate func writeKey(_ key: String) {
        Self.writeString(key, to: &out)
        out.append(UInt8(ascii: ":"))
    }

    /// The keys from the top down to `depth` frames, and `last`: only built for an error.
    fileprivate func path(depth: Int, last: (any CodingKey)?) -> [any CodingKey] {
        var path = frames.prefix(depth).compactMap(\.key)
        if let last { path.append(last) }
        return path
    }

    // MARK: Scalars

    fileprivate func writeNull() { out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C]) }

    fileprivate func write(_ b: Bool) {
        if b { out.append(contentsOf: [0x74, 0x72, 0x75, 0x65]) } else { out.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65]) }
    }

    fileprivate func write(_ v: Int64) {
        if v < 0 {
            out.append(UInt8(ascii: "-"))
            write(v.magnitude)
        } else {
            write(UInt64(v))
        }
    }

    fileprivate func write(_ v: UInt64) {
        if v < 10 {
            out.append(UInt8(ascii: "0") + UInt8(v))
            return
        }
        var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // 20 digits at most, written backwards
        withUnsafeMutableBytes(of: &digits) { buffer in
            var n = v, i = 20
            while n > 0 {
                i -= 1
                buffer[i] = UInt8(ascii: "0") + UInt8(n % 10)
                n /= 10
            }
            out.append(contentsOf: buffer[i..<20])
        }
    }

    fileprivate func write(_ v: Double, depth: Int, key: (any CodingKey)?) throws {
        guard v.isFinite else {
            throw EncodingError.invalidValue(
                v, .init(codingPath: path(depth: depth, last: key), debugDescription: "a non-finite number cannot be stored as JSON"))
        }
        out.append(contentsOf: v.description.utf8)
    }

    fileprivate func write(_ s: String) { Self.writeString(s, to: &out) }

    static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            // Keys and ids rarely need escapes: copy them whole when they do not.
            var plain = true
            for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                plain = false
                break
            }
            if plain {
                out.append(contentsOf: bytes)
                return
            }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
                case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
                case 0..<0x20:
                    out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hexDigit(byte >> 4), hexDigit(byte & 15)])
                default: out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? UInt8(ascii: "0") + v : UInt8(ascii: "a") + v - 10 }
}

/// The `Encoder` of one value, to be written at `depth`.
private struct ValueEncoder: Encoder {
    let state: StateEncoder
    let depth: Int
    let key: (any CodingKey)?
    var codingPath: [any CodingKey] { state.path(depth: depth, last: key) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        // A second request for the same value's container continues the object it opened
        // (a fresh value has no frame at its depth yet: its parent closed what was there).
        let id: Int
        if state.frames.count > depth && state.frames[depth].isObject {
            state.close(above: depth + 1)
            id = state.frames[depth].id
        } else {
            id = state.open(object: true, depth: depth, key: key)
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(state: state, frame: depth, id: id, skipping: depth == 0 ? state.skipping : []))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let id: Int
        if state.frames.count > depth && !state.frames[depth].isObject {
            state.close(above: depth + 1)
            id = state.frames[depth].id
        } else {
            id = state.open(object: false, depth: depth, key: key)
        }
        return UnkeyedContainer(state: state, frame: depth, id: id)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(state: state, depth: depth, key: key)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let state: StateEncoder
    /// The object's frame (its depth) and that frame's id.
    let frame: Int
    let id: Int
    let skipping: Set<String>
    var codingPath: [any CodingKey] { state.path(depth: frame + 1, last: nil) }

    private func begin(_ key: Key) {
        state.nextElement(frame: frame, id: id)
        state.writeKey(key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws { begin(key); state.writeNull() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { begin(key); state.write(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { begin(key); state.write(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { begin(key); try state.write(value, depth: frame + 1, key: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { begin(key); try state.write(Double(value), depth: frame + 1, key: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { begin(key); state.write(Int64(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { begin(key); state.write(Int64(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { begin(key); state.write(Int64(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { begin(key); state.write(Int64(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { begin(key); state.write(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { begin(key); state.write(UInt64(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { begin(key); state.write(UInt64(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { begin(key); state.write(UInt64(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { begin(key); state.write(UInt64(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { begin(key); state.write(value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if !skipping.isEmpty && skipping.contains(key.stringValue) { return }
        begin(key)
        try state.encodeValue(value, depth: frame + 1, key: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        begin(key)
        let nested = state.open(object: true, depth: frame + 1, key: key)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(state: state, frame: frame + 1, id: nested, skipping: []))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        begin(key)
        let nested = state.open(object: false, depth: frame + 1, key: key)
        return UnkeyedContainer(state: state, frame: frame + 1, id: nested)
    }

    mutating func superEncoder() -> any Encoder { refusedSuperEncoder(key: nil) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { refusedSuperEncoder(key: key) }

    private func refusedSuperEncoder(key: (any CodingKey)?) -> any Encoder {
        state.refuseSuperEncoder()
        return ValueEncoder(state: state, depth: frame + 1, key: key)
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let state: StateEncoder
    /// The array's frame (its depth) and that frame's id.
    let frame: Int
    let id: Int
    var count: Int { state.frames.count > frame ? state.frames[frame].count : 0 }
    var codingPath: [any CodingKey] { state.path(depth: frame + 1, last: nil) }

    private func begin() -> IndexKey {
        let index = IndexKey(count)
        state.nextElement(frame: frame, id: id)
        return index
    }

    mutating func encodeNil() throws { _ = begin(); state.writeNull() }
    mutating func encode(_ value: Bool) throws { _ = begin(); state.write(value) }
    mutating func encode(_ value: String) throws { _ = begin(); state.write(value) }
    mutating func encode(_ value: Double) throws { let k = begin(); try state.write(value, depth: frame + 1, key: k) }
    mutating func encode(_ value: Float) throws { let k = begin(); try state.write(Double(value), depth: frame + 1, key: k) }
    mutating func encode(_ value: Int) throws { _ = begin(); state.write(Int64(value)) }
    mutating func encode(_ value: Int8) throws { _ = begin(); state.write(Int64(value)) }
    mutating func encode(_ value: Int16) throws { _ = begin(); state.write(Int64(value)) }
    mutating func encode(_ value: Int32) throws { _ = begin(); state.write(Int64(value)) }
    mutating func encode(_ value: Int64) throws { _ = begin(); state.write(value) }
    mutating func encode(_ value: UInt) throws { _ = begin(); state.write(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { _ = begin(); state.write(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { _ = begin(); state.write(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { _ = begin(); state.write(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { _ = begin(); state.write(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let k = begin()
        try state.encodeValue(value, depth: frame + 1, key: k)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let k = begin()
        let nested = state.open(object: true, depth: frame + 1, key: k)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(state: state, frame: frame + 1, id: nested, skipping: []))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let k = begin()
        let nested = state.open(object: false, depth: frame + 1, key: k)
        return UnkeyedContainer(state: state, frame: frame + 1, id: nested)
    }

    mutating func superEncoder() -> any Encoder {
        state.refuseSuperEncoder()
        return ValueEncoder(state: state, depth: frame + 1, key: IndexKey(count))
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let state: StateEncoder
    let depth: Int
    let key: (any CodingKey)?
    var codingPath: [any CodingKey] { state.path(depth: depth, last: key) }

    mutating func encodeNil() throws { state.writeNull() }
    mutating func encode(_ value: Bool) throws { state.write(value) }
    mutating func encode(_ value: String) throws { state.write(value) }
    mutating func encode(_ value: Double) throws { try state.write(value, depth: depth, key: key) }
    mutating func encode(_ value: Float) throws { try state.write(Double(value), depth: depth, key: key) }
    mutating func encode(_ value: Int) throws { state.write(Int64(value)) }
    mutating func encode(_ value: Int8) throws { state.write(Int64(value)) }
    mutating func encode(_ value: Int16) throws { state.write(Int64(value)) }
    mutating func encode(_ value: Int32) throws { state.write(Int64(value)) }
    mutating func encode(_ value: Int64) throws { state.write(value) }
    mutating func encode(_ value: UInt) throws { state.write(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { state.write(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { state.write(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { state.write(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { state.write(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try state.encodeValue(value, depth: depth, key: key) }
}

private struct IndexKey: CodingKey {
    var stringValue: String { "\(intValue ?? 0)" }
    var intValue: Int?
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { return nil }
    init?(intValue: Int) { self.intValue = intValue }
}
