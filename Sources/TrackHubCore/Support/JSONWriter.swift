/// Appends compact JSON to a byte buffer, without Foundation. In TrackHubCore, as plain as the
/// geometry, so the wire (TrackHubProtocol, which adds its own values in
/// `JSONWriter+Protocol.swift`) and a trip's stored state (`Trip.storedStateJSON`) write JSON
/// one way.
///
/// Built for encoding one frame and sharing its bytes among many subscribers: the buffer may
/// start with `headroom` bytes (e.g. libwebsockets' `LWS_PRE`) left for the transport, capacity
/// can be reserved up front, and `reset()` reuses the allocation for the next message.
/// Commas are inserted automatically: call `beginObject()`, then `key(_:)` and a value (or a
/// `field` shorthand) per member, then `endObject()`; arrays likewise without keys.
/// The writer does not check that calls are balanced.
public struct JSONWriter: Sendable {
    /// The buffer: `headroom` leading bytes, then the JSON written so far.
    public private(set) var bytes: [UInt8]
    /// How many leading bytes of `bytes` are not part of the JSON.
    public let headroom: Int
    private var needsComma = false
    /// A non-finite number was written (as `null`): for callers whose reader would not take
    /// `null` there (a stored trip state), an error to raise rather than bytes to keep.
    public private(set) var wroteNonFiniteNumber = false

