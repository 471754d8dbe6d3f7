import Foundation

/// The hub's wall clock in milliseconds since the epoch (the `t` of every message).
/// The core never reads a clock: the hub passes this value in.
func wallClockMillis() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
}

/// Microseconds on a monotonic clock, for durations and deadlines (TrackHubLWS keeps its own).
func monotonicMicros() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
}
