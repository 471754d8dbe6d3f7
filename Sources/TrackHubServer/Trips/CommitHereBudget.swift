/// When commits on the service thread are allowed (`TripStorage.persist`).
///
/// Why: a fix committed on the service thread, when the store's writer is idle, saves the
/// hand-off to the writer and back (two thread wake-ups, the fix's tail). But a commit there
/// is service-thread time, and that thread is the hub's one bottleneck (it sends every
/// message): once it is busy, the commit belongs on the writer's thread, on the other core.
/// Measured (BENCHMARKS.md, "The fix path"): with every commit here, `scenario.sh large` (the
/// service thread at a full core) delivered 7 % fewer frames. So, per window of
/// `windowMicros`:
/// - commits here only if the service thread used less than `busiestShare` of the last
///   window's time (its own CPU clock: not busy, so a commit here takes no one's time);
/// - and at most `share` of the window in commits here (a stream of fixes on a quiet hub is
///   still cheaper in the writer's group commits past that).
/// Past either, batches go to the writer until the next window.
struct CommitHereBudget {
    /// The window over which the time spent is counted.
    static let windowMicros: Int64 = 100_000
    /// The most of a window commits on the service thread may take (20 ms of every 100 ms).
    static let share = 0.2
    /// The busiest the service thread may have been in the last window for commits here.
    static let busiestShare = 0.5

    private var windowStart: Int64 = 0
    private var threadCPUAtStart: Int64 = 0
    private var spentMicros: Int64 = 0
    private var threadWasBusy = false

    /// Whether a commit may run here at `now` (monotonic µs), the service thread having
    /// used `threadCPU` µs of CPU so far (`callingThreadCPUMicros`).
    mutating func allows(at now: Int64, threadCPU: @autoclosure () -> Int64) -> Bool {
        if now - windowStart >= Self.windowMicros {
            let cpu = threadCPU()
            let elapsed = now - windowStart
            // The first window (windowStart 0) has no history: not busy.
            threadWasBusy = windowStart != 0 && Double(cpu - threadCPUAtStart) >= Double(elapsed) * Self.busiestShare
            windowStart = now
            threadCPUAtStart = cpu
            spentMicros = 0
        }
        return !threadWasBusy && Double(spentMicros) < Double(Self.windowMicros) * Self.share
    }

    /// A commit here took `micros`.
    mutating func spend(_ micros: Int64) {
        spentMicros += micros
    }
}
