import TrackHubCore

/// A JSON number as parsed: its `Double` value and whether the literal's exact value is an integer.
///
/// `isInteger` is decided on the literal, not on the rounded `Double`: `1.0`, `1e3` and `120e-1`
/// are integers, `1.5` and `9007199254740990.5` are not. A literal too large for a `Double`
/// (`1e400`) has an infinite `value`; check `isFinite`.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The nearest `Double` (infinite when the literal is too large to be finite).
    public var value: Double
    /// True when the literal's exact mathematical value is an integer.
    public var isInteger: Bool
    // Where the literal was in the parsed input (UInt32.max: unknown); not part of equality.
    var literalStart: UInt32
    var literalLength: UInt16

    /// A number with `value`; `isInteger` is whether `value` is a finite integral value.
    public init(_ value: Double) {
        self.value = value
        self.isInteger = value.isFinite && value.rounded(.towardZero) == value
        self.literalStart = .max
        self.literalLength = 0
    }

    /// An integer.
    public init(_ value: Int64) {
        self.value = Double(value)
        self.isInteger = true
        self.literalStart = .max
        self.literalLength = 0
    }

    /// A number with the given value and integer flag.
    public init(value: Double, isInteger: Bool) {
        self.value = value
        self.isInteger = isInteger
        self.literalStart = .max
        self.literalLength = 0
    }

    init(value: Double, isInteger: Bool, start: Int, length: Int) {
        self.value = value
        self.isInteger = isInteger
        if start >= 0, start < Int(UInt32.max), length > 0, length <= Int(UInt16.max) {
            self.literalStart = UInt32(start)
            self.literalLength = UInt16(length)
        } else {
            self.literalStart = .max
            self.literalLength = 0
        }
    }

    /// True when `value` is finite (false for literals such as `1e400`).
    public var isFinite: Bool { value.isFinite }

    /// The value as an `Int64` when the literal is an integer that fits, else nil.
    public var int64Value: Int64? {
        guard isInteger, value.isFinite else { return nil }
        return Int64(exactly: value)
    }

    /// The byte range of the literal in the input it was parsed from (nil when not parsed, or very long).
    public var sourceRange: Range<Int>? {
        guard literalStart != .max, literalLength > 0 else { return nil }
        let start = Int(literalStart)
        return start..<(start + Int(literalLength))
    }

    /// The value as JSON would write it.
    public var description: String {
        var writer = JSONWriter(capacity: 32)
        writer.number(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Equal when value and integer flag are equal (where the literal was is ignored).
    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        lhs.value == rhs.value && lhs.isInteger == rhs.isInteger
    }

    /// Hashes value and integer flag.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(value)
        hasher.combine(isInteger)
    }
}
