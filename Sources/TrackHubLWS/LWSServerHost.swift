import CLibWebSockets
import Foundation
import Synchronization
import TrackHubSync

/// The thin layer between libwebsockets and the hub: it owns the lws context, turns C
/// callbacks into Swift calls on `ServerHostDelegate`, and turns the delegate's answers
/// into `lws_write`s. Nothing above it sees a C pointer.
///
/// This file holds the host's state and says who may touch it; each job is an extension in
/// its own file: the context and its loop (`+Context`, `+TLS`, `+Timer`), the callback
/// dispatch (`+Callback`), WebSocket upgrades and I/O (`+Upgrade`, `+WebSocket`), the HTTP
/// exchange and its answers (`+HTTPExchange`, `+HTTPResponse`), reading headers (`+Headers`).
///
/// Thread safety (`@unchecked Sendable`): everything except `lifecycle` and `stopRequested` is touched only on
/// the service thread (inside `run()`); other threads may only call `wake()` and
/// `requestStop()`.
public final class LWSServerHost: ServerHost, @unchecked Sendable {
    let options: ServerHostOptions
    /// Held strongly: the delegate must not hold the host (the hub's `HubHostDelegate` holds
    /// the hub weakly). Set it before `start()`.
    public var delegate: ServerHostDelegate?

    // C state that must outlive the context.
    var context: OpaquePointer?
    let protocols: UnsafeMutablePointer<lws_protocols>
    let protocolName: UnsafeMutablePointer<CChar>
    let interfaceName: UnsafeMutablePointer<CChar>?
    let secondInterfaceName: UnsafeMutablePointer<CChar>?
    let secondVhostName: UnsafeMutablePointer<CChar>
    /// The second listener's vhost (`ServerHostOptions.secondHost`), once created.
    var secondVhost: OpaquePointer?
    let certPath: UnsafeMutablePointer<CChar>?
    let keyPath: UnsafeMutablePointer<CChar>?
    let timer: UnsafeMutablePointer<trackhub_timer>
    var timerIntervalMicros: Int64 = 0
    var nextTimerDue: Int64 = 0

    // Service-thread state.
    var nextID: UInt64 = 1
    var sockets: [ConnectionID: OpaquePointer] = [:]
    var fragments: [ConnectionID: [UInt8]] = [:]
    var pendingCloses: [ConnectionID: (code: UInt16, reason: String)] = [:]
    /// The close code sent or received per WebSocket, reported once it is closed.
    var closes: [ConnectionID: WebSocketClose] = [:]
    var upgrades: [OpaquePointer: UpgradeRequest] = [:]
    var http: [ConnectionID: HTTPExchange] = [:]
    /// Requests whose body is still arriving, with the monotonic time it must be in by.
    var bodyDeadlines: [ConnectionID: Int64] = [:]
    /// Open TCP connections by peer address, for `maxConnectionsPerAddress`.
    var connectionsPerAddress: PerAddressConnections<OpaquePointer>
    var destroyed = false
    /// The epoll set behind `hasInputWaiting` (-1 until `start`), and each WebSocket's socket in it.
    var readinessSet: Int32 = -1
    var readinessFDs: [ConnectionID: Int32] = [:]

    /// Held while another thread calls `lws_cancel_service`, so the context is not destroyed
    /// under it (`wake`, `destroyContext`).
    let lifecycle = HubMutex<Lifecycle>(Lifecycle())
    /// What `lifecycle` guards: the context's existence itself (`context`, `destroyed`).
    struct Lifecycle {}
    /// Set once by `requestStop` (any thread); read on every wake-up without the lock, which
    /// other threads hold while they wake the loop (it was the loop's most contended lock).
    let stopRequested = Atomic<Bool>(false)

    /// The port actually bound (differs from the option when it was 0).
    public internal(set) var boundPort: Int = 0
    /// The second listener's bound port (0 without one).
    public internal(set) var secondBoundPort: Int = 0

    /// A host for these options; nothing is bound until `start()`.
    public init(options: ServerHostOptions) {
        self.options = options
        protocolName = strdup("trackhub.v1")
        interfaceName = ListenAddress.isWildcard(options.host) ? nil : strdup(options.host)
        secondInterfaceName = options.secondHost.flatMap { ListenAddress.isWildcard($0) ? nil : strdup($0) }
        secondVhostName = strdup("second")
        certPath = options.tlsCertPath.map { strdup($0) }
        keyPath = options.tlsKeyPath.map { strdup($0) }
        protocols = .allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        timer = .allocate(capacity: 1)
        timer.initialize(to: trackhub_timer())
        connectionsPerAddress = PerAddressConnections(limit: options.maxConnectionsPerAddress)
    }

    deinit {
        free(protocolName)
        free(interfaceName)
        free(secondInterfaceName)
        free(secondVhostName)
        free(certPath)
        free(keyPath)
        protocols.deallocate()
        timer.deallocate()
        trackhub_readiness_close(readinessSet)
    }

    /// Open TCP connections from one peer address (HTTP and WebSocket).
    public func connectionCount(from address: String) -> Int { connectionsPerAddress.count(from: address) }

    /// True when this connection id is still open.
    public func isOpen(_ id: ConnectionID) -> Bool { sockets[id] != nil }

    // MARK: - Connection ids (service thread)

    /// A new id for a connection, kept in its per-session user area (which lws allocates zeroed).
    func assignID(user: UnsafeMutableRawPointer, wsi: OpaquePointer) -> ConnectionID {
        let id = ConnectionID(raw: nextID)
        nextID += 1
        user.storeBytes(of: id.raw, as: UInt64.self)
        sockets[id] = wsi
        return id
    }

    /// The id kept in a connection's user area; nil before `assignID`.
    func connectionID(_ user: UnsafeMutableRawPointer?) -> ConnectionID? {
        guard let user else { return nil }
        let raw = user.load(as: UInt64.self)
        return raw == 0 ? nil : ConnectionID(raw: raw)
    }

    /// Drops everything the host keeps for a connection that closed.
    func forget(_ id: ConnectionID) {
        unwatchInput(id)
        sockets[id] = nil
        fragments[id] = nil
        pendingCloses[id] = nil
        http[id] = nil
        bodyDeadlines[id] = nil
        closes[id] = nil
    }
}
