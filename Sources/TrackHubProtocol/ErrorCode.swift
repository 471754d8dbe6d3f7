/// The `code` of an `error` message (PROTOCOL section 4); the raw value is the wire spelling.
public enum ErrorCode: String, Sendable, Hashable, CaseIterable {
    /// A malformed message or a field of the wrong type or outside its range (HTTP 400).
    case badRequest = "bad_request"
    /// No token, or a bad one, where one is needed (HTTP 401).
    case unauthorized
    /// A valid token without the scope or trip the operation needs (HTTP 403).
    case forbidden
    /// The trip (or route) does not exist (HTTP 404).
    case notFound = "not_found"
    /// The operation does not fit the trip's state (HTTP 409).
    case conflict
    /// A message, body or list larger than its limit (HTTP 413).
    case tooLarge = "too_large"
    /// Too many operations in too short a time (HTTP 429).
    case rateLimited = "rate_limited"
    /// The hub cannot do it now, e.g. its store cannot commit (HTTP 503).
    case unavailable

    /// The HTTP status that goes with this code.
    public var httpStatus: Int {
        switch self {
        case .badRequest: return 400
        case .unauthorized: return 401
        case .forbidden: return 403
        case .notFound: return 404
        case .conflict: return 409
        case .tooLarge: return 413
        case .rateLimited: return 429
        case .unavailable: return 503
        }
    }

    /// When several errors apply, the one with the lowest precedence is sent
    /// (PROTOCOL section 4: unauthorized, bad_request, too_large, forbidden, not_found, conflict).
    public var precedence: Int {
        switch self {
        case .unauthorized: return 0
        case .badRequest: return 1
        case .tooLarge: return 2
        case .forbidden: return 3
        case .notFound: return 4
        case .conflict: return 5
        case .rateLimited: return 6
        case .unavailable: return 7
        }
    }
}
