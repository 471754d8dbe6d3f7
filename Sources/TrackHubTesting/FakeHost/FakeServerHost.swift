import Dispatch
import TrackHubLWS
import TrackHubSync

/// A `ServerHost` with no sockets: the test plays the peers (open, send, stop reading,
/// close), the hub's writes are recorded per connection, and the timer fires only when the
/// test calls `fireTimer()`. Every delegate call is made on the service thread (the one in
/// `run()`), as libwebsockets makes them, so the hub runs exactly as in production.
///
/// Test calls are safe from any thread: each is queued to the service thread; the `…AndWait`
/// forms return once it has run there.
public final class FakeServerHost: ServerHost, @unchecked Sendable {
    /// The hub; set before `run`, then touched and called only on the service thread.
    public var delegate: ServerHostDelegate?
    /// Always 0: nothing is bound.
    public let boundPort = 0
    /// Always 0: there is no second listener.
    public let secondBoundPort = 0
    private var nextConnection: UInt64 = 1
    /// Whole answers, streamed ones joined, until `requestAndWait` takes them.
    private var responses: [ConnectionID: HTTPResponse] = [:]
    /// Streamed answers being joined: the response with the body received so far.
    private var streaming: [ConnectionID: HTTPResponse] = [:]
    /// Streamed answers whose next part was asked for and is not in yet.
    private var partsAsked: Set<ConnectionID> = []
    /// Signalled when the answer to a `requestAndWait` is whole.
    private var answerWaiters: [ConnectionID: DispatchSemaphore] = [:]

    private struct Shared {
        var work: [@Sendable (FakeServerHost) -> Void] = []
        /// A `serviceWoke` call is queued (wakes coalesce, as `lws_cancel_service` does).
        var wakeQueued = false
        var stopRequested = false
        var connections: [ConnectionID: FakeConnection] = [:]
        var timerIntervalMicros: Int64 = 0
        /// Peer messages sent and not yet handed to the hub (what `hasInputWaiting` reports).
        var sendsWaiting = 0
        /// Every write to any connection, in the order the host made them.
        var writeLog: [(id: ConnectionID, text: String)] = []
    }
    private let shared = HubMutex(Shared())
    private let bell = DispatchSemaphore(value: 0)
    /// Called on the service thread after each write (`onWrite`).
    private var writeHook: (@Sendable (FakeServerHost, ConnectionID, String) -> Void)?

    /// A host with no connections and no timer; `Hub.start` then calls `start` and `run` on the
    /// hub's service thread.
    public init() {}

    // MARK: - ServerHost (the hub's side)

    /// Does nothing: there is nothing to bind.
    public func start() throws {}

    /// Serves on the calling thread (the service thread): runs the queued work in order (peer
    /// events, wakes, test calls), then the writeable callbacks asked for, until `requestStop`;
    /// then ends every open connection (`connectionClosed`, no close code) and returns.
    public func run() {
        while true {
            bell.wait()
            let (work, stop) = shared.withLock { state in
                defer { state.work.removeAll() }
                return (state.work, state.stopRequested)
            }
            for item in work { item(self) }
            pumpWritable()
            if stop {
                closeEverything()
                return
            }
        }
    }

    /// Queues one `serviceWoke()` after what the peers sent before it, so events keep the
    /// order they happened in.
    public func wake() {
        let queued: Bool = shared.withLock { state in
            if state.wakeQueued { return false }
            state.wakeQueued = true
            return true
        }
        if queued {
            enqueue { host in
                host.shared.withLock { $0.wakeQueued = false }
                host.delegate?.serviceWoke()
            }
        }
    }

    /// Makes `run` return after the work queued before this call and after ending every open
    /// connection (any thread).
    public func requestStop() {
        shared.withLock { $0.stopRequested = true }
        bell.signal()
    }

    /// Only records the interval (`timerIntervalMicros`): the timer never fires by itself, only
    /// at `fireTimer` / `fireTimerAndWait`.
    public func startTimer(intervalMicros: Int64) {
        shared.withLock { $0.timerIntervalMicros = intervalMicros }
    }

    /// A whole answer is recorded at once; a streamed one is joined by pulling its parts as
    /// lws does (one asked for at a time), so a producer that answers later works here too.
    public func respond(_ id: ConnectionID, _ response: HTTPResponse) {
        guard response.isStreamed else { return answered(id, response) }
        streaming[id] = response
        askForPart(id)
    }

    /// A streamed answer's next part. `.failure` records what came so far (a client would
    /// see the body cut short). The next part is asked for from the loop, not from inside
    /// this call, so a producer that answers at once does not recurse.
    public func supplyChunk(_ id: ConnectionID, _ chunk: HTTPBodyChunk) {
        guard partsAsked.remove(id) != nil, var joined = streaming[id] else { return }
        switch chunk {
        case .bytes(let more):
            joined.body += more
            streaming[id] = joined
            enqueue { host in host.askForPart(id) }
        case .end, .failure:
            streaming[id] = nil
            joined.requestChunk = nil
            answered(id, joined)
        }
    }

