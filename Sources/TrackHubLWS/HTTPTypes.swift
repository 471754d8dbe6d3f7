/// An HTTP method the hub answers.
public enum HTTPMethod: String, Sendable {
    case get = "GET", post = "POST", put = "PUT", delete = "DELETE", head = "HEAD", options = "OPTIONS", patch = "PATCH", other = "OTHER"
}

/// One HTTP request as the hub sees it: already parsed, no C in sight.
public struct HTTPRequest: Sendable {
    public var connection: ConnectionID
    public var method: HTTPMethod
    /// The decoded path, e.g. `/v1/trips/T1`.
    public var path: String
    /// Query arguments in order, decoded.
    public var query: [(name: String, value: String)]
    public var origin: String?
    public var host: String?
    public var authorization: String?
    public var peerAddress: String
    public var body: [UInt8]
    /// True for a request that came in on the second listening address (`--osmand-listen`).
    public var isSecondListener = false

    /// A request as the host parsed it (or as a test or a fake host makes it).
    public init(
        connection: ConnectionID, method: HTTPMethod, path: String, query: [(name: String, value: String)] = [],
        origin: String? = nil, host: String? = nil, authorization: String? = nil, peerAddress: String = "", body: [UInt8] = []
    ) {
        self.connection = connection
        self.method = method
        self.path = path
        self.query = query
        self.origin = origin
        self.host = host
        self.authorization = authorization
        self.peerAddress = peerAddress
        self.body = body
    }

    /// The first value of a query argument.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}

/// The answer to an HTTP request.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var headers: [(name: String, value: String)]
    /// The whole body, or with `next` its first part.
    public var body: [UInt8]
    /// For a streamed body (chunked transfer encoding, no Content-Length): called on the
    /// service thread for each further part, one per writeable callback, until it returns nil.
    /// Throwing drops the connection without ending the body, so the client sees it cut short.
    public var next: (@Sendable () throws -> [UInt8]?)?

    public init(
        status: Int, contentType: String = "application/json", headers: [(name: String, value: String)] = [], body: [UInt8],
        next: (@Sendable () throws -> [UInt8]?)? = nil
    ) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
        self.next = next
    }
}

/// What a WebSocket upgrade request carries, for the hub to accept or refuse it.
public struct UpgradeRequest: Sendable {
    public var path: String
    public var query: [(name: String, value: String)]
    public var origin: String?
    public var host: String?
    public var peerAddress: String

    /// An upgrade as the host parsed it (or as a test or a fake host makes it).
    public init(path: String, query: [(name: String, value: String)] = [], origin: String? = nil, host: String? = nil, peerAddress: String = "") {
        self.path = path
        self.query = query
        self.origin = origin
        self.host = host
        self.peerAddress = peerAddress
    }

    /// The first value of a query argument.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}

/// The hub's answer to an upgrade request.
public enum UpgradeDecision: Sendable {
    case accept
    /// Refused with this HTTP status (401, 403, 404, 429).
    case refuse(status: Int)
}

/// Why the host answered a request itself, without handing it to the hub.
public enum HTTPRefusalReason: String, Sendable {
    /// `Transfer-Encoding`, or a missing, repeated or malformed `Content-Length` (400).
    case framing
    /// The body did not arrive within `--body-timeout` (408).
    case bodyTimeout = "body_timeout"
    /// The peer has `--max-conns-per-ip` connections open already (429).
    case tooManyConnections = "too_many_connections"
    /// No valid token on a secured hub: 401 from the headers, the body not read.
    case unauthorized
    /// A declared body over `--max-body` (413).
    case tooLarge = "too_large"
}