    /// A writer whose buffer starts with `headroom` zero bytes and has room for `capacity` more.
    public init(headroom: Int = 0, capacity: Int = 256) {
        let headroom = max(0, headroom)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headroom + max(0, capacity))
        bytes.append(contentsOf: repeatElement(0, count: headroom))
        self.bytes = bytes
        self.headroom = headroom
    }

    /// A writer appending to an existing buffer. Its first `headroom` bytes are not JSON; the
    /// JSON continues after whatever the buffer holds (headroom defaults to the whole buffer).
    public init(appendingTo buffer: [UInt8], headroom: Int? = nil) {
        self.bytes = buffer
        self.headroom = min(max(0, headroom ?? buffer.count), buffer.count)
    }

    /// The number of JSON bytes written (excluding headroom).
    public var count: Int { bytes.count - headroom }

    /// The JSON written so far, without the headroom.
    public var payload: ArraySlice<UInt8> { bytes[headroom...] }

    /// Ensures room for `additional` more bytes.
    public mutating func reserveCapacity(_ additional: Int) {
        bytes.reserveCapacity(bytes.count + additional)
    }

    /// Forgets the JSON written, keeping the headroom and the allocation.
    public mutating func reset() {
        bytes.removeSubrange(headroom...)
        needsComma = false
    }

    /// Hands over the JSON written so far (without the headroom) and forgets it, keeping the
    /// writer's place in the document (the next value still gets its comma): for streaming a
    /// long document in parts.
    public mutating func takeWritten() -> [UInt8] {
        let written = Array(bytes[headroom...])
        bytes.removeSubrange(headroom...)
        return written
    }

    /// The buffer (headroom included), ending the writer.
    public consuming func finish() -> [UInt8] { bytes }

    // MARK: structure

    @inline(__always)
    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    /// Writes `{`.
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Writes `}`.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Writes `[`.
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Writes `]`.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes an object whose members `body` writes.
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        beginObject()
        body(&self)
        endObject()
    }

    /// Writes an array whose elements `body` writes.
    public mutating func array(_ body: (inout JSONWriter) -> Void) {
        beginArray()
        body(&self)
        endArray()
    }

    /// Writes a member's key and the colon; the next value written is its value.
    public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { appendEscaped($0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes a member's key and the colon; the next value written is its value.
    public mutating func key(_ key: String) {
        separate()
        appendQuoted(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: values

    /// Writes `null`.
    public mutating func null() {
        separate()
        appendStatic("null")
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        if value {
            appendStatic("true")
        } else {
            appendStatic("false")
        }
        needsComma = true
    }

    /// Writes an integer.
    public mutating func int(_ value: Int64) {
        separate()
        appendInteger(value)
        needsComma = true
    }

    /// Writes an integer.
    public mutating func int(_ value: Int) {
        int(Int64(value))
    }

    /// Writes a number: integral values below 10^15 as integers, others in the shortest
    /// form that reads back as the same `Double`. A non-finite value is written as `null`.
    public mutating func double(_ value: Double) {
        separate()
        appendDouble(value)
        needsComma = true
    }

    /// Writes a coordinate (or any number) with at most 7 decimals, trailing zeros trimmed
    /// (`38.7158`, `-9.142`, `0`). A non-finite value is written as `null`.
    public mutating func coordinate(_ value: Double) {
        separate()
        appendFixed7(value)
        needsComma = true
    }

    /// Writes the string of `prefix` and `value`'s 16 lowercase hex digits (a fleet
    /// cluster's id, `#00ff…`) without building it first.
    public mutating func hexString(prefix: UInt8, _ value: UInt64) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(prefix)
        for shift in stride(from: 60, through: 0, by: -4) {
            let d = UInt8(truncatingIfNeeded: value >> UInt64(shift) & 0xf)
            bytes.append(d < 10 ? UInt8(ascii: "0") + d : UInt8(ascii: "a") + d - 10)
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Writes a string, escaped.
    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
        needsComma = true
    }

    /// Writes a string, escaped.
    public mutating func string(_ value: Substring) {
        string(String(value))
    }

    /// Writes JSON text verbatim as one value; the caller vouches it is valid JSON.
    public mutating func raw(_ json: String) {
        separate()
        var json = json
        json.withUTF8 { bytes.append(contentsOf: $0) }
        needsComma = true
    }

    /// Writes JSON bytes verbatim as one value; the caller vouches they are valid JSON.
    public mutating func raw(_ json: some Collection<UInt8>) {
        separate()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    /// Writes a `[lon, lat]` pair with 7-decimal coordinates.
    public mutating func lonLat(lon: Double, lat: Double) {
        beginArray()
        coordinate(lon)
        coordinate(lat)
        endArray()
    }

    // MARK: fields (key + value)

    /// Writes `"key":"value"`.
    public mutating func field(_ key: StaticString, _ value: String) { self.key(key); string(value) }
    /// Writes `"key":value`.
    public mutating func field(_ key: StaticString, _ value: Int) { self.key(key); int(value) }
    /// Writes `"key":value`.
    public mutating func field(_ key: StaticString, _ value: Int64) { self.key(key); int(value) }
    /// Writes `"key":value` (shortest round-trip form; `null` if not finite).
    public mutating func field(_ key: StaticString, _ value: Double) { self.key(key); double(value) }
    /// Writes `"key":true|false`.
    public mutating func field(_ key: StaticString, _ value: Bool) { self.key(key); bool(value) }
    /// Writes `"key":"value"`, or `"key":null` when nil.
    public mutating func field(_ key: StaticString, _ value: String?) {
        self.key(key)
        if let value { string(value) } else { null() }
    }
    /// Writes `"key":value`, or `"key":null` when nil.
    public mutating func field(_ key: StaticString, _ value: Int?) {
        self.key(key)
        if let value { int(value) } else { null() }
    }
    /// Writes `"key":value`, or `"key":null` when nil.
    public mutating func field(_ key: StaticString, _ value: Int64?) {
        self.key(key)
        if let value { int(value) } else { null() }
    }
    /// Writes `"key":value`, or `"key":null` when nil (or not finite).
    public mutating func field(_ key: StaticString, _ value: Double?) {
        self.key(key)
        if let value { double(value) } else { null() }
    }
    /// Writes `"key":value` with at most 7 decimals, or `"key":null` when nil.
    public mutating func coordinateField(_ key: StaticString, _ value: Double?) {
        self.key(key)
        if let value { coordinate(value) } else { null() }
    }
    /// Writes `"key":null`.
    public mutating func nullField(_ key: StaticString) { self.key(key); null() }
    /// Writes `"key":"value"` when `value` is not nil; nothing otherwise.
    public mutating func optionalField(_ key: StaticString, _ value: String?) {
        if let value { field(key, value) }
    }
    /// Writes `"key":value` when `value` is not nil; nothing otherwise.
    public mutating func optionalField(_ key: StaticString, _ value: Int64?) {
        if let value { field(key, value) }
    }
    /// Writes `"key":value` when `value` is not nil; nothing otherwise.
    public mutating func optionalField(_ key: StaticString, _ value: Bool?) {
        if let value { field(key, value) }
    }
    /// Writes `"key":value` when `value` is not nil; nothing otherwise.
    public mutating func optionalField(_ key: StaticString, _ value: Int?) {
        if let value { field(key, value) }
    }
    /// Writes `"key":value` when `value` is not nil; nothing otherwise.
    public mutating func optionalField(_ key: StaticString, _ value: Double?) {
        if let value { field(key, value) }
    }

    // MARK: primitives

    private mutating func appendStatic(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private mutating func appendInteger(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendUnsigned(value.magnitude)
    }

    private mutating func appendUnsigned(_ value: UInt64) {
        if value < 10 {
            bytes.append(0x30 &+ UInt8(truncatingIfNeeded: value))
            return
        }
        var remaining = value
        let start = bytes.count
        while remaining > 0 {
            bytes.append(0x30 &+ UInt8(truncatingIfNeeded: remaining % 10))
            remaining /= 10
        }
        var low = start
        var high = bytes.count - 1
        while low < high {
            bytes.swapAt(low, high)
            low += 1
            high -= 1
        }
    }

    private mutating func appendDouble(_ value: Double) {
        guard value.isFinite else {
            appendStatic("null")
            wroteNonFiniteNumber = true
            return
        }
        if value.rounded(.towardZero) == value && value.magnitude < 1e15 {
            appendInteger(Int64(value))
            return
        }
        var text = value.description
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    private mutating func appendFixed7(_ value: Double) {
        guard value.isFinite, value.magnitude < 1e11 else {
            appendDouble(value)
            return
        }
        let scaled = Int64((value * 10_000_000).rounded())
        if scaled < 0 { bytes.append(UInt8(ascii: "-")) }
        let magnitude = scaled.magnitude
        appendUnsigned(magnitude / 10_000_000)
        var fraction = magnitude % 10_000_000
        guard fraction != 0 else { return }
        bytes.append(UInt8(ascii: "."))
        var digits = 7
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        var divisor: UInt64 = 1
        for _ in 1..<digits { divisor *= 10 }
        while divisor > 0 {
            bytes.append(0x30 &+ UInt8(truncatingIfNeeded: (fraction / divisor) % 10))
            divisor /= 10
        }
    }

    private mutating func appendQuoted(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { appendEscaped($0) }
        if done == nil {
            let copy = Array(string.utf8)
            copy.withUnsafeBufferPointer { appendEscaped($0) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends UTF-8 text escaped for a JSON string: quote, backslash, control characters,
    /// and U+2028/U+2029 (so the output is also safe inside JavaScript source).
    private mutating func appendEscaped(_ text: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        var index = 0
        let count = text.count
        while index < count {
            let byte = text[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C && byte != 0xE2 {
                index += 1
                continue
            }
            var width = 1
            if byte == 0xE2 {
                guard index + 2 < count, text[index + 1] == 0x80, text[index + 2] == 0xA8 || text[index + 2] == 0xA9 else {
                    index += 1
                    continue
                }
                width = 3
            }
            if runStart < index {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<index]))
            }
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case 0x22: bytes.append(0x22)
            case 0x5C: bytes.append(0x5C)
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0xE2:
                // U+2028 / U+2029
                appendStatic(text[index + 2] == 0xA8 ? "u2028" : "u2029")
            default:
                appendStatic("u00")
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            }
            index += width
            runStart = index
        }
        if runStart < count {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<count]))
        }
    }
}
