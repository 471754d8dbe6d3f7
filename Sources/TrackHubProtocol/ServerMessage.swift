/// The `type` of a server message: PROTOCOL section 4 (with `stop`, 17, and `cadence`, 18).
public enum ServerMessageType: String, Sendable, CaseIterable {
    /// The answer to `hello`.
    case welcome
    /// The whole state of a trip, on `subscribe` and when its route changes.
    case snapshot
    /// One interpolated position of a trip's marker.
    case frame
    /// One animation of the marker, in `segments` mode.
    case segment
    /// Something that happened to a trip (`trip_created`, `arrived`, ...).
    case event
    /// Where a followed stop stands (PROTOCOL 17).
    case stop
    /// How often the hub wants a courier's fixes (PROTOCOL 18).
    case cadence
    /// A fleet viewport's items.
    case clusters
    /// The answer to a `fix` (or `proceed`), once durable.
    case ack
    /// The answer to `unsubscribe`, or the hub ending a subscription.
    case unsubscribed
    /// The answer to `ping`.
    case pong
    /// A refused request.
    case error

    /// The type whose name is exactly these bytes (as written, without escapes), else nil.
    static func named(_ name: UnsafeBufferPointer<UInt8>) -> ServerMessageType? {
        // By length, then one comparison: a type costs at most a handful of byte compares,
        // and the load generator asks it of every message it receives.
        switch name.count {
        case 3: return JSONBytes.equal(name, "ack") ? .ack : nil
        case 4:
            if JSONBytes.equal(name, "pong") { return .pong }
            return JSONBytes.equal(name, "stop") ? .stop : nil
        case 5:
            switch name[0] {
            case UInt8(ascii: "f"): return JSONBytes.equal(name, "frame") ? .frame : nil
            case UInt8(ascii: "e"):
                if JSONBytes.equal(name, "event") { return .event }
                return JSONBytes.equal(name, "error") ? .error : nil
            default: return nil
            }
        case 7:
            switch name[0] {
            case UInt8(ascii: "s"): return JSONBytes.equal(name, "segment") ? .segment : nil
            case UInt8(ascii: "w"): return JSONBytes.equal(name, "welcome") ? .welcome : nil
            case UInt8(ascii: "c"): return JSONBytes.equal(name, "cadence") ? .cadence : nil
            default: return nil
            }
        case 8:
            if JSONBytes.equal(name, "snapshot") { return .snapshot }
            return JSONBytes.equal(name, "clusters") ? .clusters : nil
        case 12: return JSONBytes.equal(name, "unsubscribed") ? .unsubscribed : nil
        default: return nil
        }
    }
}

/// A server message (PROTOCOL sections 4 and 6) read where it lies: a lookup walks the
/// top-level members of the JSON object, skipping the values before the one asked for, and
/// reads only that one. Nothing is parsed into a tree and, but for the `String`s and trees
/// asked for, nothing is allocated, so a reader that wants two fields of a `frame` pays for
/// those two (trackhub-load reads up to 100 000 messages a second this way; `members(_:_:)`
/// finds two in one walk).
///
/// The one decoder of the hub's messages: the simulator, trackhub-load and the Swift tests
/// all read them through it.
///
/// - Only top-level members are found: a `t` inside `config` or an `items` element is not
///   the message's `t`. Nested values are read whole with `value(_:)` (or `Value.json`).
/// - A key that occurs twice (the hub never writes one twice) reads as its first occurrence
///   here; `object()` keeps the last, as `JSONParser` does.
/// - Lookups do not validate: bytes that are not a JSON object read as nil (or, when broken
///   past the member asked for, as whatever that member holds; a number or literal that
///   nothing follows reads as nil, so a message cut short never yields a shortened number).
///   `object()` is the strict RFC 8259 parse, for a reader that must know the message is
///   well formed.
public struct ServerMessage: Sendable {
    /// The message as received (UTF-8 JSON text).
    public let bytes: [UInt8]

    /// The message in these bytes (not copied).
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The message in this text.
    public init(_ text: String) { self.bytes = Array(text.utf8) }

    /// The message's `type`; nil when it has none or one this protocol does not define.
    public var type: ServerMessageType? {
        bytes.withUnsafeBufferPointer { buffer in
            // The hub writes `type` first: `{"type":"` then the name is the common case, read
            // without the walk (the first member is also the first occurrence the walk finds).
            let at = JSONBytes.hasTypePrefix(buffer)
                ? JSONBytes.typePrefix.utf8CodeUnitCount - 1 : JSONBytes.member("type", in: buffer)
            guard let at, let name = JSONBytes.plainString(at: at, in: buffer) else { return nil }
            return ServerMessageType.named(name)
        }
    }

