import TrackHubProtocol

/// An HTTP method the hub answers.
public enum HTTPMethod: String, Sendable {
    case get = "GET", post = "POST", put = "PUT", delete = "DELETE", head = "HEAD", options = "OPTIONS", patch = "PATCH", other = "OTHER"
}

/// One HTTP request as the hub sees it: already parsed, no C in sight.
public struct HTTPRequest: Sendable {
    /// The connection the request came on; the answer goes back on it.
    public var connection: ConnectionID
    /// The request's method; one the hub does not know is `.other`.
    public var method: HTTPMethod
    /// The decoded path, e.g. `/v1/trips/T1`.
    public var path: String
    /// Query arguments in order, decoded.
    public var query: [(name: String, value: String)]
    /// The `Origin` header; nil when absent (not a browser, or a same-origin GET).
    public var origin: String?
    /// The `Host` header, for the Origin and DNS-rebinding checks (PROTOCOL 1).
    public var host: String?
    /// The `Authorization` header as sent (`Bearer <token>`); nil when absent.
    public var authorization: String?
    /// The peer's numeric IP address (the proxy's behind one); empty when lws cannot tell.
    public var peerAddress: String
    /// The whole body (at most `--max-body`), read before the request is handed over; empty without one.
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
    /// The HTTP status code.
    public var status: Int
    /// The `Content-Type` header's value.
    public var contentType: String
    /// Headers besides Content-Type and Content-Length, written in this order.
    public var headers: [(name: String, value: String)]
    /// The whole body, or with `requestChunk` its first part.
    public var body: [UInt8]
    /// For a streamed body (chunked transfer encoding, no Content-Length): the host's request
    /// for the next part, made on the service thread with the response's connection. The
    /// producer must not block there (the service thread serves every socket): it answers with
    /// `ServerHost.supplyChunk(id, _:)` on the service thread, at once or later, e.g. once a
    /// read on another queue is back. The host asks again only after that answer has been
    /// taken for writing, so at most one part is ever produced ahead of the one being
    /// written: memory stays bounded by two parts, however long the body. A connection that
    /// closes meanwhile is not reported to the producer; its late answer is dropped.
    public var requestChunk: (@Sendable (ConnectionID) -> Void)?

    /// An answer; a JSON body by default, streamed when `requestChunk` is given.
    public init(
        status: Int, contentType: String = "application/json", headers: [(name: String, value: String)] = [], body: [UInt8],
        requestChunk: (@Sendable (ConnectionID) -> Void)? = nil
    ) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
        self.requestChunk = requestChunk
    }

    /// True when the body is streamed (chunked): `requestChunk` gives its later parts.
    public var isStreamed: Bool { requestChunk != nil }
}

/// A producer's answer to `HTTPResponse.requestChunk`, handed over with `ServerHost.supplyChunk`.
public enum HTTPBodyChunk: Sendable {
    /// The next part (empty: nothing yet; the host asks again).
    case bytes([UInt8])
    /// The body is complete: the host writes the last chunk.
    case end
    /// The body cannot be completed (e.g. a store read failed): the host drops the connection
    /// without the last chunk, so the client sees the body cut short, not a shorter whole one.
    case failure
}

/// What a WebSocket upgrade request carries, for the hub to accept or refuse it.
public struct UpgradeRequest: Sendable {
    /// The decoded path, `/v1/ws` for the hub's clients.
    public var path: String
    /// Query arguments in order, decoded (a WebSocket's token comes as `?token=`).
    public var query: [(name: String, value: String)]
    /// The `Origin` header; nil when absent (not a browser).
    public var origin: String?
    /// The `Host` header, for the Origin and DNS-rebinding checks (PROTOCOL 1).
    public var host: String?
    /// The peer's numeric IP address; `--max-conns-per-ip` counts by it.
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
    /// Upgrade: the connection becomes a WebSocket session.
    case accept
    /// Refused with the error's HTTP status (401, 403, 404, 429, 503), answered as an
    /// HTTP/1.1 response with the error as its JSON body (PROTOCOL 1, 2).
    case refuse(ProtocolError)
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
    /// A declared body over `--max-body`, or over a phone endpoint's own limit (413).
    case tooLarge = "too_large"
    /// A phone endpoint's device, named in the query or the path, is not registered (404).
    case unknownDevice = "unknown_device"
    /// The address is past `--max-refusal-rate` (429).
    case rateLimited = "rate_limited"

    /// The reason of a refusal from the headers (`ServerHostDelegate.httpRefusalBeforeBody`).
    public init(beforeBody code: ErrorCode) {
        switch code {
        case .tooLarge: self = .tooLarge
        case .notFound: self = .unknownDevice
        case .rateLimited: self = .rateLimited
        default: self = .unauthorized
        }
    }
}
