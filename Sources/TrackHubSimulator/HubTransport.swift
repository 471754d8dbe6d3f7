import Foundation
import TrackHubLWS
import TrackHubSync

/// The real transport: one WebSocket per rider on one `LWSClientHost`, and HTTP requests on
/// a small pool of threads with the blocking `HTTPClient`.
///
/// Thread safety: the rider/connection maps are behind a `Mutex`; `LWSClientHost` may be
/// called from any thread; the sink is `@Sendable`.
public final class HubTransport: SimulationTransport {
    private let target: WebSocketTarget
    private let http: HTTPClient
    private let useLibev: Bool
    private let state = HubMutex<State>(State())
    private let requests = DispatchGroup()
    private let requestQueue = DispatchQueue(label: "trackhub.simulate.http", attributes: .concurrent)
    private let requestSlots = DispatchSemaphore(value: 8)

    private struct State {
        var host: LWSClientHost?
        var sink: (@Sendable (TransportEvent) -> Void)?
        var riderOf: [ConnectionID: Int] = [:]
        var connectionOf: [Int: ConnectionID] = [:]
        /// Connections asked for and not closed yet (opening ones count: the hub counts a
        /// connection once it accepts it, before this side hears that it opened).
        var open: Set<ConnectionID> = []
    }

    /// A transport to the hub at `url` (`ws://HOST:PORT`, or the `http://HOST:PORT` serve
    /// prints: one port serves both), presenting `token` if given.
    /// - Parameter useLibev: the libev loop for many riders; tests use the poll loop.
    public init(url: String, token: String?, useLibev: Bool) throws(SimulatorError) {
        guard var target = WebSocketTarget(url: url) else { throw .connection("\(url) is not ws://HOST:PORT") }
        if let token {
            let escaped = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? token
            target.path += (target.path.contains("?") ? "&" : "?") + "token=" + escaped
        }
        self.target = target
        self.http = HTTPClient(host: target.host, port: target.port, token: token)
        self.useLibev = useLibev
    }

    /// Starts the WebSocket client's service thread; `sink` is then called from that thread and
    /// from the HTTP pool's threads. Call once, before `perform`.
    public func start(sink: @escaping @Sendable (TransportEvent) -> Void) throws(SimulatorError) {
        let host = LWSClientHost(delegate: ClientDelegate(transport: self), useLibev: useLibev)
        state.withLock {
            $0.sink = sink
            $0.host = host
        }
        do { try host.start() } catch { throw .connection("WebSocket client: \(error)") }
    }

    /// Carries out `action` without blocking: WebSocket actions go to the client's service thread
    /// (ignored before `start` or for a rider with no connection), HTTP calls to the pool, 8 at a time.
    public func perform(_ action: SimulationAction) {
        let rider = action.rider
        switch action.action {
        case .connect:
            state.withLock { state in
                guard let host = state.host else { return }
                let id = host.connect(target)
                state.riderOf[id] = rider
                state.connectionOf[rider] = id
                state.open.insert(id)
            }
        case .send(let text):
            let (host, id) = state.withLock { ($0.host, $0.connectionOf[rider]) }
            if let host, let id { host.send(id, text: text) }
        case .disconnect:
            let (host, id) = state.withLock { ($0.host, $0.connectionOf[rider]) }
            if let host, let id { host.close(id) }
        case .http(let call):
            let http = http
            requests.enter()
            requestQueue.async { [self] in
                requestSlots.wait()
                let answer: TransportEvent
                do {
                    let response = try http.request(call.method, call.path, body: call.body)
                    answer = .httpResponse(rider: rider, id: call.id, status: response.status, body: response.body)
                } catch {
                    answer = .httpResponse(rider: rider, id: call.id, status: 0, body: Array("\(error)".utf8))
                }
                requestSlots.signal()
                deliver(answer)
                requests.leave()
            }
        }
    }

    /// Waits at most 10 s for HTTP calls in flight, then stops the client, closing every
    /// WebSocket. Blocks until its thread has ended: never call it from the sink.
    public func stop() {
        _ = requests.wait(timeout: .now() + 10)
        let host = state.withLock { state -> LWSClientHost? in
            let host = state.host
            state.host = nil
            return host
        }
        host?.stop()
    }

    fileprivate func deliver(_ event: TransportEvent) {
        let sink = state.withLock { $0.sink }
        sink?(event)
    }

    fileprivate func rider(of id: ConnectionID) -> Int? {
        state.withLock { $0.riderOf[id] }
    }

    fileprivate func closed(_ id: ConnectionID) {
        _ = state.withLock { $0.open.remove(id) }
    }

    /// The simulator's WebSocket connections to the hub now, opening ones included
    /// (`HubViewers` takes them from the hub's count).
    public var openConnections: Int { state.withLock { $0.open.count } }
}

/// Receives the WebSocket client's callbacks (on its service thread) and forwards them.
private final class ClientDelegate: WebSocketClientDelegate {
    // Weak: the host keeps its delegate; the transport keeps the host.
    private let transport: HubMutex<WeakTransport>

    private struct WeakTransport { weak var value: HubTransport? }

    init(transport: HubTransport) { self.transport = HubMutex(WeakTransport(value: transport)) }

    private func forward(_ id: ConnectionID, _ make: (Int) -> TransportEvent) {
        guard let transport = transport.withLock({ $0.value }), let rider = transport.rider(of: id) else { return }
        transport.deliver(make(rider))
    }

    func clientOpened(_ id: ConnectionID) { forward(id) { .opened(rider: $0) } }
    func clientReceived(_ id: ConnectionID, message: [UInt8]) { forward(id) { .message(rider: $0, bytes: message) } }
    func clientClosed(_ id: ConnectionID, code: UInt16?, reason: String) {
        transport.withLock { $0.value }?.closed(id)
        forward(id) { .closed(rider: $0, code: code, reason: reason) }
    }
}
