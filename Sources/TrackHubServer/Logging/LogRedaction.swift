import Foundation

/// Takes tokens and secrets out of a log line's text (PROTOCOL 14: no log line ever holds
/// one, libwebsockets' own lines included). Applied to every string the logger writes, so
/// a message that quotes a URL, a header or a client's JSON cannot leak one by mistake.
///
/// What is replaced by `[redacted]`:
/// - the value after `token=` or `secret=` (any case; `access_token=`, `jwt-secret=` too),
///   up to `&`, a space, a quote, `;`, `,` or the end;
/// - the string value of a JSON key ending in `token` or `secret` (`"token":"…"`);
/// - the word after `Bearer ` (any case);
/// - anything shaped like a JWT: three base64url parts joined by dots, the first starting
///   `ey` or `ew` (a JSON object, base64url-encoded), or all three parts 16 characters or
///   longer (a token whose header is not JSON);
/// - every literal secret the hub was given (`HubLog.configure(secrets:)`).
/// Over-redaction (a dotted name that looks like a token) costs a log reader a word;
/// under-redaction leaks a credential, so the rules lean that way.
public enum LogRedaction {
    /// What a removed token or secret is replaced with.
    public static let marker = "[redacted]"

    /// `text` with every token-shaped value replaced (no literal secrets known).
    public static func redact(_ text: String) -> String { redact(text, secrets: []) }

    /// `text` with every token-shaped value and every literal secret in `secrets` replaced.
    public static func redact(_ text: String, secrets: [String]) -> String {
        var text = text
        for secret in secrets where !secret.isEmpty && text.contains(secret) {
            text = text.replacingOccurrences(of: secret, with: marker)
        }
        let bytes = Array(text.utf8)
        guard mayHold(bytes) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if let end = jwtEnd(bytes, at: i) {
                out.append(contentsOf: marker.utf8)
                i = end
            } else if let (valueStart, end) = keyedValue(bytes, at: i) ?? bearerValue(bytes, at: i) {
                out.append(contentsOf: bytes[i..<valueStart])
                out.append(contentsOf: marker.utf8)
                i = end
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - Rules

    /// Cheap pre-check: most lines (an access log line) hold none of the triggers.
    private static func mayHold(_ bytes: [UInt8]) -> Bool {
        var dots = 0
        for (index, byte) in bytes.enumerated() {
            switch lower(byte) {
            case UInt8(ascii: "."): dots += 1
            case UInt8(ascii: "k"), UInt8(ascii: "c"), UInt8(ascii: "b"):
                if matches(bytes, at: index, "ken") || matches(bytes, at: index, "cret") || matches(bytes, at: index, "bearer") { return true }
            default: break
            }
        }
        return dots >= 2
    }

    /// `token=` / `secret=` and JSON `"…token": "…"`: where the value starts and ends.
    private static func keyedValue(_ bytes: [UInt8], at i: Int) -> (Int, Int)? {
        let keyLength: Int
        if matches(bytes, at: i, "token") { keyLength = 5 } else if matches(bytes, at: i, "secret") { keyLength = 6 } else { return nil }
        var j = i + keyLength
        guard j < bytes.count else { return nil }
        if bytes[j] == UInt8(ascii: "=") {
            let start = j + 1
            var end = start
            while end < bytes.count && !isValueDelimiter(bytes[end]) { end += 1 }
            return end > start ? (start, end) : nil
        }
        guard bytes[j] == UInt8(ascii: "\"") else { return nil }
        j += 1
        while j < bytes.count && bytes[j] == UInt8(ascii: " ") { j += 1 }
        guard j < bytes.count, bytes[j] == UInt8(ascii: ":") else { return nil }
        j += 1
        while j < bytes.count && bytes[j] == UInt8(ascii: " ") { j += 1 }
        guard j < bytes.count, bytes[j] == UInt8(ascii: "\"") else { return nil }
        let start = j + 1
        var end = start
        while end < bytes.count && bytes[end] != UInt8(ascii: "\"") {
            end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
        }
        end = min(end, bytes.count)
        return end > start ? (start, end) : nil
    }

    /// `Bearer <value>`: the value's start and end.
    private static func bearerValue(_ bytes: [UInt8], at i: Int) -> (Int, Int)? {
        guard matches(bytes, at: i, "bearer"), i == 0 || !isAlphanumeric(bytes[i - 1]) else { return nil }
        var start = i + 6
        guard start < bytes.count, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") else { return nil }
        while start < bytes.count && (bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t")) { start += 1 }
        var end = start
        while end < bytes.count && !isValueDelimiter(bytes[end]) { end += 1 }
        return end > start ? (start, end) : nil
    }

    /// A JWT starting at `i` (not in the middle of a word): where it ends.
    private static func jwtEnd(_ bytes: [UInt8], at i: Int) -> Int? {
        guard i == 0 || !isBase64URL(bytes[i - 1]), i < bytes.count, isBase64URL(bytes[i]) else { return nil }
        var parts: [Int] = []
        var j = i
        while true {
            let start = j
            while j < bytes.count && isBase64URL(bytes[j]) { j += 1 }
            parts.append(j - start)
            if parts.count == 3 || j >= bytes.count || bytes[j] != UInt8(ascii: ".") { break }
            j += 1
        }
        guard parts.count == 3, parts[0] > 0, parts[1] > 0 else { return nil }
        let jsonHeader = parts[0] >= 10 && bytes[i] == UInt8(ascii: "e") && (bytes[i + 1] == UInt8(ascii: "y") || bytes[i + 1] == UInt8(ascii: "w"))
        let long = parts.allSatisfy { $0 >= 16 }
        return jsonHeader || long ? j : nil
    }

    // MARK: - Bytes

    private static func matches(_ bytes: [UInt8], at i: Int, _ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard i + count <= bytes.count else { return false }
        return word.withUTF8Buffer { pattern in
            for k in 0..<count where lower(bytes[i + k]) != pattern[k] { return false }
            return true
        }
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        let l = lower(byte)
        return (l >= UInt8(ascii: "a") && l <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    private static func isValueDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\""), UInt8(ascii: "'"),
             UInt8(ascii: ";"), UInt8(ascii: ","), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: ">"), UInt8(ascii: ")"):
            return true
        default:
            return false
        }
    }
}
