/// When a failed webhook delivery is tried again, and when it is given up (PROTOCOL 12):
/// after 1 s, doubling up to 5 min, for 24 h from when the event was queued. Pure: times are
/// given, in ms.
public struct WebhookBackoff: Sendable, Equatable {
    /// The first retry's delay (1 s; `--webhook-retry-base` shortens it for tests).
    public var baseMs: Int64
    /// The longest delay between two attempts.
    public var maxMs: Int64
    /// How long an event is retried before it is dropped for that URL.
    public var giveUpAfterMs: Int64

    /// Retry after `baseMs`, doubling up to `maxMs`, giving up `giveUpAfterMs` after the event was queued (PROTOCOL 12: 1 s, 5 min, 24 h).
    public init(baseMs: Int64 = 1000, maxMs: Int64 = 5 * 60 * 1000, giveUpAfterMs: Int64 = 24 * 3600 * 1000) {
        self.baseMs = max(1, baseMs)
        self.maxMs = max(self.baseMs, maxMs)
        self.giveUpAfterMs = giveUpAfterMs
    }

    /// The wait after the `failures`-th failed attempt in a row (1: the first): base, 2 × base,
    /// 4 × base, … at most `maxMs`.
    public func delayMs(afterFailures failures: Int) -> Int64 {
        let doublings = max(0, failures - 1)
        if doublings >= 62 { return maxMs }
        let (delay, overflow) = baseMs.multipliedReportingOverflow(by: Int64(1) << doublings)
        return overflow ? maxMs : min(delay, maxMs)
    }

    /// Whether an event queued at `queuedAt` that just failed at `now` is given up.
    public func isExpired(queuedAt: Int64, now: Int64) -> Bool {
        now - queuedAt >= giveUpAfterMs
    }
}
