import CLibWebSockets
import Foundation
import Synchronization
import TrackHubProtocol

/// What the server host reports. Every call comes on the service thread. No C type crosses
/// it: a fake host can drive the same delegate.
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
    /// A refusal from the headers alone, before the body is read (a secured hub's 401: the
    /// body of a request without a valid token is never read, PROTOCOL 1); nil: none.
    func httpRefusalBeforeBody(_ request: HTTPRequest) -> ProtocolError?
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

/// Options for the listening socket and the event loop.
public struct ServerHostOptions: Sendable {
    /// The numeric address to bind (`ListenAddress.resolve` made it numeric); a wildcard binds every interface.
    public var host: String
    /// The port; 0 binds an ephemeral one (`LWSServerHost.boundPort`).
    public var port: Int
    /// libev (epoll) for production; the poll loop lets several hosts share one process (tests).
    public var useLibev: Bool
    /// Largest WebSocket message, fragments joined (`--max-message`); past it: close 1009.
    public var maxMessageBytes: Int
    /// Largest declared HTTP body (`--max-body`); past it: 413, the body not read.
    public var maxBodyBytes: Int
    /// How long a request's body may take to arrive after its headers (`--body-timeout`); 0: no limit.
    public var bodyTimeoutMicros: Int64 = 10_000_000
    /// Most TCP connections (HTTP and WebSocket alike) from one peer address; 0: no limit.
    public var maxConnectionsPerAddress: Int = 0
    /// PEM certificate and key: both set, the host serves TLS.
    public var tlsCertPath: String?
    public var tlsKeyPath: String?
    /// Where libwebsockets' own log lines go (installed process-wide when the host starts).
    public var logs: LWSLogSink

    /// Options; see the properties.
    public init(
        host: String, port: Int, useLibev: Bool, maxMessageBytes: Int, maxBodyBytes: Int,
        bodyTimeoutMicros: Int64 = 10_000_000, maxConnectionsPerAddress: Int = 0,
        tlsCertPath: String? = nil, tlsKeyPath: String? = nil, logs: LWSLogSink
    ) {
        self.host = host
        self.port = port
        self.useLibev = useLibev
        self.maxMessageBytes = maxMessageBytes
        self.maxBodyBytes = maxBodyBytes
        self.bodyTimeoutMicros = bodyTimeoutMicros
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.tlsCertPath = tlsCertPath
        self.tlsKeyPath = tlsKeyPath
        self.logs = logs
    }
}

/// Why a host could not start.
public enum ServerHostError: Error, CustomStringConvertible {
    /// `lws_create_context` failed; the text says what to check.
    case contextCreationFailed(String)
    public var description: String {
        switch self {
        case .contextCreationFailed(let why): return why
        }
    }
}

/// The thin layer between libwebsockets and the hub: it owns the lws context, turns C
/// callbacks into Swift calls on `ServerHostDelegate`, and turns the delegate's answers
/// into `lws_write`s. Nothing above it sees a C pointer.
///
/// Thread safety (`@unchecked Sendable`): everything except `inboxSignal` and
/// `lifecycle` is touched only on the service thread (inside `run()`); other threads
/// may only call `wake()` and `requestStop()`.
public final class LWSServerHost: @unchecked Sendable {
    private let options: ServerHostOptions
    /// Held strongly: the delegate must not hold the host (the hub's `HubHostDelegate` holds
    /// the hub weakly). Set it before `start()`.
    public var delegate: ServerHostDelegate?

    // C state that must outlive the context.
    private var context: OpaquePointer?
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolName: UnsafeMutablePointer<CChar>
    private let interfaceName: UnsafeMutablePointer<CChar>?
    private let certPath: UnsafeMutablePointer<CChar>?
    private let keyPath: UnsafeMutablePointer<CChar>?
    private let timer: UnsafeMutablePointer<trackhub_timer>
    private var timerIntervalMicros: Int64 = 0
    private var nextTimerDue: Int64 = 0

    // Service-thread state.
    private var nextID: UInt64 = 1
    private var sockets: [ConnectionID: OpaquePointer] = [:]
    private var fragments: [ConnectionID: [UInt8]] = [:]
    private var pendingCloses: [ConnectionID: (code: UInt16, reason: String)] = [:]
    /// The close code sent or received per WebSocket, reported once it is closed.
    private var closes: [ConnectionID: WebSocketClose] = [:]
    private var upgrades: [OpaquePointer: UpgradeRequest] = [:]
    private var http: [ConnectionID: HTTPExchange] = [:]
    /// Requests whose body is still arriving, with the monotonic time it must be in by.
    private var bodyDeadlines: [ConnectionID: Int64] = [:]
    /// Open TCP connections by peer address, for `maxConnectionsPerAddress` (PROTOCOL 1:
    /// HTTP connections count like WebSocket ones). A connection is counted when its first
    /// request arrives and uncounted when lws destroys it (LWS_CALLBACK_WSI_DESTROY).
    private var peerOfConnection: [OpaquePointer: String] = [:]
    private var connectionsByAddress: [String: Int] = [:]
    private var destroyed = false

