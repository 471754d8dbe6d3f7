import Foundation

/// The wall clock in microseconds since the epoch. Hub and generator run on one machine, so
/// the hub's `t` (milliseconds, CLOCK_REALTIME) and these stamps are on the same clock.
@inline(__always)
func wallMicros() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
}