    /// The `re` member: the request's `id` echoed (a number keeps its literal, as `MessageID`
    /// does); nil when absent, `null` or neither a string nor a number.
    public var re: MessageID? { member("re")?.messageID }

    /// The value of the top-level member `key`; nil when there is none.
    public func member(_ key: StaticString) -> Value? {
        bytes.withUnsafeBufferPointer { buffer in
            JSONBytes.member(key, in: buffer).map { Value(bytes: bytes, start: $0) }
        }
    }

    /// The values of two top-level members, found in one walk that stops once it has both
    /// (a `frame`'s `seq` and `t`: the cost of reading the message up to `t`, once).
    public func members(_ first: StaticString, _ second: StaticString) -> (Value?, Value?) {
        bytes.withUnsafeBufferPointer { buffer in
            let (a, b) = first.withUTF8Buffer { first in
                second.withUTF8Buffer { second in JSONBytes.members(first, second, in: buffer) }
            }
            return (a.map { Value(bytes: bytes, start: $0) }, b.map { Value(bytes: bytes, start: $0) })
        }
    }

    // The one-member accessors read in place without making a `Value` (which holds on to
    // `bytes`): one walk, no reference counting.

    /// True when the message has a top-level member `key` (whatever its value, `null` too).
    public func contains(_ key: StaticString) -> Bool { read(key) { _, _ in true } ?? false }

    /// True when the member `key` is present and `null`.
    public func isNull(_ key: StaticString) -> Bool { read(key) { JSONBytes.hasLiteral("null", at: $1, in: $0) } ?? false }

    /// The member `key` when it is a string (escapes decoded); nil when absent or not a string.
    public func string(_ key: StaticString) -> String? { read(key) { JSONBytes.string(at: $1, in: $0) } ?? nil }

    /// True when the member `key` is the string `value`; compares bytes, allocates nothing
    /// (e.g. `string("name", is: "ended")`).
    public func string(_ key: StaticString, is value: StaticString) -> Bool {
        read(key) { JSONBytes.isString(value, at: $1, in: $0) } ?? false
    }

    /// The member `key` when it is a number whose value is an integer that fits an `Int64`
    /// (`7`, `-3`, also `7.0` and `7e2`); nil when absent, not a number, or a fraction.
    public func int(_ key: StaticString) -> Int64? { read(key) { JSONBytes.int(at: $1, in: $0) } ?? nil }

    /// The member `key` when it is a finite number; nil when absent or not a number.
    public func double(_ key: StaticString) -> Double? { read(key) { JSONBytes.double(at: $1, in: $0) } ?? nil }

    /// The member `key` when it is `true` or `false`; nil when absent or not a boolean.
    public func bool(_ key: StaticString) -> Bool? { read(key) { JSONBytes.bool(at: $1, in: $0) } ?? nil }

    /// The member `key` parsed whole (strictly), for nested values: a snapshot's `route` or
    /// `config`, a segment's `path`, a clusters message's `items`. Nil when absent or not
    /// valid JSON.
    public func value(_ key: StaticString) -> JSONValue? { read(key) { JSONBytes.json(at: $1, in: $0) } ?? nil }

    /// `body` applied to the bytes and where the member `key`'s value starts; nil when absent.
    @inline(__always)
    private func read<T>(_ key: StaticString, _ body: (UnsafeBufferPointer<UInt8>, Int) -> T) -> T? {
        bytes.withUnsafeBufferPointer { buffer in
            guard let at = JSONBytes.member(key, in: buffer) else { return nil }
            return body(buffer, at)
        }
    }

    /// The whole message, parsed strictly (RFC 8259, as `JSONParser`); throws `bad_request`
    /// when it is not valid JSON or not an object. Each number keeps where its literal is in
    /// `bytes` (`JSONNumber.sourceRange`).
    public func object() throws(ProtocolError) -> JSONObject {
        let value = try JSONParser(maxDepth: Self.maxDepth).parse(bytes)
        guard case .object(let object) = value else {
            throw ProtocolError(.badRequest, "a server message is a JSON object, not \(value.typeName)")
        }
        return object
    }

    /// Nesting the strict reads accept: the hub's deepest message (a clusters item's
    /// `bounds`) is 3 levels; room to spare for what later sections add.
    static let maxDepth = 64