    /// Cross-thread flags.
    private let lifecycle = Mutex<Lifecycle>(Lifecycle())
    private struct Lifecycle {
        var stopRequested = false
    }

    /// The port actually bound (differs from the option when it was 0).
    public private(set) var boundPort: Int = 0

    /// A host for these options; nothing is bound until `start()`.
    public init(options: ServerHostOptions) {
        self.options = options
        protocolName = strdup("trackhub.v1")
        interfaceName = ListenAddress.isWildcard(options.host) ? nil : strdup(options.host)
        certPath = options.tlsCertPath.map { strdup($0) }
        keyPath = options.tlsKeyPath.map { strdup($0) }
        protocols = .allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        timer = .allocate(capacity: 1)
        timer.initialize(to: trackhub_timer())
    }

    deinit {
        free(protocolName)
        free(interfaceName)
        free(certPath)
        free(keyPath)
        protocols.deallocate()
        timer.deallocate()
    }

    /// Creates the context and binds the listening socket. Call on the thread that will run it.
    public func start() throws {
        LWSLog.route(options.logs)
        protocols[0].name = UnsafePointer(protocolName)
        protocols[0].callback = lwsServerCallback
        protocols[0].per_session_data_size = MemoryLayout<UInt64>.size
        protocols[0].rx_buffer_size = 4096
        // Hand whole messages (snapshots, segments with long paths) to the kernel in one send.
        protocols[0].tx_packet_size = 256 * 1024
        var info = lws_context_creation_info()
        info.port = Int32(options.port)
        info.iface = interfaceName.map { UnsafePointer($0) }
        info.protocols = UnsafePointer(protocols)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        // Validity checks off: lws's own (even its default when no policy is given: ping after
        // 300 s) keep one timer per connection in a sorted list and re-insert it at the far
        // end on every PONG, a walk over every connection (12 % of the hub's time at 11 000
        // connections). The hub pings from its own sweep instead (Hub+Keepalive).
        info.retry_and_idle_policy = trackhub_no_validity_policy()
        info.timeout_secs = 20
        info.options = trackhub_opt_validate_utf8()
        if options.useLibev { info.options |= trackhub_opt_libev() }
        info.signal_cb = lwsSignalCallback
        // With IPv6 enabled, lws 4.1.6 binds the wildcard address and ignores an IPv4
        // `iface`: `--listen 127.0.0.1:…` would then be reachable from every interface. An
        // IPv6 address listens on IPv6 only. `host` is numeric here (ListenAddress resolved it).
        if options.host.contains(":") {
            if interfaceName != nil { info.options |= trackhub_opt_ipv6_only() }
        } else {
            info.options |= trackhub_opt_disable_ipv6()
        }
        // An address that is not this machine's is an error now (PROTOCOL 14), not a vhost
        // lws keeps retrying in the background while the process looks healthy.
        info.options |= trackhub_opt_fail_upon_unable_to_bind()
        if let certPath, let keyPath {
            info.options |= trackhub_opt_do_ssl_global_init()
            info.ssl_cert_filepath = UnsafePointer(certPath)
            info.ssl_private_key_filepath = UnsafePointer(keyPath)
        }
        guard let context = lws_create_context(&info) else {
            throw ServerHostError.contextCreationFailed(
                "could not listen on \(ListenAddress(host: options.host, port: options.port).authority) (the port is in use, the address is not one of this machine's, or the event-loop plugin or TLS files are missing)")
        }
        self.context = context
        if let vhost = lws_get_vhost_by_name(context, "default") {
            boundPort = Int(lws_get_vhost_listen_port(vhost))
        }
    }

    /// Runs the event loop on the calling thread until `requestStop()` has been honoured.
    public func run() {
        guard let context else { return }
        while !destroyed {
            if lws_service(context, 0) < 0 { break }
            if !options.useLibev && isStopRequested && !destroyed {
                destroyContext()
            }
        }
        if !destroyed { destroyContext() }
    }

    /// Thread-safe: makes the loop call `serviceWoke()` soon.
    public func wake() {
        lifecycle.withLock { _ in
            if let context, !destroyed { lws_cancel_service(context) }
        }
    }

