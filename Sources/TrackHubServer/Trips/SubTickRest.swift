/// The trips of one sub-tick not yet ticked, kept while the hub returns to the loop to read
/// waiting input first (fixes ahead of frames, Hub+Tick). Bound: one sub-tick's trips (the
/// rest of a sub-tick is finished before the next sub-tick starts), each ticked at most once.
struct SubTickRest {
    /// Deliveries (frames handed to connections, plus one per trip ticked) between two looks
    /// for waiting input: a fix that arrives during a sub-tick waits for at most this many
    /// writes and one trip's fan-out. 64 loopback sends are about 0.3 ms here; one look is
    /// one `epoll_wait` with a zero timeout and one uncontended lock.
    static let deliveriesPerSlice = 64

    /// The phase the trips were taken from (a trip moved out of it meanwhile is skipped).
    let phase: Int
    let trips: [String]
    /// The next one to tick.
    var next = 0
}