    /// One member's value, read in place: each accessor reads it as one JSON type and is nil
    /// when it is another.
    public struct Value: Sendable {
        /// The message's bytes.
        let bytes: [UInt8]
        /// Where the value starts in `bytes`.
        let start: Int

        /// The value when it is a number whose value is an integer that fits an `Int64`
        /// (`7`, `-3`, also `7.0` and `7e2`; past 2^53, as the parser's `Double` gives it).
        public var int: Int64? { bytes.withUnsafeBufferPointer { JSONBytes.int(at: start, in: $0) } }

        /// The value when it is a finite number.
        public var double: Double? { bytes.withUnsafeBufferPointer { JSONBytes.double(at: start, in: $0) } }

        /// The value when it is `true` or `false`.
        public var bool: Bool? { bytes.withUnsafeBufferPointer { JSONBytes.bool(at: start, in: $0) } }

        /// True when the value is `null`.
        public var isNull: Bool { bytes.withUnsafeBufferPointer { JSONBytes.hasLiteral("null", at: start, in: $0) } }

        /// The value when it is a string, escapes decoded.
        public var string: String? { bytes.withUnsafeBufferPointer { JSONBytes.string(at: start, in: $0) } }

        /// True when the value is the string `literal`; compares bytes, allocates nothing.
        public func isString(_ literal: StaticString) -> Bool {
            bytes.withUnsafeBufferPointer { JSONBytes.isString(literal, at: start, in: $0) }
        }

        /// The value parsed whole (strictly); nil when it is not valid JSON.
        public var json: JSONValue? { bytes.withUnsafeBufferPointer { JSONBytes.json(at: start, in: $0) } }

        /// The value as a request id: a string, or a number kept as its literal.
        var messageID: MessageID? {
            bytes.withUnsafeBufferPointer { buffer in
                switch buffer[start] {
                case UInt8(ascii: "\""): return JSONBytes.string(at: start, in: buffer).map(MessageID.string)
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    guard let end = JSONBytes.endOfScalar(from: start, in: buffer) else { return nil }
                    return .number(String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<end]), as: UTF8.self))
                default: return nil
                }
            }
        }
    }
}

/// The byte-level walk behind `ServerMessage`: finds a top-level member and reads scalars in
/// place. Positions are indices into the buffer; nothing here allocates unless it returns a
/// `String` or falls back to `JSONScanner` for an escaped string or an unusual number.
enum JSONBytes {
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    @inline(__always)
    static func skipWhitespace(_ i: inout Int, in buffer: UnsafeBufferPointer<UInt8>) {
        while i < buffer.count && isWhitespace(buffer[i]) { i += 1 }
    }

    /// How the hub starts every message: `type` first, no whitespace.
    static let typePrefix: StaticString = #"{"type":""#

    /// Whether `buffer` starts with `typePrefix`.
    @inline(__always)
    static func hasTypePrefix(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        typePrefix.withUTF8Buffer { prefix in
            buffer.count > prefix.count && equal(UnsafeBufferPointer(rebasing: buffer[0..<prefix.count]), prefix)
        }
    }

    /// Where the value of the top-level member `key` starts, or nil.
    static func member(_ key: StaticString, in buffer: UnsafeBufferPointer<UInt8>) -> Int? {
        key.withUTF8Buffer { key in members(key, nil, in: buffer).0 }
    }