    private func askForPart(_ id: ConnectionID) {
        guard let requestChunk = streaming[id]?.requestChunk, !partsAsked.contains(id) else { return }
        partsAsked.insert(id)
        requestChunk(id)
    }

    private func answered(_ id: ConnectionID, _ response: HTTPResponse) {
        responses[id] = response
        answerWaiters.removeValue(forKey: id)?.signal()
    }

    /// Asks for `nextMessage(for:)` calls, made after the current work while the peer reads
    /// (otherwise once `setReading` lets it read again).
    public func requestWritable(_ id: ConnectionID) {
        shared.withLock { $0.connections[id]?.wantsWritable = true }
        bell.signal()  // served after the current callback, as lws would
    }

    /// Records the message as received at once while the peer reads; `.mustQueue` while it does
    /// not (`setReading`), `.failed` once the connection is closed or a close is pending.
    public func writeNow(_ id: ConnectionID, _ message: OutboundMessage) -> DirectWrite {
        let text = String(decoding: message.payload, as: UTF8.self)
        let outcome: DirectWrite = shared.withLock { state in
            guard let connection = state.connections[id], !connection.isClosed, connection.closedWith == nil else { return .failed }
            guard connection.isReading else { return .mustQueue }
            state.connections[id]?.received.append(text)
            state.writeLog.append((id, text))
            return .written
        }
        if case .written = outcome { writeHook?(self, id, text) }
        return outcome
    }

    /// A peer's message has been sent and the hub has not been handed it yet (the loop has
    /// input to read), as a socket with unread bytes would be.
    public var hasInputWaiting: Bool { shared.withLock { $0.sendsWaiting > 0 } }

    /// Counts a ping (`FakeConnection.pings`); false while the peer does not read or after the
    /// connection closed. A peer that answers pings makes `connectionAnsweredPing` follow on the
    /// service thread.
    public func ping(_ id: ConnectionID) -> Bool {
        let answered: Bool? = shared.withLock { state in
            guard let connection = state.connections[id], connection.isReading, !connection.isClosed else { return nil }
            state.connections[id]?.pings += 1
            return connection.answersPings
        }
        guard let answered else { return false }
        if answered { enqueue { host in host.delegate?.connectionAnsweredPing(id) } }
        return true
    }

    /// A fake connection's peer has closed once the connection is closed.
    public func hasPeerClosed(_ id: ConnectionID) -> Bool {
        shared.withLock { $0.connections[id]?.isClosed ?? true }
    }

    /// Marks the connection dropped (`wasDropped`) and ends it with no close code;
    /// `connectionClosed` follows on the service thread.
    public func drop(_ id: ConnectionID) {
        shared.withLock { $0.connections[id]?.wasDropped = true }
        enqueue { host in host.end(id, .none) }
    }

    /// Records the hub's close (`closedWith`) and ends the connection; `connectionClosed` follows
    /// on the service thread. A second close of the same connection is ignored.
    public func close(_ id: ConnectionID, code: UInt16, reason: String) {
        let isNew: Bool = shared.withLock { state in
            guard state.connections[id]?.closedWith == nil else { return false }
            state.connections[id]?.closedWith = (code, reason)
            return true
        }
        if isNew { enqueue { host in host.end(id, .hub(code)) } }
    }

    // MARK: - The test's side (any thread)

    /// Opens a WebSocket connection (`/v1/ws` with `query`); nil when the hub refused it.
    public func openAndWait(query: [(name: String, value: String)] = [], peerAddress: String = "127.0.0.1") -> ConnectionID? {
        onServiceThreadAndWait { host in
            let request = UpgradeRequest(path: "/v1/ws", query: query, peerAddress: peerAddress)
            guard case .accept = host.delegate?.upgradeRequested(request) else { return nil }
            let id = ConnectionID(raw: host.nextConnection)
            host.nextConnection += 1
            host.shared.withLock { $0.connections[id] = FakeConnection() }
            host.delegate?.connectionOpened(id, request: request)
            return id
        }
    }

    /// The peer sends one text message.
    public func send(_ id: ConnectionID, _ text: String) {
        shared.withLock { $0.sendsWaiting += 1 }
        enqueue { host in
            host.shared.withLock { $0.sendsWaiting -= 1 }
            host.delegate?.connectionReceived(id, message: Array(text.utf8))
        }
    }

