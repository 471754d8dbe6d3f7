/// Reads only what the generator measures from a server message, by scanning bytes: no JSON
/// parse, no allocation. The hub writes `type` first (`{"type":"frame",...`), so the kind is
/// known from the first bytes; a field is found by its `"key":` pattern (keys are quoted and
/// trip ids cannot hold a quote, so a pattern cannot match inside another key or a value
/// that is a trip id).
enum MessageKind: Sendable {
    case frame, segment, snapshot, ack, event, clusters, error, welcome, pong, unsubscribed, other
}

struct MessageScanner {
    let bytes: UnsafeRawBufferPointer

    private static let typePrefix: [UInt8] = Array(#"{"type":""#.utf8)

    var kind: MessageKind {
        let p = Self.typePrefix
        var start = -1
        if bytes.count > p.count, zip(bytes.prefix(p.count), p).allSatisfy({ $0 == $1 }) {
            start = p.count
        } else if let at = find(Array(#""type":""#.utf8), from: 0) {
            start = at
        }
        guard start >= 0, start + 2 < bytes.count else { return .other }
        switch (bytes[start], bytes[start + 1]) {
        case (UInt8(ascii: "f"), _): return .frame
        case (UInt8(ascii: "s"), UInt8(ascii: "e")): return .segment
        case (UInt8(ascii: "s"), UInt8(ascii: "n")): return .snapshot
        case (UInt8(ascii: "a"), _): return .ack
        case (UInt8(ascii: "e"), UInt8(ascii: "v")): return .event
        case (UInt8(ascii: "e"), UInt8(ascii: "r")): return .error
        case (UInt8(ascii: "c"), _): return .clusters
        case (UInt8(ascii: "w"), _): return .welcome
        case (UInt8(ascii: "p"), _): return .pong
        case (UInt8(ascii: "u"), _): return .unsubscribed
        default: return .other
        }
    }

    /// The index just past the first occurrence of `pattern` at or after `from`.
    func find(_ pattern: [UInt8], from: Int) -> Int? {
        let n = pattern.count
        guard n > 0, bytes.count >= n else { return nil }
        let first = pattern[0]
        var i = from
        let last = bytes.count - n
        while i <= last {
            if bytes[i] == first {
                var j = 1
                while j < n && bytes[i + j] == pattern[j] { j += 1 }
                if j == n { return i + n }
            }
            i += 1
        }
        return nil
    }

    /// The integer after `pattern` (e.g. `"seq":`), and where it ends.
    func int(after pattern: [UInt8], from: Int = 0) -> (value: Int64, end: Int)? {
        guard var i = find(pattern, from: from) else { return nil }
        var negative = false
        if i < bytes.count && bytes[i] == UInt8(ascii: "-") { negative = true; i += 1 }
        var value: Int64 = 0
        var digits = 0
        while i < bytes.count {
            let c = bytes[i]
            guard c >= 48 && c <= 57 else { break }
            value = value &* 10 &+ Int64(c - 48)
            digits += 1
            i += 1
        }
        guard digits > 0 else { return nil }
        return (negative ? -value : value, i)
    }

    /// The string after `pattern` (which ends with the opening quote), without escapes.
    func string(after pattern: [UInt8], from: Int = 0) -> String? {
        guard let start = find(pattern, from: from) else { return nil }
        var end = start
        while end < bytes.count && bytes[end] != UInt8(ascii: "\"") { end += 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    /// True when `pattern` occurs.
    func contains(_ pattern: [UInt8]) -> Bool { find(pattern, from: 0) != nil }
}

/// The key patterns the generator looks for, built once.
enum Keys {
    static let seq: [UInt8] = Array(#""seq":"#.utf8)
    static let t: [UInt8] = Array(#""t":"#.utf8)
    static let t0: [UInt8] = Array(#""t0":"#.utf8)
    static let tu: [UInt8] = Array(#""tu":"#.utf8)
    static let re: [UInt8] = Array(#""re":"#.utf8)
    static let appliedTrue: [UInt8] = Array(#""applied":true"#.utf8)
    static let code: [UInt8] = Array(#""code":""#.utf8)
    static let nameEnded: [UInt8] = Array(#""name":"ended""#.utf8)
}
