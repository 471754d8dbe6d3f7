import Foundation

/// Microseconds on a monotonic clock: the timer's cadence, body deadlines, request durations.
/// (TrackHubServer has its own; the host's is not part of this module's API.)
func monotonicMicros() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
}
