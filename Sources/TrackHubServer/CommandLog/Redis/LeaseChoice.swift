/// Which free partitions a hub tries to take in one lease round (`PartitionLeases`): a pure
/// decision over what the round read, so its rules are tested without Redis.
///
/// Two kinds of free partition are told apart. An **orphan** was held, in this hub's previous
/// round, by a hub that is not live now (it died, or it was this hub and its key lapsed): its
/// trips have no owner, so it is taken at once, up to the fair share, whatever the per-round
/// cap (PROTOCOL 15: within the lease). Every other free partition (a cluster starting, one a
/// live hub released to rebalance) is taken at most `capPerRound` a round, so hubs started
/// together, each seeing few of the others yet, do not grab everything in their first round.
///
/// Orphans are tried in an order that differs by hub: first those whose index modulo the live
/// hubs is this hub's rank among them, so two survivors reading the same free set pick
/// different partitions and both succeed (`SET NX` lets only one win a partition; the loser
/// would wait a round for another).
struct LeaseChoice {
    /// The live hubs' node ids, this hub's among them.
    var live: Set<String>
    /// This hub's node id.
    var me: String
    /// Per partition, its holder in this hub's previous round (empty before the first).
    var previousHolders: [String?]
    /// Per partition, its holder now (nil: free).
    var holders: [String?]
    /// How many partitions this hub holds now.
    var owned: Int
    /// This hub's fair share, `ceil(N/K)`.
    var high: Int
    /// At most this many partitions that are not orphans per round.
    var capPerRound: Int

    /// The free partitions whose holder last round is gone (see the type's comment).
    var orphans: [Int] {
        holders.indices.filter { p in
            guard holders[p] == nil, previousHolders.indices.contains(p), let was = previousHolders[p] else { return false }
            return was == me || !live.contains(was)
        }
    }

    /// The partitions to try to take (`SET NX`), orphans first.
    func takes(using random: inout some RandomNumberGenerator) -> [Int] {
        var want = high - owned
        guard want > 0 else { return [] }
        let orphaned = orphans
        let ranked = live.sorted()
        let rank = ranked.firstIndex(of: me) ?? 0
        let stripe = orphaned.filter { $0 % max(1, ranked.count) == rank }
        let rest = orphaned.filter { $0 % max(1, ranked.count) != rank }.shuffled(using: &random)
        var picks = Array((stripe + rest).prefix(want))
        want -= picks.count
        let orphanSet = Set(orphaned)
        let others = holders.indices.filter { holders[$0] == nil && !orphanSet.contains($0) }
        picks += others.shuffled(using: &random).prefix(min(want, capPerRound))
        return picks
    }
}
