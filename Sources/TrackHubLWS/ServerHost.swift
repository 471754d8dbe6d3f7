/// What the hub asks of the thing that owns its sockets. `LWSServerHost` is the real one
/// (libwebsockets); TrackHubTesting's `FakeServerHost` makes the same calls with no socket,
/// so keep-alive, slow-reader, drain and tick behaviour can be tested on a manual clock.
///
/// Threads: `start`, `run` and the per-connection calls are made on the service thread
/// (the one that calls `run`); `wake` and `requestStop` are safe from any thread.
public protocol ServerHost: AnyObject, Sendable {
    /// Receives every callback, on the service thread.
    var delegate: ServerHostDelegate? { get set }
    /// The port bound by `start()` (the first listener).
    var boundPort: Int { get }
    /// The second listener's port (`--osmand-listen`), 0 without one.
    var secondBoundPort: Int { get }

    /// Binds the listeners; throws when nothing could be bound.
    func start() throws
    /// Serves on the calling thread until `requestStop()` has been honoured.
    func run()
    /// Makes the loop call `serviceWoke()` soon (any thread).
    func wake()
    /// Makes `run()` return after closing everything (any thread).
    func requestStop()
    /// `timerFired()` every `intervalMicros` from now on.
    func startTimer(intervalMicros: Int64)

    /// Answers an HTTP request (now or later; the connection waits).
    func respond(_ id: ConnectionID, _ response: HTTPResponse)
    /// The next part of a streamed body, answering its response's `requestChunk` (see
    /// `HTTPResponse.requestChunk`). Dropped when the connection has closed meanwhile or no
    /// part was asked for.
    func supplyChunk(_ id: ConnectionID, _ chunk: HTTPBodyChunk)
    /// Asks for a `nextMessage(for:)` call when the socket can take more.
    func requestWritable(_ id: ConnectionID)
    /// Writes at once when nothing of this connection is still buffered (see `DirectWrite`).
    func writeNow(_ id: ConnectionID, _ message: OutboundMessage) -> DirectWrite
    /// True when a WebSocket peer's bytes wait unread (service thread): the hub then stops a
    /// sub-tick's writes and returns to the loop, so a fix is read before the rest are written.
    var hasInputWaiting: Bool { get }
    /// Sends a ping now; false when the connection still holds unsent bytes.
    func ping(_ id: ConnectionID) -> Bool
    /// Drops a connection without a close handshake.
    func drop(_ id: ConnectionID)
    /// True when the peer of a connection has closed or reset it (service thread). lws does
    /// not read an HTTP connection whose answer is pending, so the hub asks this of the
    /// connections waiting for slow work (a router search) to drop work nobody waits for.
    func hasPeerClosed(_ id: ConnectionID) -> Bool
    /// Closes a WebSocket connection with a code, after whatever is being written now.
    func close(_ id: ConnectionID, code: UInt16, reason: String)
}

/// What `ServerHost.writeNow` did: written, or the caller must queue it (unsent bytes are
/// still buffered, or a close is pending), or the write failed (the connection is being
/// dropped; `connectionClosed` follows).
public enum DirectWrite: Sendable { case written, mustQueue, failed }
