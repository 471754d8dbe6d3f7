/// What the webhook deliverer keeps durably (PROTOCOL 12): for each URL, how far each trip's
/// events have been delivered. Written through the store's ordinary batches, so they ride
/// the same group commit as fixes and never need a second writer.
public enum WebhookRecord: Sendable, Equatable {
    /// A URL is delivered to from now on; `positions` are where each existing trip starts
    /// (its last event: history before the URL was configured is not sent).
    case target(url: String, addedAt: Int64, positions: [String: Int])
    /// Every event of `trip` up to `delivered` (its `n`) is done for `url`: delivered,
    /// skipped by `--webhook-events`, or dropped after 24 h.
    case position(url: String, trip: String, delivered: Int)
    /// Forgets a trip's positions for every URL (the trip is gone).
    case forgetTrip(trip: String)
}

/// The webhook state as stored, read once at start-up.
public struct WebhookStoredState: Sendable, Equatable {
    /// Each URL ever configured, with when it first was (ms since the epoch).
    public var targets: [String: Int64] = [:]
    /// URL → trip → the last event `n` done. A trip missing here has none done.
    public var positions: [String: [String: Int]] = [:]

    public init(targets: [String: Int64] = [:], positions: [String: [String: Int]] = [:]) {
        self.targets = targets
        self.positions = positions
    }

    /// The state after `record` is written (the in-memory store's copy; the SQLite store's
    /// tables hold the same).
    public mutating func apply(_ record: WebhookRecord) {
        switch record {
        case .target(let url, let addedAt, let start):
            if targets[url] == nil { targets[url] = addedAt }
            for (trip, n) in start { positions[url, default: [:]][trip] = max(positions[url]?[trip] ?? 0, n) }
        case .position(let url, let trip, let delivered):
            positions[url, default: [:]][trip] = max(positions[url]?[trip] ?? 0, delivered)
        case .forgetTrip(let trip):
            for url in positions.keys { positions[url]?[trip] = nil }
        }
    }
}

/// A store that keeps webhook delivery positions (the SQLite and in-memory stores).
public protocol WebhookPositionStore: AnyObject, Sendable {
    /// Every URL and position stored (`.webhook` records appended so far).
    func loadWebhookState() throws(StoreError) -> WebhookStoredState
}