    /// Calls `hook` on the service thread after every write the hub makes, with what was
    /// written (a test can play a peer sending in the middle of a sub-tick's writes).
    public func onWrite(_ hook: @escaping @Sendable (FakeServerHost, ConnectionID, String) -> Void) {
        onServiceThreadAndWait { host in host.writeHook = hook }
    }

    /// Every write to any connection so far, in the order the host made them.
    public var writeLog: [(id: ConnectionID, text: String)] { shared.withLock { $0.writeLog } }

    /// The peer stops (false) or starts again (true) reading its socket.
    public func setReading(_ id: ConnectionID, _ reading: Bool) {
        shared.withLock { $0.connections[id]?.isReading = reading }
        bell.signal()
    }

    /// Whether the peer answers pings.
    public func setAnswersPings(_ id: ConnectionID, _ answers: Bool) {
        shared.withLock { $0.connections[id]?.answersPings = answers }
    }

    /// The peer closes with `code`.
    public func peerClose(_ id: ConnectionID, code: UInt16 = 1000) {
        enqueue { host in host.end(id, .peer(code)) }
    }

    /// The periodic timer fires once (`timerFired()` on the service thread).
    public func fireTimer() {
        enqueue { host in host.delegate?.timerFired() }
    }

    /// The timer fires once; returns after the hub has handled it (and what it queued before).
    public func fireTimerAndWait() {
        onServiceThreadAndWait { host in host.delegate?.timerFired() }
    }

    /// One HTTP request, answered when the hub responds (a streamed body joined; nil when no
    /// whole answer came within `timeout` seconds). Waits on a semaphore the answer signals.
    public func requestAndWait(_ method: HTTPMethod, _ path: String, body: String = "", authorization: String? = nil, timeout: Double = 10) -> HTTPResponse? {
        let whole = DispatchSemaphore(value: 0)
        let id: ConnectionID = onServiceThreadAndWait { host in
            let id = ConnectionID(raw: host.nextConnection)
            host.nextConnection += 1
            host.answerWaiters[id] = whole
            host.delegate?.httpRequest(HTTPRequest(connection: id, method: method, path: path, authorization: authorization, peerAddress: "127.0.0.1", body: Array(body.utf8)))
            return id
        }
        _ = whole.wait(timeout: .now() + timeout)
        // Taken either way (nil when none came in time): nothing is left behind.
        return onServiceThreadAndWait { host -> HTTPResponse? in
            host.answerWaiters[id] = nil
            return host.responses.removeValue(forKey: id)
        }
    }

    /// What the host saw of a connection so far.
    public func connection(_ id: ConnectionID) -> FakeConnection? {
        shared.withLock { $0.connections[id] }
    }

    /// The timer interval the hub asked for (0 before `start`).
    public var timerIntervalMicros: Int64 { shared.withLock { $0.timerIntervalMicros } }

    /// Runs `body` on the service thread and returns its result.
    public func onServiceThreadAndWait<Result: Sendable>(_ body: @escaping @Sendable (FakeServerHost) -> Result) -> Result {
        let done = DispatchSemaphore(value: 0)
        let result = HubMutex<Result?>(nil)
        enqueue { host in
            let value = body(host)
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        guard let value = result.withLock({ $0 }) else { preconditionFailure("the service thread ran the work and stored its result") }
        return value
    }

    // MARK: - The loop

    private func enqueue(_ work: @escaping @Sendable (FakeServerHost) -> Void) {
        shared.withLock { $0.work.append(work) }
        bell.signal()
    }

    /// Serves the writeable callbacks asked for, for peers that read: as lws does, one
    /// message per callback, asking again while the hub says it has more.
    private func pumpWritable() {
        while true {
            let ready: [ConnectionID] = shared.withLock { state in
                let ids = state.connections.filter { $0.value.wantsWritable && $0.value.isReading && !$0.value.isClosed }.map(\.key)
                for id in ids { state.connections[id]?.wantsWritable = false }
                return ids
            }
            if ready.isEmpty { return }
            for id in ready {
                while let next = delegate?.nextMessage(for: id) {
                    let text = String(decoding: next.message.payload, as: UTF8.self)
                    shared.withLock { state in
                        state.connections[id]?.received.append(text)
                        state.writeLog.append((id, text))
                    }
                    writeHook?(self, id, text)
                    if !next.hasMore { break }
                }
            }
        }
    }

    private func end(_ id: ConnectionID, _ close: WebSocketClose) {
        let wasOpen: Bool = shared.withLock { state in
            guard let connection = state.connections[id], !connection.isClosed else { return false }
            state.connections[id]?.isClosed = true
            return true
        }
        if wasOpen { delegate?.connectionClosed(id, close: close) }
    }

    private func closeEverything() {
        let open = shared.withLock { $0.connections.filter { !$0.value.isClosed }.map(\.key) }
        for id in open { end(id, .none) }
    }
}
