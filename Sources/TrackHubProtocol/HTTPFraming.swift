/// How an HTTP request's body is framed (PROTOCOL section 1): by `Content-Length` alone.
///
/// A request is never run with a body the hub did not read: a body sent any other way
/// (`Transfer-Encoding`), or a `Content-Length` that is not one non-negative decimal
/// integer (missing on a `POST` or `PUT`, repeated, malformed, or too large to represent),
/// is refused with 400 naming `Content-Length`, and the connection is closed because the
/// hub cannot know where the next request would start.
public enum HTTPFraming: Equatable, Sendable {
    /// No body follows the headers.
    case noBody
    /// Exactly this many bytes of body follow the headers (at least 1).
    case body(length: Int)

    /// The longest `Content-Length` value taken: 18 digits is below `Int.max` (9.2e18), so
    /// the value always fits, and no body that long could be read anyway.
    static let maxDigits = 18

    /// Decides the framing from the request's method and the raw header values.
    ///
    /// - Parameters:
    ///   - requiresLength: true for `POST` and `PUT`, whose body (even an empty one) must be
    ///     announced with a `Content-Length`.
    ///   - contentLength: the `Content-Length` header as received, with repeated headers
    ///     joined by `,` (as libwebsockets joins them); nil when absent.
    ///   - hasTransferEncoding: whether any `Transfer-Encoding` header was sent.
    public static func decide(requiresLength: Bool, contentLength: String?, hasTransferEncoding: Bool) throws(ProtocolError) -> HTTPFraming {
        if hasTransferEncoding {
            throw .badRequest("Content-Length: bodies are framed by Content-Length alone; Transfer-Encoding is not accepted")
        }
        guard let raw = contentLength else {
            if requiresLength { throw .badRequest("Content-Length is required on POST and PUT (0 for an empty body)") }
            return .noBody
        }
        let text = raw.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        if text.contains(0x2C) {  // ","
            throw .badRequest("Content-Length is given more than once")
        }
        guard !text.isEmpty, text.count <= maxDigits, text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw .badRequest("Content-Length must be one non-negative decimal integer of at most \(maxDigits) digits")
        }
        var length = 0
        for digit in text { length = length * 10 + Int(digit - 0x30) }
        return length == 0 ? .noBody : .body(length: length)
    }
}
