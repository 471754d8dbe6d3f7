import CLibWebSockets
import Foundation
import TrackHubSync

/// What a WebSocket client connection reports. Calls come on the client's service thread.
public protocol WebSocketClientDelegate: AnyObject, Sendable {
    /// The upgrade succeeded; `send` may be called from now on.
    func clientOpened(_ id: ConnectionID)
    /// One whole message from the server, its fragments joined.
    func clientReceived(_ id: ConnectionID, message: [UInt8])
    /// The connection ended; `code` is the close code the server sent, if any.
    func clientClosed(_ id: ConnectionID, code: UInt16?, reason: String)
    /// Ran on the service thread each time the loop is woken (optional work hook).
    func clientServiceWoke()
}

extension WebSocketClientDelegate {
    /// Does nothing: a delegate without work of its own on the service thread.
    public func clientServiceWoke() {}
}

/// Where to connect.
public struct WebSocketTarget: Sendable {
    /// The server's host name or address.
    public var host: String
    /// The server's TCP port.
    public var port: Int
    /// The request path of the upgrade (default `/v1/ws`).
    public var path: String
    /// `wss://` rather than `ws://`.
    public var useTLS: Bool
    /// An `Origin` header to send, as a browser would; nil: none.
    public var origin: String?
    /// Whether to offer the `trackhub.v1` subprotocol (false: test a client that offers none).
    public var offerSubprotocol: Bool

    /// A target; by default the hub's WebSocket path, plain `ws://`, no Origin, subprotocol offered.
    public init(host: String, port: Int, path: String = "/v1/ws", useTLS: Bool = false, origin: String? = nil, offerSubprotocol: Bool = true) {
        self.host = host
        self.port = port
        self.path = path
        self.useTLS = useTLS
        self.origin = origin
        self.offerSubprotocol = offerSubprotocol
    }

    /// Parses `ws://HOST:PORT[/path]` or `wss://…`; the path defaults to `/v1/ws`.
    public init?(url: String) {
        var rest = Substring(url)
        if rest.hasPrefix("ws://") { useTLS = false; rest = rest.dropFirst(5) }
        else if rest.hasPrefix("wss://") { useTLS = true; rest = rest.dropFirst(6) }
        else if rest.hasPrefix("http://") { useTLS = false; rest = rest.dropFirst(7) }
        else if rest.hasPrefix("https://") { useTLS = true; rest = rest.dropFirst(8) }
        else { return nil }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        let pathPart = rest[slash...]
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) else { return nil }
        host = String(authority[..<colon])
        self.port = port
        path = pathPart.isEmpty || pathPart == "/" ? "/v1/ws" : String(pathPart)
        origin = nil
        offerSubprotocol = true
    }
}

/// Many WebSocket client connections on one libwebsockets context and one thread.
/// The load generator, the simulator and the tests use it.
///
/// Thread safety (`@unchecked Sendable`): `connect`, `send`, `close` and `stop` may be
/// called from any thread: they go through the `inbox` mutex and `lws_cancel_service`.
/// Everything else is touched only on the service thread.
public final class LWSClientHost: @unchecked Sendable {
    /// Hears every connection's events, on the service thread.
    public let delegate: WebSocketClientDelegate
    private let useLibev: Bool
    private var context: OpaquePointer?
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolName: UnsafeMutablePointer<CChar>
    private var thread: Thread?
    private let finished = HubMutex<Bool>(false)
    private let finishedSignal = DispatchSemaphore(value: 0)

    private enum Command {
        case connect(ConnectionID, WebSocketTarget)
        case send(ConnectionID, OutboundMessage)
        case close(ConnectionID)
    }
    private struct Inbox {
        var commands: [Command] = []
        var stopping = false
        var nextID: UInt64 = 1
        var destroyed = false
    }
    private let inbox = HubMutex<Inbox>(Inbox())

    // Service-thread state.
    private var sockets: [ConnectionID: OpaquePointer] = [:]
    private var outgoing: [ConnectionID: [OutboundMessage]] = [:]
    private var incoming: [ConnectionID: [UInt8]] = [:]
    private var closeCodes: [ConnectionID: (UInt16, String)] = [:]
    private var closeRequested: Set<ConnectionID> = []
    private var cStrings: [ConnectionID: [UnsafeMutablePointer<CChar>]] = [:]
    private var destroyed = false

    /// - Parameter useLibev: the libev loop scales to thousands of connections; only one
    ///   lws-owned libev loop may exist per process, so tests use the poll loop.
    public init(delegate: WebSocketClientDelegate, useLibev: Bool = false) {
        self.delegate = delegate
        self.useLibev = useLibev
        protocolName = strdup("trackhub.v1")
        protocols = .allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
    }

    deinit {
        free(protocolName)
        protocols.deallocate()
    }

