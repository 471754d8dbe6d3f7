import Foundation
import TrackHubLWS
import TrackHubProtocol
import TrackHubSync

/// WebSocket test clients on one libwebsockets client context (poll loop). Each
/// connection's messages are kept in order; tests wait for them with deadlines.
///
/// Thread safety (`@unchecked Sendable`): `state` is behind its `Mutex`; `condition` only
/// wakes waiters; `host` is set once in `init` and is itself safe from any thread.
public final class TestClients: WebSocketClientDelegate, @unchecked Sendable {
    /// What this throws (`TestFailure`): a timeout, or a connection refused or closed while waited on.
    public typealias Failure = TestFailure

    struct State {
        var opened: Set<ConnectionID> = []
        var inbox: [ConnectionID: [[UInt8]]] = [:]
        var closed: [ConnectionID: (code: UInt16?, reason: String)] = [:]
    }
    private let state = HubMutex(State())
    private let condition = NSCondition()
    /// The client host every connection of this set runs on.
    public private(set) var host: LWSClientHost!

    /// Starts the client host (its own thread, the poll loop).
    public init() throws {
        host = LWSClientHost(delegate: self)
        try host.start()
    }

    /// Closes every connection and stops the client host.
    public func stop() { host.stop() }

    /// Connects and waits until the connection is open.
    public func connect(port: Int, path: String = "/v1/ws", origin: String? = nil, offerSubprotocol: Bool = true, timeout: Double = 10) throws -> TestConnection {
        let id = host.connect(WebSocketTarget(host: "127.0.0.1", port: port, path: path, origin: origin, offerSubprotocol: offerSubprotocol))
        try waitFor(timeout: timeout, what: "connection \(id) to open") { state in
            if let closed = state.closed[id] { throw Failure(description: "connection refused: \(closed.reason)") }
            return state.opened.contains(id)
        }
        return TestConnection(clients: self, id: id)
    }

    /// Connects and returns without waiting (the caller checks `closeInfo`).
    public func connectNoWait(port: Int, path: String = "/v1/ws", origin: String? = nil) -> TestConnection {
        TestConnection(clients: self, id: host.connect(WebSocketTarget(host: "127.0.0.1", port: port, path: path, origin: origin)))
    }

    /// Delegate call (the client host's service thread): wakes `connect`'s wait.
    public func clientOpened(_ id: ConnectionID) {
        state.withLock { _ = $0.opened.insert(id) }
        signal()
    }

    /// Delegate call (the client host's service thread): queues the message for its connection
    /// and wakes the waiters.
    public func clientReceived(_ id: ConnectionID, message: [UInt8]) {
        state.withLock { $0.inbox[id, default: []].append(message) }
        signal()
    }

    /// Delegate call (the client host's service thread): records the close (`closeInfo`); a
    /// waiter on that connection then fails instead of timing out.
    public func clientClosed(_ id: ConnectionID, code: UInt16?, reason: String) {
        state.withLock { $0.closed[id] = (code, reason) }
        signal()
    }

    private func signal() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `check` returns a value, or throws after `timeout` seconds.
    func waitFor<T>(timeout: Double, what: String, _ check: (inout State) throws -> T?) throws -> T {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let value = try state.withLock({ try check(&$0) }) { return value }
            if Date() >= deadline { throw Failure(description: "timed out waiting for \(what)") }
            _ = condition.wait(until: min(deadline, Date().addingTimeInterval(0.05)))
        }
    }

    func waitFor(timeout: Double, what: String, _ check: (inout State) throws -> Bool) throws {
        let _: Bool = try waitFor(timeout: timeout, what: what) { state -> Bool? in try check(&state) ? true : nil }
    }

    func takeAll(_ id: ConnectionID) -> [[UInt8]] {
        state.withLock { state in
            let messages = state.inbox[id] ?? []
            state.inbox[id] = []
            return messages
        }
    }

    func closeInfo(_ id: ConnectionID) -> (code: UInt16?, reason: String)? {
        state.withLock { $0.closed[id] }
    }

    /// Takes the first queued message that `accepting` (reading it in place: `type`, `re`)
    /// and then `matching` (on the decoded object) let through; waits for one.
    func take(
        _ id: ConnectionID, timeout: Double, what: String, accepting: (ServerMessage) -> Bool = { _ in true },
        matching: ([String: Any]) -> Bool
    ) throws -> (json: [String: Any], raw: [UInt8]) {
        try waitFor(timeout: timeout, what: what) { state -> (json: [String: Any], raw: [UInt8])? in
            guard var messages = state.inbox[id] else {
                if let closed = state.closed[id] { throw Failure(description: "closed (\(closed.code.map(String.init) ?? "-")) while waiting for \(what)") }
                return nil
            }
            for (index, raw) in messages.enumerated() {
                let message = ServerMessage(raw)
                // Only messages that pass the cheap check are decoded whole.
                guard accepting(message), let json = message.foundationObject() else { continue }
                if matching(json) {
                    messages.remove(at: index)
                    state.inbox[id] = messages
                    return (json, raw)
                }
            }
            if let closed = state.closed[id] { throw Failure(description: "closed (\(closed.code.map(String.init) ?? "-")) while waiting for \(what)") }
            return nil
        }
    }
}

