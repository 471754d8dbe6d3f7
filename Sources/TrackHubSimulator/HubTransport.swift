import Foundation
import TrackHubLWS
import TrackHubSync

/// The real transport: one WebSocket per rider (and one per customer following a stop, the
/// rider's links) on one `LWSClientHost`, and HTTP requests on a small pool of threads with
/// the blocking `HTTPClient`.
///
/// Thread safety: the rider/connection maps are behind a `Mutex`; `LWSClientHost` may be
/// called from any thread; the sink is `@Sendable`.
public final class HubTransport: SimulationTransport {
    private let target: WebSocketTarget
    /// The WebSocket target without any token, and `--token`: a link's connection presents its own.
    private let bareTarget: WebSocketTarget
    private let token: String?
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
        /// Customers' connections: whose (rider, link) each is, and back.
        var linkOf: [ConnectionID: LinkKey] = [:]
        var connectionOfLink: [LinkKey: ConnectionID] = [:]
        /// Connections asked for and not closed yet (opening ones count: the hub counts a
        /// connection once it accepts it, before this side hears that it opened).
        var open: Set<ConnectionID> = []
    }

    /// A transport to the hub at `url` (`ws://HOST:PORT`, or the `http://HOST:PORT` serve
    /// prints: one port serves both), presenting `token` if given.
    /// - Parameter useLibev: the libev loop for many riders; tests use the poll loop.
    public init(url: String, token: String?, useLibev: Bool) throws(SimulatorError) {
        guard let target = WebSocketTarget(url: url) else { throw .connection("\(url) is not ws://HOST:PORT") }
        bareTarget = target
        self.token = token
        self.target = Self.presenting(token, to: target)
        self.http = HTTPClient(host: target.host, port: target.port, token: token)
        self.useLibev = useLibev
    }

    /// `target` with `?token=` (or `&token=`) added, escaped; `target` itself for nil.
    private static func presenting(_ token: String?, to target: WebSocketTarget) -> WebSocketTarget {
        guard let token else { return target }
        var presented = target
        let escaped = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? token
        presented.path += (presented.path.contains("?") ? "&" : "?") + "token=" + escaped
        return presented
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
            openConnection(to: target) { state, id in
                state.riderOf[id] = rider
                state.connectionOf[rider] = id
            }
        case .send(let text):
            let (host, id) = state.withLock { ($0.host, $0.connectionOf[rider]) }
            if let host, let id { host.send(id, text: text) }
        case .disconnect:
            let (host, id) = state.withLock { ($0.host, $0.connectionOf[rider]) }
            if let host, let id { host.close(id) }
        case .openLink(let link, let linkToken):
            let key = LinkKey(rider: rider, link: link)
            let target = Self.presenting(linkToken ?? token, to: bareTarget)
            openConnection(to: target) { state, id in
                state.linkOf[id] = key
                state.connectionOfLink[key] = id
            }
        case .sendLink(let link, let text):
            let (host, id) = state.withLock { ($0.host, $0.connectionOfLink[LinkKey(rider: rider, link: link)]) }
            if let host, let id { host.send(id, text: text) }
        case .closeLink(let link):
            let (host, id) = state.withLock { ($0.host, $0.connectionOfLink[LinkKey(rider: rider, link: link)]) }
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

    /// Whose connection `id` is: a rider's own, or one of its customers'.
    fileprivate func owner(of id: ConnectionID) -> ConnectionOwner? {
        state.withLock { state in
            if let rider = state.riderOf[id] { return .rider(rider) }
            return state.linkOf[id].map { .link($0) }
        }
    }

    fileprivate func closed(_ id: ConnectionID) {
        state.withLock { state in
            state.open.remove(id)
            // A customer's connection is not reused: forget it (a rider's stays for its reports).
            if let key = state.linkOf.removeValue(forKey: id), state.connectionOfLink[key] == id {
                state.connectionOfLink[key] = nil
            }
        }
    }

    /// The simulator's WebSocket connections to the hub now, opening ones included
    /// (`HubViewers` takes them from the hub's count).
    public var openConnections: Int { state.withLock { $0.open.count } }

    /// Opens a connection to `target` (nothing before `start`) and lets `register` note whose
    /// it is, under the same lock, so its first callback finds it registered.
    private func openConnection(to target: WebSocketTarget, register: (inout State, ConnectionID) -> Void) {
        state.withLock { state in
            guard let host = state.host else { return }
            let id = host.connect(target)
            register(&state, id)
            state.open.insert(id)
        }
    }
}

/// Receives the WebSocket client's callbacks (on its service thread) and forwards them.
private final class ClientDelegate: WebSocketClientDelegate {
    // Weak: the host keeps its delegate; the transport keeps the host.
    private let transport: HubMutex<WeakTransport>

    private struct WeakTransport { weak var value: HubTransport? }

    init(transport: HubTransport) { self.transport = HubMutex(WeakTransport(value: transport)) }

    private func forward(_ owner: ConnectionOwner?, _ make: (ConnectionOwner) -> TransportEvent) {
        guard let transport = transport.withLock({ $0.value }), let owner else { return }
        transport.deliver(make(owner))
    }

    private func owner(_ id: ConnectionID) -> ConnectionOwner? { transport.withLock { $0.value }?.owner(of: id) }

    func clientOpened(_ id: ConnectionID) {
        forward(owner(id)) { owner in
            switch owner {
            case .rider(let rider): .opened(rider: rider)
            case .link(let key): .linkOpened(rider: key.rider, link: key.link)
            }
        }
    }

    func clientReceived(_ id: ConnectionID, message: [UInt8]) {
        forward(owner(id)) { owner in
            switch owner {
            case .rider(let rider): .message(rider: rider, bytes: message)
            case .link(let key): .linkMessage(rider: key.rider, link: key.link, bytes: message)
            }
        }
    }

    func clientClosed(_ id: ConnectionID, code: UInt16?, reason: String) {
        // Who it was, read before `closed` forgets a customer's connection.
        let whose = owner(id)
        transport.withLock { $0.value }?.closed(id)
        forward(whose) { owner in
            switch owner {
            case .rider(let rider): .closed(rider: rider, code: code, reason: reason)
            case .link(let key): .linkClosed(rider: key.rider, link: key.link, code: code, reason: reason)
            }
        }
    }
}

/// A customer's connection: the rider whose trip it follows and the rider's link number.
struct LinkKey: Hashable, Sendable {
    var rider: Int
    var link: Int
}

/// Whose a simulator connection is.
enum ConnectionOwner: Sendable {
    /// A rider's own WebSocket.
    case rider(Int)
    /// A customer's WebSocket, following one of the rider's stops.
    case link(LinkKey)
}
