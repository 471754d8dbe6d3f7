import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// One WebSocket connection's state. Lives on the service thread.
/// A class: the fan-out looks a session up once per delivery, and a struct would be copied
/// (one retain per field) on every lookup. Touched only on the service thread.
final class Session {
    let id: ConnectionID
    let peerAddress: String
    let openedAt: Int64
    var queue = SendQueue()
    /// Whether lws has been asked for a writeable callback that has not come yet.
    var awaitingWritable = false
    /// Trips followed, and how.
    var subscriptions: [String: SubscriptionMode] = [:]
    /// Subscribes waiting for the store, by trip (at most one read each; see SubscribeReads).
    var subscribeReads: [String: SubscribeReads] = [:]
    /// The normalised viewport key this connection watches (nil: none).
    var viewportKey: String?
    /// Pings sent since the last pong (PROTOCOL 1: two unanswered pings drop the connection).
    var unansweredPings = 0
    var lastPingAt: Int64
    /// Since when the unsent data has been over the limit (nil: under it).
    var overLimitSince: Int64?
    /// Set once the hub decided to close it; nothing more is queued.
    var isClosing = false
    /// Fix-rate token bucket (PROTOCOL 1: `--max-fix-rate` per second).
    var fixTokens: Double
    var fixTokensUpdatedAt: Int64
    /// What the connection may do (open mode: everything).
    var grants: Grants
    /// Messages received and written, for the log line when it closes (PROTOCOL 14).
    var messagesIn = 0
    var messagesOut = 0
    /// When it opened on the monotonic clock (µs): its duration, whatever the wall clock does.
    let openedMonotonic = systemMonotonicMicros()

    init(id: ConnectionID, peerAddress: String, now: Int64, fixRate: Int, grants: Grants) {
        self.id = id
        self.peerAddress = peerAddress
        self.openedAt = now
        self.lastPingAt = now
        self.fixTokens = Double(fixRate)
        self.fixTokensUpdatedAt = now
        self.grants = grants
    }

    /// Takes one fix token; false when the connection is over its rate.
    func takeFixToken(now: Int64, ratePerSecond: Int) -> Bool {
        let elapsed = Double(max(0, now - fixTokensUpdatedAt)) / 1000
        fixTokens = min(Double(ratePerSecond), fixTokens + elapsed * Double(ratePerSecond))
        fixTokensUpdatedAt = now
        guard fixTokens >= 1 else { return false }
        fixTokens -= 1
        return true
    }
}