    /// Creates the context and starts its thread.
    public func start() throws {
        let ready = DispatchSemaphore(value: 0)
        let failed = HubMutex<Bool>(false)
        let thread = Thread { [self] in
            trackhub_lws_quiet_logs()
            protocols[0].name = UnsafePointer(protocolName)
            protocols[0].callback = lwsClientCallback
            protocols[0].per_session_data_size = 0
            protocols[0].rx_buffer_size = 4096
            var info = lws_context_creation_info()
            info.port = -1  // CONTEXT_PORT_NO_LISTEN
            info.protocols = UnsafePointer(protocols)
            info.user = Unmanaged.passUnretained(self).toOpaque()
            info.options = trackhub_opt_do_ssl_global_init()
            if useLibev { info.options |= trackhub_opt_libev() }
            info.fd_limit_per_thread = 0
            guard let context = lws_create_context(&info) else {
                failed.withLock { $0 = true }
                ready.signal()
                finishedSignal.signal()
                return
            }
            self.context = context
            ready.signal()
            while !destroyed {
                if lws_service(context, 0) < 0 { break }
                if !useLibev && isStopping && !destroyed { destroyNow() }
            }
            if !destroyed { destroyNow() }
            finished.withLock { $0 = true }
            finishedSignal.signal()
        }
        thread.name = "trackhub-ws-client"
        thread.stackSize = 1 << 20
        self.thread = thread
        thread.start()
        ready.wait()
        if failed.withLock({ $0 }) {
            throw ServerHostError.contextCreationFailed("could not create the WebSocket client context")
        }
    }

    /// Opens a connection; the delegate hears `clientOpened` or `clientClosed`.
    @discardableResult
    public func connect(_ target: WebSocketTarget) -> ConnectionID {
        let id = inbox.withLock { state -> ConnectionID in
            let id = ConnectionID(raw: state.nextID)
            state.nextID += 1
            state.commands.append(.connect(id, target))
            return id
        }
        wake()
        return id
    }

    /// Queues a text message.
    public func send(_ id: ConnectionID, text: String) {
        send(id, message: OutboundMessage(payload: Array(text.utf8)))
    }

    /// Queues an encoded message (the same instance may go to many connections).
    public func send(_ id: ConnectionID, message: OutboundMessage) {
        inbox.withLock { $0.commands.append(.send(id, message)) }
        wake()
    }

    /// Queues many messages under one lock and one wake-up (a scheduler's batch of sends).
    public func send(batch: [(ConnectionID, OutboundMessage)]) {
        guard !batch.isEmpty else { return }
        inbox.withLock { state in
            for (id, message) in batch { state.commands.append(.send(id, message)) }
        }
        wake()
    }

    /// Closes one connection (normal closure).
    public func close(_ id: ConnectionID) {
        inbox.withLock { $0.commands.append(.close(id)) }
        wake()
    }

    /// Stops the loop, closing every connection, and waits for the thread to end.
    public func stop() {
        let alreadyFinished = finished.withLock { $0 }
        if alreadyFinished { return }
        inbox.withLock { $0.stopping = true }
        wake()
        finishedSignal.wait()
    }

    /// Wakes the service thread: the delegate's `clientServiceWoke` runs there soon after.
    /// A timer thread calling this gives the delegate a periodic hook on the loop's thread.
    public func wakeService() {
        wake()
    }

    private var isStopping: Bool { inbox.withLock { $0.stopping } }

    private func wake() {
        inbox.withLock { state in
            if let context, !state.destroyed { lws_cancel_service(context) }
        }
    }

    private func destroyNow() {
        guard let context, !destroyed else { return }
        destroyed = true
        inbox.withLock { $0.destroyed = true }
        lws_context_destroy(context)
    }

    // MARK: - Service thread

    /// Writes one text message. Client frames are masked in place: lws gets its own copy of
    /// the (possibly shared) bytes.
    private func write(_ message: OutboundMessage, to wsi: OpaquePointer) -> Int32 {
        let copy = OutboundMessage(payload: message.payload)
        return copy.withPayloadPointer { trackhub_lws_write_text(wsi, $0, $1) }
    }

    private func drainInbox() {
        let commands = inbox.withLock { state -> [Command] in
            let taken = state.commands
            state.commands.removeAll(keepingCapacity: true)
            return taken
        }
        for command in commands {
            switch command {
            case .connect(let id, let target): openConnection(id, target)
            case .send(let id, let message):
                guard let wsi = sockets[id] else { continue }
                if outgoing[id]?.isEmpty ?? true, lws_partial_buffered(wsi) == 0, !closeRequested.contains(id) {
                    // Nothing waiting: write now. Waiting for the writeable callback costs a
                    // loop turn, which on a busy loop (a load generator reading 100 000
                    // frames a second) delayed a courier's fix by tens of milliseconds.
                    if write(message, to: wsi) < 0 { trackhub_lws_kill_async(wsi) }
                    continue
                }
                outgoing[id, default: []].append(message)
                lws_callback_on_writable(wsi)
            case .close(let id):
                guard let wsi = sockets[id] else { continue }
                closeRequested.insert(id)
                lws_callback_on_writable(wsi)
            }
        }
        delegate.clientServiceWoke()
    }

