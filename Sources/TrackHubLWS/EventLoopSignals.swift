import TrackHubSync

/// Signals seen by libwebsockets' own event loop. The libev loop lws creates installs a
/// SIGINT watcher of its own, which would take SIGINT away from the process's handler;
/// the host passes lws a `signal_cb` that forwards every such signal here instead.
public enum EventLoopSignals {
    private static let handler = HubMutex<(@Sendable (Int32) -> Void)?>(nil)

    /// Called (on the service thread) for each signal lws's event loop catches.
    public static func setHandler(_ body: @escaping @Sendable (Int32) -> Void) {
        handler.withLock { $0 = body }
    }

    static func forward(_ signal: Int32) {
        let body = handler.withLock { $0 }
        body?(signal)
    }
}

/// The C callback lws calls instead of its default signal handling.
func lwsSignalCallback(_ eventLibHandle: UnsafeMutableRawPointer?, _ signal: Int32) {
    EventLoopSignals.forward(signal)
}
