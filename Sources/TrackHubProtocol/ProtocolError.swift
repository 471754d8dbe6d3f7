/// An error the hub reports to a client: an `error` message on the WebSocket,
/// `{"error": {...}}` with `code.httpStatus` over HTTP.
public struct ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of error it is.
    public var code: ErrorCode
    /// Plain words saying what was wrong; names the offending field.
    public var message: String
    /// For JSON syntax errors: the offset of the offending byte in the input.
    public var byteOffset: Int?

    /// Makes an error with `code` and `message`.
    public init(_ code: ErrorCode, _ message: String, byteOffset: Int? = nil) {
        self.code = code
        self.message = message
        self.byteOffset = byteOffset
    }

    /// The HTTP status that goes with `code`.
    public var httpStatus: Int { code.httpStatus }

    /// `code: message`, for logs.
    public var description: String { "\(code.rawValue): \(message)" }

    /// A `bad_request` error.
    public static func badRequest(_ message: String) -> ProtocolError { ProtocolError(.badRequest, message) }
    /// An `unauthorized` error.
    public static func unauthorized(_ message: String) -> ProtocolError { ProtocolError(.unauthorized, message) }
    /// A `forbidden` error.
    public static func forbidden(_ message: String) -> ProtocolError { ProtocolError(.forbidden, message) }
    /// A `not_found` error.
    public static func notFound(_ message: String) -> ProtocolError { ProtocolError(.notFound, message) }
    /// A `conflict` error.
    public static func conflict(_ message: String) -> ProtocolError { ProtocolError(.conflict, message) }
    /// A `too_large` error.
    public static func tooLarge(_ message: String) -> ProtocolError { ProtocolError(.tooLarge, message) }
    /// A `rate_limited` error.
    public static func rateLimited(_ message: String) -> ProtocolError { ProtocolError(.rateLimited, message) }
    /// An `unavailable` error.
    public static func unavailable(_ message: String) -> ProtocolError { ProtocolError(.unavailable, message) }
}