/// One test connection.
public struct TestConnection {
    /// The set the connection belongs to: its host sends, its inbox holds the messages.
    public let clients: TestClients
    /// The connection's id on `clients.host`.
    public let id: ConnectionID

    /// A handle on connection `id` of `clients` (one opened with `clients.host.connect`).
    public init(clients: TestClients, id: ConnectionID) {
        self.clients = clients
        self.id = id
    }

    /// Sends a JSON object as one text message.
    public func send(_ object: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: object)
        clients.host.send(id, text: String(decoding: data, as: UTF8.self))
    }

    /// Sends text as it is.
    public func sendText(_ text: String) {
        clients.host.send(id, text: text)
    }

    /// Closes the connection (normal closure).
    public func close() { clients.host.close(id) }

    /// The next message (in arrival order) for which `matching` holds; earlier others stay queued.
    @discardableResult
    public func next(_ what: String = "a message", timeout: Double = 10, matching: @escaping ([String: Any]) -> Bool = { _ in true }) throws -> [String: Any] {
        try clients.take(id, timeout: timeout, what: what, matching: matching).json
    }

    /// The next message of a type (and, optionally, with `re`).
    @discardableResult
    public func next(type: String, re: Int? = nil, timeout: Double = 10, where extra: @escaping ([String: Any]) -> Bool = { _ in true }) throws -> [String: Any] {
        try clients.take(id, timeout: timeout, what: "\(type)\(re.map { " re \($0)" } ?? "")", accepting: { message in
            message.string("type") == type && (re == nil || message.int("re") == re.map(Int64.init))
        }, matching: extra).json
    }

    /// The raw bytes of the next message of a type.
    public func nextRaw(type: String, timeout: Double = 10, where extra: @escaping ([String: Any]) -> Bool = { _ in true }) throws -> [UInt8] {
        try clients.take(id, timeout: timeout, what: type, accepting: { $0.string("type") == type }, matching: extra).raw
    }

    /// Sends a message with an id and waits for the reply that carries it.
    @discardableResult
    public func request(_ object: [String: Any], id requestID: Int, timeout: Double = 10) throws -> [String: Any] {
        var message = object
        message["id"] = requestID
        try send(message)
        return try clients.take(id, timeout: timeout, what: "reply to \(object["op"] ?? "?") id \(requestID)", accepting: {
            $0.int("re") == Int64(requestID)
        }, matching: { _ in true }).json
    }

    /// Everything received and not yet taken, decoded.
    public func drain() -> [[String: Any]] {
        clients.takeAll(id).compactMap { ServerMessage($0).foundationObject() }
    }

    /// Waits until the hub closed this connection; returns the close code (nil: no close frame).
    public func waitClosed(timeout: Double = 10) throws -> UInt16? {
        try clients.waitFor(timeout: timeout, what: "connection \(id) to close") { state -> UInt16?? in
            guard let closed = state.closed[id] else { return nil }
            return .some(closed.code)
        }
    }

    /// How the connection closed (code and reason), nil while it is open.
    public var closeInfo: (code: UInt16?, reason: String)? { clients.closeInfo(id) }
}
