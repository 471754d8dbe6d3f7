import TrackHubServer
import TrackHubSync

/// A clock that moves only when a test says so, for the hub's rules (keep-alive, slow
/// readers, tokens, drain) without waiting for real time. Both clocks move together.
public final class ManualClock: Sendable {
    private let millis: HubMutex<Int64>

    /// Starts at `wallMillis` (default: 2026-12-01T00:00:00Z).
    public init(wallMillis: Int64 = 1_796_083_200_000) {
        millis = HubMutex(wallMillis)
    }

    /// Wall-clock milliseconds now.
    public var now: Int64 { millis.withLock { $0 } }

    /// Moves both clocks forward.
    public func advance(ms: Int64) {
        millis.withLock { $0 += ms }
    }

    /// The clock to give a hub.
    public var hubClock: HubClock {
        HubClock(wallMillis: { [self] in now }, monotonicMicros: { [self] in now * 1000 })
    }
}
