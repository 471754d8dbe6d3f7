/// Counters of a run, for the status line and the exit status.
public struct SimulationStats: Sendable, Equatable {
    public var riders = 0
    public var fixesSent = 0
    /// Fixes acked `applied: true`.
    public var fixesApplied = 0
    /// Fixes acked `applied: false`, by reason.
    public var refusals: [String: Int] = [:]
    /// Events seen on the riders' subscriptions, by name.
    public var events: [String: Int] = [:]
    public var tripsStarted = 0
    public var tripsEnded = 0
    /// Error replies, failed HTTP requests, lost connections, riders that gave up waiting.
    public var errors = 0
    /// The first few error texts.
    public var errorMessages: [String] = []

    public init() {}

    /// Fixes acked either way.
    public var fixesAcked: Int { fixesApplied + fixesRefused }
    public var fixesRefused: Int { refusals.values.reduce(0, +) }
    public var eventCount: Int { events.values.reduce(0, +) }

    mutating func recordError(_ text: String) {
        errors += 1
        if errorMessages.count < 20 { errorMessages.append(text) }
    }
}
