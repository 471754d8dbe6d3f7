/// Counters of a run, for the status line and the exit status.
public struct SimulationStats: Sendable, Equatable {
    /// Riders in the run (`settings.riders`, or 1 for a replay).
    public var riders = 0
    /// Fixes sent in any protocol, acked or not.
    public var fixesSent = 0
    /// Fixes acked `applied: true`.
    public var fixesApplied = 0
    /// Fixes acked `applied: false`, by reason.
    public var refusals: [String: Int] = [:]
    /// Events seen on the riders' subscriptions, by name.
    public var events: [String: Int] = [:]
    /// Trips the hub created (`201` to `POST /v1/trips`).
    public var tripsStarted = 0
    /// Trips the riders ended with a `DELETE` answered `200`.
    public var tripsEnded = 0
    /// Error replies, failed HTTP requests, lost connections, riders that gave up waiting.
    public var errors = 0
    /// The first few error texts.
    public var errorMessages: [String] = []
    /// PROTOCOL 17 (`--stops`): customers who stopped following their stop.
    public var linksFollowed = 0
    /// The summary line of the last `maxLinkSummaries` of them (`StopCustomer.summary`), oldest first.
    public var linkSummaries: [String] = []
    /// How many summary lines are kept (the command prints them as they come).
    public static let maxLinkSummaries = 100

    /// All counters at zero.
    public init() {}

    /// Fixes acked either way.
    public var fixesAcked: Int { fixesApplied + fixesRefused }
    /// Fixes refused: `refusals` summed over every reason.
    public var fixesRefused: Int { refusals.values.reduce(0, +) }
    /// Events seen, every name together.
    public var eventCount: Int { events.values.reduce(0, +) }

    mutating func recordLink(_ summary: String) {
        linksFollowed += 1
        linkSummaries.append(summary)
        if linkSummaries.count > Self.maxLinkSummaries { linkSummaries.removeFirst(linkSummaries.count - Self.maxLinkSummaries) }
    }

    /// The summaries of the links followed after the first `printed`, as many as are kept.
    public func linkSummaries(after printed: Int) -> ArraySlice<String> {
        linkSummaries.suffix(max(0, min(linksFollowed - printed, linkSummaries.count)))
    }

    mutating func recordError(_ text: String) {
        errors += 1
        if errorMessages.count < 20 { errorMessages.append(text) }
    }
}