    private func openConnection(_ id: ConnectionID, _ target: WebSocketTarget) {
        guard let context else { return }
        let address = strdup(target.host)
        let path = strdup(target.path)
        let hostHeader = strdup("\(target.host):\(target.port)")
        let origin = target.origin.map { strdup($0) } ?? nil
        let strings = [address, path, hostHeader, origin].compactMap { $0 }
        cStrings[id] = strings
        var info = lws_client_connect_info()
        info.context = context
        info.address = UnsafePointer(address)
        info.port = Int32(target.port)
        info.path = UnsafePointer(path)
        info.host = UnsafePointer(hostHeader)
        info.origin = origin.map { UnsafePointer($0) }
        info.protocol = target.offerSubprotocol ? UnsafePointer(protocolName) : nil
        info.local_protocol_name = UnsafePointer(protocolName)
        info.ietf_version_or_minus_one = -1
        // No lws validity timers (see trackhub_no_validity_policy): thousands of connections
        // would each re-insert one into a sorted list on every PONG.
        info.retry_and_idle_policy = trackhub_no_validity_policy()
        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: UInt(id.raw))
        if target.useTLS {
            info.ssl_connection = Int32(LCCSCF_USE_SSL.rawValue | LCCSCF_ALLOW_SELFSIGNED.rawValue | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue | LCCSCF_ALLOW_INSECURE.rawValue)
        }
        if lws_client_connect_via_info(&info) == nil {
            releaseStrings(id)
            // The connection error callback may already have reported it; report once.
            if sockets[id] == nil && closeCodes[id] == nil {
                delegate.clientClosed(id, code: nil, reason: "connect failed")
            }
        }
    }

    private func releaseStrings(_ id: ConnectionID) {
        for pointer in cStrings.removeValue(forKey: id) ?? [] { free(pointer) }
    }

    fileprivate func handle(wsi: OpaquePointer?, reason: lws_callback_reasons, input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        if reason == LWS_CALLBACK_EVENT_WAIT_CANCELLED {
            drainInbox()
            if useLibev && isStopping && !destroyed {
                closeAllForShutdown()
                destroyNow()
            }
            return 0
        }
        guard let wsi, let raw = lws_get_opaque_user_data(wsi) else {
            return lws_callback_http_dummy(wsi, reason, nil, input, length)
        }
        let id = ConnectionID(raw: UInt64(UInt(bitPattern: raw)))
        switch reason {
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            sockets[id] = wsi
            releaseStrings(id)
            delegate.clientOpened(id)
            if !(outgoing[id]?.isEmpty ?? true) { lws_callback_on_writable(wsi) }
        case LWS_CALLBACK_CLIENT_RECEIVE:
            var buffer = incoming[id] ?? []
            if let input, length > 0 {
                buffer.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
            }
            if lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 {
                incoming[id] = nil
                delegate.clientReceived(id, message: buffer)
            } else {
                incoming[id] = buffer
            }
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            if closeRequested.contains(id) {
                lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, nil, 0)
                return -1
            }
            guard var queue = outgoing[id], !queue.isEmpty else { return 0 }
            let message = queue.removeFirst()
            outgoing[id] = queue
            if write(message, to: wsi) < 0 { return -1 }
            if !queue.isEmpty { lws_callback_on_writable(wsi) }
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let input, length >= 2 {
                let bytes = UnsafeRawBufferPointer(start: input, count: length)
                let code = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
                let text = String(decoding: bytes.dropFirst(2), as: UTF8.self)
                closeCodes[id] = (code, text)
            }
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let text = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection error"
            finishConnection(id, fallbackReason: text)
        case LWS_CALLBACK_CLIENT_CLOSED:
            finishConnection(id, fallbackReason: "closed")
        default:
            return lws_callback_http_dummy(wsi, reason, nil, input, length)
        }
        return 0
    }

    private func finishConnection(_ id: ConnectionID, fallbackReason: String) {
        let close = closeCodes.removeValue(forKey: id)
        sockets[id] = nil
        outgoing[id] = nil
        incoming[id] = nil
        closeRequested.remove(id)
        releaseStrings(id)
        delegate.clientClosed(id, code: close?.0, reason: close?.1 ?? fallbackReason)
    }

    private func closeAllForShutdown() {
        for id in sockets.keys { closeRequested.insert(id) }
    }
}

private func lwsClientCallback(
    wsi: OpaquePointer?, reason: lws_callback_reasons, user: UnsafeMutableRawPointer?,
    input: UnsafeMutableRawPointer?, length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else { return 0 }
    let host = Unmanaged<LWSClientHost>.fromOpaque(raw).takeUnretainedValue()
    return host.handle(wsi: wsi, reason: reason, input: input, length: length)
}