    /// Where the values of the top-level members `first` and `second` start (nil: absent), in
    /// one walk that stops once both are found (`second` nil: once `first` is).
    ///
    /// Written for trackhub-load's hot path: positions rather than optionals inside the loop,
    /// strings and scalars skipped in line, only nested values through a call.
    static func members(
        _ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>?, in buffer: UnsafeBufferPointer<UInt8>
    ) -> (Int?, Int?) {
        var firstAt = -1
        var secondAt = second == nil ? Int.max : -1  // Int.max: not asked for
        func result() -> (Int?, Int?) { (firstAt >= 0 ? firstAt : nil, secondAt >= 0 && secondAt != .max ? secondAt : nil) }
        var i = 0
        skipWhitespace(&i, in: buffer)
        guard i < buffer.count, buffer[i] == UInt8(ascii: "{") else { return result() }
        i += 1
        while true {
            skipWhitespace(&i, in: buffer)
            guard i < buffer.count, buffer[i] == UInt8(ascii: "\"") else { return result() }
            // Which key this is: the keys asked for are compared in place (a key followed by its
            // closing quote cannot hold an escape); only a key that does not match and holds an
            // escape is decoded to compare.
            let quote = i
            var which = 0
            if firstAt < 0, let end = keyEnd(first, at: quote, in: buffer) {
                which = 1
                i = end
            } else if secondAt < 0, let second, let end = keyEnd(second, at: quote, in: buffer) {
                which = 2
                i = end
            } else {
                var escaped = false
                guard skipString(&i, escaped: &escaped, in: buffer) else { return result() }
                if escaped, let key = string(at: quote, in: buffer) {
                    if firstAt < 0 && key.utf8.elementsEqual(first) {
                        which = 1
                    } else if secondAt < 0, let second, key.utf8.elementsEqual(second) {
                        which = 2
                    }
                }
            }
            skipWhitespace(&i, in: buffer)
            guard i < buffer.count, buffer[i] == UInt8(ascii: ":") else { return result() }
            i += 1
            skipWhitespace(&i, in: buffer)
            guard i < buffer.count else { return result() }
            if which == 1 { firstAt = i } else if which == 2 { secondAt = i }
            if firstAt >= 0 && secondAt >= 0 { return result() }
            // Skip the value.
            switch buffer[i] {
            case UInt8(ascii: "\""):
                var escaped = false
                guard skipString(&i, escaped: &escaped, in: buffer) else { return result() }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard let end = endOfValue(from: i, in: buffer) else { return result() }
                i = end
            default:
                while i < buffer.count && !isScalarEnd(buffer[i]) { i += 1 }
            }
            skipWhitespace(&i, in: buffer)
            guard i < buffer.count, buffer[i] == UInt8(ascii: ",") else { return result() }
            i += 1
        }
    }

    /// Moves `i` from a string's opening quote to just past its closing quote (false: the
    /// string does not end); sets `escaped` when it holds an escape.
    @inline(__always)
    static func skipString(_ i: inout Int, escaped: inout Bool, in buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        i += 1
        while i < buffer.count {
            let byte = buffer[i]
            if byte == UInt8(ascii: "\"") {
                i += 1
                return true
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                i += 2
            } else {
                i += 1
            }
        }
        return false
    }

    /// The index just past the key at `quote` when it is exactly `key` (written without escapes).
    @inline(__always)
    static func keyEnd(_ key: UnsafeBufferPointer<UInt8>, at quote: Int, in buffer: UnsafeBufferPointer<UInt8>) -> Int? {
        let close = quote + 1 + key.count
        guard close < buffer.count, buffer[close] == UInt8(ascii: "\""),
            equal(UnsafeBufferPointer(rebasing: buffer[(quote + 1)..<close]), key)
        else { return nil }
        return close + 1
    }

    /// The index just past the string whose opening quote is at `start`, and whether it holds
    /// an escape; nil when it does not end.
    @inline(__always)
    static func endOfString(from start: Int, in buffer: UnsafeBufferPointer<UInt8>) -> (end: Int, escaped: Bool)? {
        var i = start
        var escaped = false
        return skipString(&i, escaped: &escaped, in: buffer) ? (i, escaped) : nil
    }

    /// The index just past a number or literal starting at `start`; nil when nothing follows
    /// it (a member's value is followed at least by the object's `}`: a message cut short
    /// must not read `"t":17` for `"t":1700000000000`).
    static func endOfScalar(from start: Int, in buffer: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = start
        while i < buffer.count {
            let byte = buffer[i]
            if isScalarEnd(byte) { return i }
            i += 1
        }
        return nil
    }

    @inline(__always)
    static func isScalarEnd(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || isWhitespace(byte)
    }

    /// The index just past the value starting at `start`; nil when it does not end. Arrays and
    /// objects are skipped by counting brackets outside strings (not checked for balance).
    static func endOfValue(from start: Int, in buffer: UnsafeBufferPointer<UInt8>) -> Int? {
        switch buffer[start] {
        case UInt8(ascii: "\""):
            return endOfString(from: start, in: buffer)?.end
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var i = start
            while i < buffer.count {
                switch buffer[i] {
                case UInt8(ascii: "\""):
                    guard let (end, _) = endOfString(from: i, in: buffer) else { return nil }
                    i = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default:
                    break
                }
                i += 1
            }
            return nil
        default:
            guard let end = endOfScalar(from: start, in: buffer), end > start else { return nil }
            return end
        }
    }

    /// The bytes of the string at `at` when it holds no escape (nil otherwise, or when `at`
    /// is not a string).
    static func plainString(at: Int, in buffer: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        guard buffer[at] == UInt8(ascii: "\""), let (end, escaped) = endOfString(from: at, in: buffer), !escaped else {
            return nil
        }
        return UnsafeBufferPointer(rebasing: buffer[(at + 1)..<(end - 1)])
    }