    /// Thread-safe: the loop will destroy the context and `run()` will return.
    public func requestStop() {
        lifecycle.withLock { $0.stopRequested = true }
        wake()
    }

    private var isStopRequested: Bool { lifecycle.withLock { $0.stopRequested } }

    /// Starts a periodic timer (service thread): `timerFired()` every `intervalMicros`.
    public func startTimer(intervalMicros: Int64) {
        guard let context else { return }
        timerIntervalMicros = intervalMicros
        nextTimerDue = monotonicMicros() + intervalMicros
        timer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        trackhub_timer_schedule(context, timer, lwsTimerCallback, intervalMicros)
    }

    fileprivate func timerDidFire() {
        guard let context, !destroyed else { return }
        // Schedule against the ideal cadence so ticks do not drift, skipping missed ones.
        let now = monotonicMicros()
        nextTimerDue += timerIntervalMicros
        if nextTimerDue <= now { nextTimerDue = now + timerIntervalMicros / 2 }
        trackhub_timer_schedule(context, timer, lwsTimerCallback, nextTimerDue - now)
        expireSlowBodies(now: now)
        delegate?.timerFired()
    }

    // MARK: - Writing (service thread)

    /// Asks lws to call back when `id` can take more data.
    public func requestWritable(_ id: ConnectionID) {
        guard let wsi = sockets[id] else { return }
        lws_callback_on_writable(wsi)
    }

    /// What `writeNow` did: written, or the caller must queue it (lws holds unsent bytes, or a
    /// close is pending), or the write failed (the connection is being dropped).
    public enum DirectWrite: Sendable { case written, mustQueue, failed }

    /// Writes a WebSocket message at once, outside the writeable callback, when lws holds no
    /// unsent bytes for this connection. This is the common case for a reader that keeps up,
    /// and it costs one `send` instead of three system calls (arm POLLOUT, wait, send) for
    /// the callback route. If the kernel takes only part of it, lws keeps the rest and
    /// finishes it on its own; the next message then goes through the queue (`.mustQueue`).
    public func writeNow(_ id: ConnectionID, _ message: OutboundMessage) -> DirectWrite {
        guard let wsi = sockets[id], pendingCloses.isEmpty || pendingCloses[id] == nil else { return .mustQueue }
        if lws_partial_buffered(wsi) != 0 { return .mustQueue }
        let written = message.withPayloadPointer { trackhub_lws_write_text(wsi, $0, $1) }
        if written < 0 {
            trackhub_lws_kill_async(wsi)
            return .failed
        }
        return .written
    }

