import TrackHubServer

/// Runs `body` against a fresh hub (`TestHub`: loopback, port 0, memory store) and stops it
/// afterwards, whether `body` returns or throws, so a failing test never leaves a hub (and
/// its port and threads) behind for the tests after it.
///
/// `clients` opens WebSocket connections to this hub; their client host starts with the
/// first connection (a test that only speaks HTTP starts none) and is stopped before the hub.
///
/// ```swift
/// try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
///     try hub.createLisbonTrip("T1")
///     let viewer = try clients.connect()
///     ...
/// }
/// ```
public func withTestHub<Result>(
    configure: (inout HubConfig) -> Void = { _ in },
    _ body: (TestHub, TestHubClients) throws -> Result
) throws -> Result {
    let hub = try TestHub(configure: configure)
    defer { hub.stop() }
    let clients = TestHubClients(port: hub.port)
    // Declared after the hub's, so it runs first: connections close before the hub stops.
    defer { clients.stop() }
    return try body(hub, clients)
}

/// The WebSocket clients of one `withTestHub` run: connections to that hub's port, on one
/// `TestClients` started on first use and stopped when the run ends.
public final class TestHubClients {
    /// The hub's port, where every connection goes.
    public let port: Int
    private var started: TestClients?

    init(port: Int) { self.port = port }

    /// The client set behind these connections, started if it was not: for what a test does
    /// with the client host itself (a TLS target, say).
    public func clients() throws -> TestClients {
        if let started { return started }
        let clients = try TestClients()
        started = clients
        return clients
    }

    /// Connects to the hub and waits until the connection is open (`TestClients.connect`).
    public func connect(path: String = "/v1/ws", origin: String? = nil, offerSubprotocol: Bool = true, timeout: Double = 10) throws -> TestConnection {
        try clients().connect(port: port, path: path, origin: origin, offerSubprotocol: offerSubprotocol, timeout: timeout)
    }

    /// Connects without waiting (the caller checks `closeInfo`).
    public func connectNoWait(path: String = "/v1/ws", origin: String? = nil) throws -> TestConnection {
        try clients().connectNoWait(port: port, path: path, origin: origin)
    }

    /// Closes every connection and stops the client host, if one was started.
    func stop() {
        started?.stop()
        started = nil
    }
}
