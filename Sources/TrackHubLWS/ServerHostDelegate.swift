import TrackHubProtocol

/// What the server host reports to the code above it (the hub). Every call comes on the
/// service thread. No C type crosses it: the hub could be driven by a fake host that makes
/// the same calls.
public protocol ServerHostDelegate: AnyObject {
    /// A WebSocket upgrade: accept it or refuse it with an HTTP status.
    func upgradeRequested(_ request: UpgradeRequest) -> UpgradeDecision
    /// An accepted upgrade is now an open WebSocket connection.
    func connectionOpened(_ id: ConnectionID, request: UpgradeRequest)
    /// One whole text message (fragments already joined, size already checked).
    func connectionReceived(_ id: ConnectionID, message: [UInt8])
    /// `close`: who sent which close code, for the log line (PROTOCOL 14).
    func connectionClosed(_ id: ConnectionID, close: WebSocketClose)
    /// A pong came back.
    func connectionAnsweredPing(_ id: ConnectionID)
    /// The socket can take one more message: the delegate hands it over (nil: nothing waits).
    func nextMessage(for id: ConnectionID) -> (message: OutboundMessage, hasMore: Bool)?
    /// A whole HTTP request (body read, framing checked): answer it with `respond`, now or later.
    func httpRequest(_ request: HTTPRequest)
    /// A refusal from the headers alone, before a body of `declaredLength` bytes is read: a
    /// secured hub's 401 (the body of a request without a valid token is never read,
    /// PROTOCOL 1), a phone endpoint's 404 for an unknown device or 413 past its own body
    /// limit (PROTOCOL 11), a 429 past `--max-refusal-rate`; nil: read the body.
    func httpRefusalBeforeBody(_ request: HTTPRequest, declaredLength: Int) -> ProtocolError?
    /// The host answered a request itself without running it (framing, body timeout, too
    /// many connections, body too large): for metrics and logs.
    func httpRefused(_ request: HTTPRequest, reason: HTTPRefusalReason)
    /// The last byte of an answer went to lws (status 0: the connection closed before a
    /// whole answer was written); `durationSeconds` from the end of its headers. For the
    /// access log.
    func httpCompleted(request: HTTPRequest, status: Int, durationSeconds: Double)
    /// Headers every answer to this request carries, the host's own refusals included (CORS).
    func responseHeaders(for request: HTTPRequest) -> [(name: String, value: String)]
    /// `wake()` was called from some thread (possibly several times: draining must be idempotent).
    func serviceWoke()
    /// The periodic timer fired.
    func timerFired()
}