    /// Sends a WebSocket ping now; false when lws still holds unsent bytes for it (the
    /// connection is not reading, so the ping would only wait behind them).
    public func ping(_ id: ConnectionID) -> Bool {
        guard let wsi = sockets[id], pendingCloses[id] == nil, lws_partial_buffered(wsi) == 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: OutboundMessage.headroom + 2)
        let written = buffer.withUnsafeMutableBufferPointer { raw -> Int32 in
            guard let base = raw.baseAddress else { return -1 }
            return trackhub_lws_write_ping(wsi, base + OutboundMessage.headroom)
        }
        return written >= 0
    }

    /// Drops a connection at once, without a close handshake (a peer that stopped answering).
    public func drop(_ id: ConnectionID) {
        guard let wsi = sockets[id] else { return }
        trackhub_lws_kill_async(wsi)
    }

    /// Closes a WebSocket connection with a code, after whatever is being written now.
    public func close(_ id: ConnectionID, code: UInt16, reason: String) {
        guard let wsi = sockets[id] else { return }
        pendingCloses[id] = (code, reason)
        lws_callback_on_writable(wsi)
        // A reader that never reads never becomes writeable: do not wait for it forever.
        trackhub_lws_set_close_timeout(wsi, 3)
    }

    /// Sends an HTTP response to a request delivered earlier (possibly much later, e.g. after a commit).
    public func respond(_ id: ConnectionID, _ response: HTTPResponse) {
        guard let wsi = sockets[id], let exchange = http[id], exchange.response == nil else { return }
        var response = response
        response.headers += delegate?.responseHeaders(for: exchange.request) ?? []
        exchange.response = response
        lws_callback_on_writable(wsi)
    }

    /// Open TCP connections from one peer address (HTTP and WebSocket).
    public func connectionCount(from address: String) -> Int { connectionsByAddress[address] ?? 0 }

    /// True when this connection id is still open.
    public func isOpen(_ id: ConnectionID) -> Bool { sockets[id] != nil }

    // MARK: - Callback dispatch (service thread)

    fileprivate func handle(
        wsi: OpaquePointer?, reason: lws_callback_reasons, user: UnsafeMutableRawPointer?,
        input: UnsafeMutableRawPointer?, length: Int
    ) -> Int32 {
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            delegate?.serviceWoke()
            if options.useLibev && isStopRequested && !destroyed {
                destroyContext()
            }
            return 0

        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            guard let wsi else { return -1 }
            let request = makeUpgradeRequest(wsi)
            if !countConnection(wsi, peer: request.peerAddress) {
                refuseHTTP(wsi, status: 429)
                reportRefusedUpgrade(request, status: 429)
                return 1
            }
            switch delegate?.upgradeRequested(request) ?? .refuse(status: 503) {
            case .accept:
                upgrades[wsi] = request
                return 0
            case .refuse(let status):
                refuseHTTP(wsi, status: status)
                reportRefusedUpgrade(request, status: status)
                return 1
            }

        case LWS_CALLBACK_ESTABLISHED:
            guard let wsi, let user else { return -1 }
            let id = assignID(user: user, wsi: wsi)
            let request = upgrades.removeValue(forKey: wsi)
                ?? UpgradeRequest(path: "/v1/ws", query: [], origin: nil, host: nil, peerAddress: peerAddress(wsi))
            delegate?.connectionOpened(id, request: request)
            return 0

        case LWS_CALLBACK_RECEIVE:
            guard let wsi, let id = connectionID(user) else { return -1 }
            if lws_frame_is_binary(wsi) != 0 {
                closes[id] = .hub(UInt16(LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE.rawValue))
                lws_close_reason(wsi, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE, nil, 0)
                return -1
            }
            var buffer = fragments[id] ?? []
            if buffer.count + length > options.maxMessageBytes {
                fragments[id] = nil
                let text = "message over \(options.maxMessageBytes) bytes"
                closes[id] = .hub(UInt16(LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE.rawValue))
                closeNow(wsi, code: LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, reason: text)
                return -1
            }
            if let input, length > 0 {
                buffer.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
            }
            if lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 {
                fragments[id] = nil
                delegate?.connectionReceived(id, message: buffer)
            } else {
                fragments[id] = buffer
            }
            return 0

        case LWS_CALLBACK_RECEIVE_PONG:
            if let id = connectionID(user) { delegate?.connectionAnsweredPing(id) }
            return 0

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let wsi, let id = connectionID(user) else { return -1 }
            if let close = pendingCloses[id] {
                closes[id] = .hub(close.code)
                closeNow(wsi, code: lws_close_status(rawValue: UInt32(close.code)), reason: close.reason)
                return -1
            }
            guard let next = delegate?.nextMessage(for: id) else { return 0 }
            let written = next.message.withPayloadPointer { payload, count in
                trackhub_lws_write_text(wsi, payload, count)
            }
            if written < 0 { return -1 }
            if next.hasMore { lws_callback_on_writable(wsi) }
            return 0

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            // The peer's close frame (lws echoes it when we return 0). 1005: it had no code.
            if let id = connectionID(user), closes[id] == nil {
                let code = trackhub_close_code(input, length)
                closes[id] = .peer(code == 0 ? 1005 : code)
            }
            return 0

        case LWS_CALLBACK_CLOSED:
            guard let id = connectionID(user) else { return 0 }
            let close = closes.removeValue(forKey: id) ?? .none
            forget(id)
            delegate?.connectionClosed(id, close: close)
            return 0

        case LWS_CALLBACK_HTTP:
            guard let wsi, let user else { return -1 }
            return beginHTTP(wsi: wsi, user: user, uri: input, length: length)

        case LWS_CALLBACK_HTTP_BODY:
            guard let id = connectionID(user), let exchange = http[id] else { return -1 }
            // Answered already (refused from its headers, or timed out): the rest is not read
            // into memory, and the connection closes once the answer is out.
            if exchange.response != nil || exchange.dispatched { return 0 }
            if let input, length > 0 {
                if exchange.body.count + length > exchange.expectedLength {
                    refuseFromHost(id, exchange, ProtocolError(.badRequest, "Content-Length: the body is longer than announced"), reason: .framing)
                    return 0
                }
                // In place: `exchange` is a class the dictionary holds, so appending never copies
                // the body received so far (linear in the body's size, PROTOCOL 1).
                exchange.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
            }
            return 0

        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            guard let id = connectionID(user), let exchange = http[id] else { return -1 }
            bodyDeadlines[id] = nil
            if !exchange.dispatched && exchange.response == nil { dispatchHTTP(id: id, exchange) }
            return 0

        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let wsi, let id = connectionID(user) else { return -1 }
            return writeHTTP(wsi: wsi, id: id)

        case LWS_CALLBACK_WSI_DESTROY:
            if let wsi { uncountConnection(wsi) }
            return 0

        case LWS_CALLBACK_CLOSED_HTTP:
            if let id = connectionID(user) {
                let wasKnown = sockets[id] != nil
                if let unfinished = http[id] { reportHTTPCompleted(unfinished, status: 0) }
                forget(id)
                if wasKnown { delegate?.connectionClosed(id, close: .none) }
            }
            return 0

        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    // MARK: - HTTP exchange

    /// One HTTP request on its way through the host. A class, so that the body grows in
    /// place as chunks arrive (a struct in the dictionary was copied whole per chunk: quadratic).
    private final class HTTPExchange {
        var request: HTTPRequest
        var body: [UInt8] = []
        /// The body's length as framed by `Content-Length` (0: none).
        var expectedLength = 0
        var response: HTTPResponse?
        /// The body was not read (or not all of it): close the connection after the answer,
        /// since the next request's start is unknown.
        var closeAfterResponse = false
        var headersSent = false
        var bodyOffset = 0
        /// A streamed response's `body` is out; the next chunks come from its `next`.
        var firstPartSent = false
        /// Handed to the delegate already (lws still reports BODY_COMPLETION for a POST/PUT
        /// dispatched without a body, which would run e.g. a `proceed` twice).
        var dispatched = false
        /// When its headers were in (monotonic µs), for the access log's duration.
        let startedAt = monotonicMicros()

        init(request: HTTPRequest) { self.request = request }
    }

    private func beginHTTP(wsi: OpaquePointer, user: UnsafeMutableRawPointer, uri: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        let id = assignID(user: user, wsi: wsi)
        var uriPointer: UnsafeMutablePointer<CChar>?
        var uriLength: Int32 = 0
        let methodIndex = lws_http_get_uri_and_method(wsi, &uriPointer, &uriLength)
        let method: HTTPMethod
        switch methodIndex {
        case Int32(LWSHUMETH_GET): method = .get
        case Int32(LWSHUMETH_POST): method = .post
        case Int32(LWSHUMETH_PUT): method = .put
        case Int32(LWSHUMETH_DELETE): method = .delete
        case Int32(LWSHUMETH_HEAD): method = .head
        case Int32(LWSHUMETH_OPTIONS): method = .options
        case Int32(LWSHUMETH_PATCH): method = .patch
        default: method = .other
        }
        let path: String
        if let uri, length > 0 {
            path = String(decoding: UnsafeRawBufferPointer(start: uri, count: length), as: UTF8.self)
        } else {
            path = "/"
        }
        let peer = peerAddress(wsi)
        let request = HTTPRequest(
            connection: id, method: method, path: path, query: queryArguments(wsi),
            origin: header(wsi, trackhub_tok_origin()), host: header(wsi, trackhub_tok_host()),
            authorization: header(wsi, trackhub_tok_authorization()), peerAddress: peer, body: [])
        let exchange = HTTPExchange(request: request)
        http[id] = exchange
        if !countConnection(wsi, peer: peer) {
            refuseFromHost(id, exchange, ProtocolError(.rateLimited, "too many connections from \(peer)"), reason: .tooManyConnections)
            return 0
        }
        // PROTOCOL 1: bodies are framed by Content-Length alone; anything else is refused
        // before the request runs, and the connection closes (its next request's start is unknown).
        let framing: HTTPFraming
        do {
            framing = try HTTPFraming.decide(
                requiresLength: method == .post || method == .put,
                contentLength: rawHeader(wsi, trackhub_tok_content_length()),
                hasTransferEncoding: lws_hdr_total_length(wsi, lws_token_indexes(rawValue: UInt32(trackhub_tok_transfer_encoding()))) > 0)
        } catch {
            refuseFromHost(id, exchange, error, reason: .framing)
            return 0
        }
        guard case .body(let declaredLength) = framing else {
            dispatchHTTP(id: id, exchange)
            return 0
        }
        // A secured hub checks the token from the headers: a body without one is never read.
        if let refusal = delegate?.httpRefusalBeforeBody(request) {
            refuseFromHost(id, exchange, refusal, reason: .unauthorized)
            return 0
        }
        if declaredLength > options.maxBodyBytes {
            refuseFromHost(id, exchange, ProtocolError(.tooLarge, "body is over the limit of \(options.maxBodyBytes) bytes"), reason: .tooLarge)
            return 0
        }
        exchange.expectedLength = declaredLength
        // Grown as it arrives, not reserved whole: a client that announces 4 MiB and sends
        // nothing holds only what it sent.
        exchange.body.reserveCapacity(min(declaredLength, 64 * 1024))
        if options.bodyTimeoutMicros > 0 { bodyDeadlines[id] = monotonicMicros() + options.bodyTimeoutMicros }
        return 0  // the body follows: LWS_CALLBACK_HTTP_BODY, then _COMPLETION
    }

    private func dispatchHTTP(id: ConnectionID, _ exchange: HTTPExchange) {
        exchange.dispatched = true
        var request = exchange.request
        request.body = exchange.body
        exchange.body = []  // the hub holds it now; not kept twice
        delegate?.httpRequest(request)
    }

    /// Answers a request from the host itself, without running it, and closes the
    /// connection after the answer (the body, if any, was not read).
    private func refuseFromHost(_ id: ConnectionID, _ exchange: HTTPExchange, _ error: ProtocolError, reason: HTTPRefusalReason) {
        bodyDeadlines[id] = nil
        exchange.dispatched = true
        exchange.closeAfterResponse = true
        exchange.body = []
        delegate?.httpRefused(exchange.request, reason: reason)
        respond(id, HTTPResponse(status: reason == .bodyTimeout ? 408 : error.httpStatus, body: ServerReplies.httpError(error)))
    }

    /// PROTOCOL 1: a body must be in within `--body-timeout` of the end of its headers; lws's
    /// own idle timeout is re-armed by every chunk, so a client sending a byte now and then
    /// would hold its connection forever. Runs on every timer tick; looks only at requests
    /// whose body is still arriving.
    private func expireSlowBodies(now: Int64) {
        guard !bodyDeadlines.isEmpty else { return }
        for (id, deadline) in bodyDeadlines where deadline <= now {
            guard let exchange = http[id] else {
                bodyDeadlines[id] = nil
                continue
            }
            let seconds = Double(options.bodyTimeoutMicros) / 1_000_000
            refuseFromHost(id, exchange, ProtocolError(.badRequest, "body: not received within the body timeout of \(seconds) s"), reason: .bodyTimeout)
        }
    }

    private func writeHTTP(wsi: OpaquePointer, id: ConnectionID) -> Int32 {
        guard let state = http[id], let response = state.response else { return 0 }
        let pre = OutboundMessage.headroom
        if !state.headersSent {
            // A streamed body is sent chunked, framed here: lws 4.1.6 does not do it. Given
            // LWS_ILLEGAL_HTTP_CONTENT_LEN, `lws_add_http_common_headers` only leaves out the
            // length and adds `connection: close` (the body then ends when the socket does),
            // and `lws_write(LWS_WRITE_HTTP)` sends bytes as they are. Writing the status and
            // headers ourselves keeps the connection reusable.
            let streamed = response.next != nil
            var headers = response.headers
            if state.closeAfterResponse { headers.append(("connection", "close")) }
            if streamed { headers.insert(contentsOf: [("content-type", response.contentType), ("transfer-encoding", "chunked")], at: 0) }
            var buffer = [UInt8](repeating: 0, count: pre + 2048 + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 8 })
            let ok = buffer.withUnsafeMutableBufferPointer { raw -> Bool in
                guard let base = raw.baseAddress else { return false }
                let start = base + pre
                var cursor: UnsafeMutablePointer<UInt8>? = start
                let end = base + raw.count - 1
                let began = streamed
                    ? lws_add_http_header_status(wsi, UInt32(response.status), &cursor, end)
                    : lws_add_http_common_headers(wsi, UInt32(response.status), response.contentType.isEmpty ? nil : response.contentType, lws_filepos_t(response.body.count), &cursor, end)
                if began != 0 { return false }
                for header in headers {
                    let name = header.name.lowercased() + ":"
                    let added = name.withCString { namePointer in
                        header.value.withCString { valuePointer in
                            namePointer.withMemoryRebound(to: UInt8.self, capacity: name.utf8.count + 1) { n in
                                valuePointer.withMemoryRebound(to: UInt8.self, capacity: header.value.utf8.count + 1) { v in
                                    lws_add_http_header_by_name(wsi, n, v, Int32(header.value.utf8.count), &cursor, end)
                                }
                            }
                        }
                    }
                    if added != 0 { return false }
                }
                return lws_finalize_write_http_header(wsi, start, &cursor, end) == 0
            }
            if !ok { return -1 }
            state.headersSent = true
            if response.body.isEmpty && !streamed {
                return finishHTTP(wsi: wsi, id: id)
            }
            lws_callback_on_writable(wsi)
            return 0
        }
        if let next = response.next {
            return writeStreamedHTTP(wsi: wsi, id: id, state: state, next: next)
        }
        // One chunk per writeable callback; lws buffers what the socket does not take.
        let chunkSize = 64 * 1024
        let remaining = response.body.count - state.bodyOffset
        let take = min(chunkSize, remaining)
        let isLast = take == remaining
        var chunk = [UInt8](repeating: 0, count: pre + take)
        chunk.replaceSubrange(pre..<(pre + take), with: response.body[state.bodyOffset..<(state.bodyOffset + take)])
        let written = chunk.withUnsafeMutableBufferPointer { raw -> Int32 in
            guard let base = raw.baseAddress else { return -1 }
            return isLast
                ? trackhub_lws_write_http_final(wsi, base + pre, take)
                : trackhub_lws_write_http(wsi, base + pre, take)
        }
        if written < 0 { return -1 }
        state.bodyOffset += take
        if isLast { return finishHTTP(wsi: wsi, id: id) }
        lws_callback_on_writable(wsi)
        return 0
    }

    /// One chunk of a streamed body per writeable callback: `body` first, then what `next`
    /// gives, each framed `<hex size>\r\n<data>\r\n`; `0\r\n\r\n` once `next` gives nil.
    private func writeStreamedHTTP(
        wsi: OpaquePointer, id: ConnectionID, state: HTTPExchange, next: () throws -> [UInt8]?
    ) -> Int32 {
        let part: [UInt8]?
        if !state.firstPartSent {
            part = state.response?.body
            state.firstPartSent = true
            state.response?.body = []  // not kept while the rest streams
        } else {
            do { part = try next() } catch { return -1 }  // cut short: no last chunk
        }
        if part?.isEmpty == true {  // a chunk of size 0 would end the body
            lws_callback_on_writable(wsi)
            return 0
        }
        let pre = OutboundMessage.headroom
        var chunk = [UInt8](repeating: 0, count: pre)
        if let part {
            chunk.reserveCapacity(pre + part.count + 16)
            chunk.append(contentsOf: String(part.count, radix: 16).utf8)
            chunk.append(contentsOf: [0x0D, 0x0A])
            chunk.append(contentsOf: part)
            chunk.append(contentsOf: [0x0D, 0x0A])
        } else {
            chunk.append(contentsOf: "0\r\n\r\n".utf8)
        }
        let written = chunk.withUnsafeMutableBufferPointer { raw -> Int32 in
            guard let base = raw.baseAddress else { return -1 }
            return part == nil
                ? trackhub_lws_write_http_final(wsi, base + pre, raw.count - pre)
                : trackhub_lws_write_http(wsi, base + pre, raw.count - pre)
        }
        if written < 0 { return -1 }
        if part == nil { return finishHTTP(wsi: wsi, id: id) }
        lws_callback_on_writable(wsi)
        return 0
    }

    private func finishHTTP(wsi: OpaquePointer, id: ConnectionID) -> Int32 {
        if let exchange = http[id] { reportHTTPCompleted(exchange, status: exchange.response?.status ?? 0) }
        let close = http[id]?.closeAfterResponse ?? false
        http[id] = nil
        sockets[id] = nil
        bodyDeadlines[id] = nil
        if close { return -1 }
        if lws_http_transaction_completed(wsi) != 0 { return -1 }
        return 0
    }

    private func reportHTTPCompleted(_ exchange: HTTPExchange, status: Int) {
        let seconds = Double(monotonicMicros() - exchange.startedAt) / 1_000_000
        delegate?.httpCompleted(request: exchange.request, status: status, durationSeconds: seconds)
    }

    /// A refused upgrade is an HTTP answer too (a 401 for a bad `?token=`): logged like one.
    private func reportRefusedUpgrade(_ upgrade: UpgradeRequest, status: Int) {
        let request = HTTPRequest(
            connection: ConnectionID(raw: 0), method: .get, path: upgrade.path, query: upgrade.query,
            origin: upgrade.origin, host: upgrade.host, authorization: nil, peerAddress: upgrade.peerAddress, body: [])
        delegate?.httpCompleted(request: request, status: status, durationSeconds: 0)
    }

    private func refuseHTTP(_ wsi: OpaquePointer, status: Int) {
        _ = lws_return_http_status(wsi, UInt32(status), nil)
    }

    // MARK: - Helpers

    private func assignID(user: UnsafeMutableRawPointer, wsi: OpaquePointer) -> ConnectionID {
        let id = ConnectionID(raw: nextID)
        nextID += 1
        user.storeBytes(of: id.raw, as: UInt64.self)
        sockets[id] = wsi
        return id
    }

    private func connectionID(_ user: UnsafeMutableRawPointer?) -> ConnectionID? {
        guard let user else { return nil }
        let raw = user.load(as: UInt64.self)
        return raw == 0 ? nil : ConnectionID(raw: raw)
    }

    private func forget(_ id: ConnectionID) {
        sockets[id] = nil
        fragments[id] = nil
        pendingCloses[id] = nil
        http[id] = nil
        bodyDeadlines[id] = nil
        closes[id] = nil
    }

    /// Counts a connection on its first request; false when its address is over the limit.
    private func countConnection(_ wsi: OpaquePointer, peer: String) -> Bool {
        if peerOfConnection[wsi] != nil { return true }  // a later request on a kept-alive connection
        if options.maxConnectionsPerAddress > 0 && connectionsByAddress[peer, default: 0] >= options.maxConnectionsPerAddress {
            return false
        }
        peerOfConnection[wsi] = peer
        connectionsByAddress[peer, default: 0] += 1
        return true
    }

    private func uncountConnection(_ wsi: OpaquePointer) {
        guard let peer = peerOfConnection.removeValue(forKey: wsi) else { return }
        let remaining = (connectionsByAddress[peer] ?? 1) - 1
        connectionsByAddress[peer] = remaining > 0 ? remaining : nil
    }

    private func closeNow(_ wsi: OpaquePointer, code: lws_close_status, reason: String) {
        var bytes = Array(reason.utf8.prefix(120))
        bytes.withUnsafeMutableBufferPointer { buffer in
            lws_close_reason(wsi, code, buffer.baseAddress, buffer.count)
        }
    }

    private func destroyContext() {
        guard let context, !destroyed else { return }
        lifecycle.withLock { _ in destroyed = true }
        trackhub_timer_cancel(timer)
        lws_context_destroy(context)
    }

    private func header(_ wsi: OpaquePointer, _ token: Int32) -> String? {
        let tokenIndex = lws_token_indexes(rawValue: UInt32(token))
        let length = Int(lws_hdr_total_length(wsi, tokenIndex))
        guard length > 0, length < 16 * 1024 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let copied = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), tokenIndex)
        guard copied >= 0 else { return nil }
        return String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A header as received (nil when absent), with no length cap: framing needs to see a
    /// malformed value whole to refuse it.
    private func rawHeader(_ wsi: OpaquePointer, _ token: Int32) -> String? {
        let tokenIndex = lws_token_indexes(rawValue: UInt32(token))
        let length = Int(lws_hdr_total_length(wsi, tokenIndex))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let copied = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), tokenIndex)
        guard copied >= 0 else { return "" }  // present but unreadable: refused as malformed
        return String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func queryArguments(_ wsi: OpaquePointer) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        let token = lws_token_indexes(rawValue: UInt32(trackhub_tok_uri_args()))
        var buffer = [CChar](repeating: 0, count: 4096)
        var index: Int32 = 0
        while index < 64 {
            let copied = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), token, index)
            if copied < 0 { break }
            let text = String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let equals = text.firstIndex(of: "=") {
                result.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
            } else if !text.isEmpty {
                result.append((text, ""))
            }
            index += 1
        }
        return result
    }

    private func makeUpgradeRequest(_ wsi: OpaquePointer) -> UpgradeRequest {
        UpgradeRequest(
            path: header(wsi, trackhub_tok_get_uri()) ?? "/", query: queryArguments(wsi),
            origin: header(wsi, trackhub_tok_origin()), host: header(wsi, trackhub_tok_host()),
            peerAddress: peerAddress(wsi))
    }

    private func peerAddress(_ wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard let text = lws_get_peer_simple(wsi, &buffer, buffer.count) else { return "" }
        return String(cString: text)
    }
}

/// Microseconds on a monotonic clock.
func monotonicMicros() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
}

/// The single C entry point lws calls for every connection of the hub's protocol.
private func lwsServerCallback(
    wsi: OpaquePointer?, reason: lws_callback_reasons, user: UnsafeMutableRawPointer?,
    input: UnsafeMutableRawPointer?, length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else {
        return 0
    }
    let host = Unmanaged<LWSServerHost>.fromOpaque(raw).takeUnretainedValue()
    return host.handle(wsi: wsi, reason: reason, user: user, input: input, length: length)
}

private func lwsTimerCallback(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let owner = trackhub_timer_owner(sul) else { return }
    Unmanaged<LWSServerHost>.fromOpaque(owner).takeUnretainedValue().timerDidFire()
}