    /// The string at `at`, escapes decoded; nil when `at` is not a valid string.
    static func string(at: Int, in buffer: UnsafeBufferPointer<UInt8>) -> String? {
        if let plain = plainString(at: at, in: buffer) { return String(decoding: plain, as: UTF8.self) }
        guard buffer[at] == UInt8(ascii: "\"") else { return nil }
        // Escapes: the parser's own string reader decodes them (and checks them).
        var scanner = JSONScanner(UnsafeBufferPointer(rebasing: buffer[at...]), maxDepth: 0)
        return try? scanner.parseString()
    }

    /// The number at `at` as the parser reads it; nil when `at` is not a valid number.
    static func number(at: Int, in buffer: UnsafeBufferPointer<UInt8>) -> JSONNumber? {
        let byte = buffer[at]
        guard byte == UInt8(ascii: "-") || (byte >= 0x30 && byte <= 0x39), let end = endOfScalar(from: at, in: buffer) else {
            return nil
        }
        var scanner = JSONScanner(UnsafeBufferPointer(rebasing: buffer[at..<end]), maxDepth: 0)
        guard let number = try? scanner.parseNumber(), scanner.position == end - at else { return nil }
        return number
    }

    /// The finite number at `at`.
    static func double(at: Int, in buffer: UnsafeBufferPointer<UInt8>) -> Double? {
        guard let number = number(at: at, in: buffer), number.isFinite else { return nil }
        return number.value
    }

    /// The boolean at `at`.
    static func bool(at: Int, in buffer: UnsafeBufferPointer<UInt8>) -> Bool? {
        if hasLiteral("true", at: at, in: buffer) { return true }
        if hasLiteral("false", at: at, in: buffer) { return false }
        return nil
    }

    /// Whether the string at `at` is `literal`.
    static func isString(_ literal: StaticString, at: Int, in buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        guard buffer[at] == UInt8(ascii: "\"") else { return false }
        if let plain = plainString(at: at, in: buffer) { return equal(plain, literal) }
        // Written with escapes (the hub does not, but JSON allows it): decode, then compare.
        guard let decoded = string(at: at, in: buffer) else { return false }
        return literal.withUTF8Buffer { decoded.utf8.elementsEqual($0) }
    }

    /// The value at `at` parsed whole (strictly); nil when it is not valid JSON.
    static func json(at: Int, in buffer: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        guard let end = endOfValue(from: at, in: buffer) else { return nil }
        return try? JSONParser(maxDepth: ServerMessage.maxDepth)
            .parse(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[at..<end])))
    }

    /// The integer at `at`. Plain integers up to 2^53 (every `seq`, `t` and `re` the hub
    /// writes) are read digit by digit; anything else goes through the parser's number, so
    /// every value reads as `JSONNumber.int64Value` gives it (past 2^53, rounded as a `Double`).
    static func int(at: Int, in buffer: UnsafeBufferPointer<UInt8>) -> Int64? {
        var i = at
        let negative = buffer[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let digitsStart = i
        var value: Int64 = 0
        while i < buffer.count, buffer[i] >= 0x30, buffer[i] <= 0x39, i - digitsStart < 18 {
            value = value &* 10 &+ Int64(buffer[i] &- 0x30)  // 18 digits at most: no overflow
            i += 1
        }
        let digits = i - digitsStart
        let ended = i < buffer.count && isScalarEnd(buffer[i])
        // A leading zero is only a number on its own ("0"); "01" is not JSON.
        if digits > 0, ended, digits == 1 || buffer[digitsStart] != UInt8(ascii: "0"), value <= 1 << 53 {
            return negative ? -value : value
        }
        return number(at: at, in: buffer)?.int64Value
    }

    /// True when `literal` (`true`, `false`, `null`) stands at `at`, followed by the value's end.
    static func hasLiteral(_ literal: StaticString, at: Int, in buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        literal.withUTF8Buffer { literal in
            let end = at + literal.count
            guard end <= buffer.count, equal(UnsafeBufferPointer(rebasing: buffer[at..<end]), literal) else { return false }
            return endOfScalar(from: at, in: buffer) == end
        }
    }

    @inline(__always)
    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { equal(bytes, $0) }
    }

    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var i = 0
        while i < a.count {
            if a[i] != b[i] { return false }
            i += 1
        }
        return true
    }
}
