/// Builds the fleet index tick after tick, as the hub does: each build makes exactly the
/// index `FleetIndex.build(members:options:)` makes of the same members, and reuses what
/// the last build computed of every rider that kept its id and its position (its
/// projection, its hash and its place in the canonical order).
///
/// At a million riders, a fifth of them moving, that is most of the canonical order's
/// time (BENCHMARKS.md, "The canonical order kept from the last tick"). Riders are
/// matched by their place in the list, so list the fleet in the same order each tick;
/// a rider added or removed here and there is found again a few places on, and a list
/// in a new order is only as slow as a build from nothing.
///
/// Memory: 44 bytes a rider kept for the next build (its facts and its rank), with the last input and order
/// (shared with the index built from them while it lives).
///
/// Not thread-safe: one build at a time (the hub keeps its builder behind a lock).
public final class FleetIndexBuilder {
    /// The clustering parameters of every build.
    public let options: FleetClusterOptions
    /// What the last build left for the next.
    private var last: FleetIndex.RiderMemo?

    /// A builder with nothing to reuse: its first build is as slow as `FleetIndex.build`.
    public init(options: FleetClusterOptions = .standard) {
        self.options = options
    }

    /// The index of `members` (see `FleetIndex.build(members:options:)`).
    public func build(members: [FleetMember]) -> FleetIndex {
        let (index, memo) = FleetIndex.build(members: members, options: options, reusing: last)
        last = memo
        return index
    }
}
