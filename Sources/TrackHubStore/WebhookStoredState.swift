/// The webhook state as stored, read once at start-up.
public struct WebhookStoredState: Sendable, Equatable {
    /// Each URL ever configured, with when it first was (ms since the epoch).
    public var targets: [String: Int64] = [:]
    /// URL → trip → the last event `n` done. A trip missing here has none done.
    public var positions: [String: [String: Int]] = [:]

    /// A state; empty by default, as a store with no webhook records.
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
            // A URL left with no trip has no rows in the SQLite store either: drop it, so both
            // stores load the same state.
            for url in positions.keys {
                positions[url]?[trip] = nil
                if positions[url]?.isEmpty == true { positions[url] = nil }
            }
        }
    }
}
