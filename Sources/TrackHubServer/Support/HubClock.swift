import Foundation

/// The hub's two clocks, injected so that tests can run the keep-alive, slow-reader, token
/// and drain rules on a manual clock (`HubClock.manual`) instead of waiting for real time.
/// The core never reads a clock: the hub passes these values in.
public struct HubClock: Sendable {
    /// Milliseconds since the epoch: the `t` of every message.
    public let wallMillis: @Sendable () -> Int64
    /// Microseconds on a monotonic clock, for durations and deadlines.
    public let monotonicMicros: @Sendable () -> Int64

    /// A clock from its two readings: wall time in ms since the epoch, monotonic time in µs.
    public init(wallMillis: @escaping @Sendable () -> Int64, monotonicMicros: @escaping @Sendable () -> Int64) {
        self.wallMillis = wallMillis
        self.monotonicMicros = monotonicMicros
    }

    /// The machine's clocks.
    public static let system = HubClock(wallMillis: systemWallClockMillis, monotonicMicros: systemMonotonicMicros)
}

/// The machine's wall clock in milliseconds since the epoch. Code with a hub reads
/// `hub.services.clock` instead; this is for what runs without one (the log's time stamps).
func systemWallClockMillis() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
}

/// The machine's monotonic clock in microseconds (TrackHubLWS keeps its own).
func systemMonotonicMicros() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
}

/// The CPU time the calling thread has used, in microseconds (`CommitHereBudget` reads the
/// service thread's).
func callingThreadCPUMicros() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
}
