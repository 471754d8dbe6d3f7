/// Writes a JSON value field by field into bytes, for encodings written by hand where
/// `Codable`'s dispatch per value costs too much (`Trip.storedStateJSON`, once per stored
/// state). Spelling: integers in decimal, doubles as Swift's shortest round-trip
/// `description`, strings with `"`, `\` and control characters escaped; the store's streaming
/// `Codable` encoder spells them through the same functions, so both write the same bytes.
///
/// Commas come by themselves: `key` and `element` put one before anything but the first
/// member of an object or array.
public struct JSONFieldWriter {
    /// What has been written.
    public private(set) var bytes: [UInt8]
    /// Nothing written yet in the innermost open object or array.
    private var atFirstMember = true
    /// The first value JSON cannot hold (a non-finite number), named by its key.
    public private(set) var failure: String?

    /// An empty writer with room for `capacity` bytes.
    public init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: Structure

    /// `{`: an object's members follow (`key` then a value, or the `field` shorthands).
    public mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        atFirstMember = true
    }

    /// `}`.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        atFirstMember = false
    }

    /// `[`: call `element` before each element's value.
    public mutating func beginArray() {
        bytes.append(UInt8(ascii: "["))
        atFirstMember = true
    }

    /// `]`.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        atFirstMember = false
    }

    /// A member's key (`"name":`), after a comma unless it is the object's first.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Before an array's element: a comma unless it is the first.
    public mutating func element() { separate() }

    private mutating func separate() {
        if atFirstMember {
            atFirstMember = false
        } else {
            bytes.append(UInt8(ascii: ","))
        }
    }

    // MARK: Values

    /// An integer.
    public mutating func value(_ v: Int64) { Self.appendInteger(v, to: &bytes) }

    /// An integer.
    public mutating func value(_ v: Int) { Self.appendInteger(Int64(v), to: &bytes) }

    /// `true` or `false`.
    public mutating func value(_ v: Bool) { Self.appendBool(v, to: &bytes) }

    /// A string, escaped.
    public mutating func value(_ v: String) { Self.appendString(v, to: &bytes) }

    /// A number; a non-finite one is written as 0 and recorded in `failure` (`of` names it).
    public mutating func value(_ v: Double, of name: StaticString) {
        if !Self.appendDouble(v, to: &bytes) {
            bytes.append(UInt8(ascii: "0"))
            if failure == nil { failure = "\(name) is \(v), which JSON cannot hold" }
        }
    }

    // MARK: Members

    /// `"name":v`.
    public mutating func field(_ name: StaticString, _ v: Int64) { key(name); value(v) }
    /// `"name":v`.
    public mutating func field(_ name: StaticString, _ v: Int) { key(name); value(v) }
    /// `"name":v`.
    public mutating func field(_ name: StaticString, _ v: Bool) { key(name); value(v) }
    /// `"name":v`.
    public mutating func field(_ name: StaticString, _ v: String) { key(name); value(v) }
    /// `"name":v`.
    public mutating func field(_ name: StaticString, _ v: Double) { key(name); value(v, of: name) }

    /// `"name":v` when `v` is there; nothing for nil (as `encodeIfPresent`).
    public mutating func field(_ name: StaticString, ifPresent v: Int64?) { if let v { field(name, v) } }
    /// `"name":v` when `v` is there; nothing for nil (as `encodeIfPresent`).
    public mutating func field(_ name: StaticString, ifPresent v: Int?) { if let v { field(name, v) } }
    /// `"name":v` when `v` is there; nothing for nil (as `encodeIfPresent`).
    public mutating func field(_ name: StaticString, ifPresent v: Bool?) { if let v { field(name, v) } }
    /// `"name":v` when `v` is there; nothing for nil (as `encodeIfPresent`).
    public mutating func field(_ name: StaticString, ifPresent v: String?) { if let v { field(name, v) } }
    /// `"name":v` when `v` is there; nothing for nil (as `encodeIfPresent`).
    public mutating func field(_ name: StaticString, ifPresent v: Double?) { if let v { field(name, v) } }

    // MARK: Spelling, shared with the store's Codable encoder

    /// `true` or `false`.
    public static func appendBool(_ v: Bool, to out: inout [UInt8]) {
        if v { out.append(contentsOf: [0x74, 0x72, 0x75, 0x65]) } else { out.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65]) }
    }

    /// A signed integer in decimal.
    public static func appendInteger(_ v: Int64, to out: inout [UInt8]) {
        if v < 0 { out.append(UInt8(ascii: "-")) }
        appendInteger(v.magnitude, to: &out)
    }

    /// An unsigned integer in decimal.
    public static func appendInteger(_ v: UInt64, to out: inout [UInt8]) {
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

    /// A finite number as its shortest round-trip spelling; false (nothing written) for NaN or
    /// an infinity.
    public static func appendDouble(_ v: Double, to out: inout [UInt8]) -> Bool {
        guard v.isFinite else { return false }
        out.append(contentsOf: v.description.utf8)
        return true
    }

    /// A string in quotes, with `"`, `\` and control characters escaped.
    public static func appendString(_ s: String, to out: inout [UInt8]) {
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
