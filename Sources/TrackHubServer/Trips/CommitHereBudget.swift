/// How much of the service thread's time commits on it may take (`TripStorage.persist`).
///
/// Why: a fix committed on the service thread, when the store's writer is idle, saves the
/// hand-off to the writer and back (two thread wake-ups, the fix's tail). But those commits
/// stop the loop meanwhile, and under a heavy stream of fixes the writer's group commit (many
/// fixes in one transaction, on the other core) is the cheaper way. So commits here take at
/// most `share` of each `windowMicros`; past it, fixes go to the writer until the next window.
struct CommitHereBudget {
    /// The window over which the time spent is counted.
    static let windowMicros: Int64 = 100_000
    /// The most of a window commits on the service thread may take (20 ms of every 100 ms).
    static let share = 0.2

    private var windowStart: Int64 = 0
    private var spentMicros: Int64 = 0

    /// Whether a commit may run here at `now` (monotonic µs).
    mutating func allows(at now: Int64) -> Bool {
        if now - windowStart >= Self.windowMicros {
            windowStart = now
            spentMicros = 0
        }
        return Double(spentMicros) < Double(Self.windowMicros) * Self.share
    }

    /// A commit here took `micros`.
    mutating func spend(_ micros: Int64) {
        spentMicros += micros
    }
}
