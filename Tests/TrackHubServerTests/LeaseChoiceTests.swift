import Testing
@testable import TrackHubServer

/// The lease rules that make a dead hub's partitions owned again within the lease (PROTOCOL 15,
/// issue 39), without Redis: the pacing derived from `--cluster-lease`, and which free
/// partitions a hub takes in one round.
struct LeaseChoiceTests {
    /// A seeded generator, so the random picks are the same on every run.
    struct Seeded: RandomNumberGenerator {
        /// The generator's state (a linear congruential step per number).
        var state: UInt64
        /// The next number of the sequence.
        mutating func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state
        }
    }

    /// The pacing leaves a dead hub's partitions owned again well within the lease, and fences a hub before its keys can lapse.
    @Test func theWorstTakeOverFitsInTheLease() {
        for leaseMs: Int64 in [1000, 3000, 5000, 60_000] {
            let pacing = LeasePacing(leaseMs: leaseMs)
            // The owner renewed just before it died; another hub notices in its next round
            // (jitter +20 %) and may need one more when two hubs picked the same partition.
            let worst = pacing.keyTTLMs + 2 * pacing.roundMs * 12 / 10
            #expect(worst < leaseMs * 3 / 4, "lease \(leaseMs) ms: worst take-over \(worst) ms")
            // The fence comes before the key can lapse, and after the next round's report even
            // when one of its calls ran into the timeout (so a healthy hub is never fenced).
            #expect(pacing.fenceMs < pacing.keyTTLMs)
            #expect(pacing.fenceMs > pacing.roundMs * 12 / 10 + Int64(pacing.timeoutMs))
        }
    }

    /// A survivor takes a dead hub's partitions up to its fair share in one round, past the per-round cap.
    @Test func aDeadHubsPartitionsAreTakenAtOnceUpToTheShare() {
        // c held 4-7 and 14 and is gone; a holds 0-3, b the rest.
        let before: [String?] = ["a", "a", "a", "a", "c", "c", "c", "c", "b", "b", "b", "b", "b", "b", "c", "b"]
        var now = before
        for p in now.indices where now[p] == "c" { now[p] = nil }
        let owned = now.filter { $0 == "a" }.count
        var random = Seeded(state: 7)
        let choice = LeaseChoice(live: ["a", "b"], me: "a", previousHolders: before, holders: now, owned: owned, high: 8, capPerRound: 2)
        #expect(Set(choice.orphans) == [4, 5, 6, 7, 14])
        let picks = choice.takes(using: &random)
        #expect(picks.count == 8 - owned, "up to the fair share, past the cap of 2: \(picks)")
        #expect(Set(picks).isSubset(of: [4, 5, 6, 7, 14]))
    }

    /// Two survivors reading the same free set pick disjoint partitions (by their rank among the live hubs).
    @Test func twoSurvivorsTryDifferentOrphansFirst() {
        let before: [String?] = (0..<16).map { $0 < 8 ? "dead" : ($0 % 2 == 0 ? "a" : "b") }
        let now: [String?] = before.map { $0 == "dead" ? nil : $0 }
        var random = Seeded(state: 1)
        let a = LeaseChoice(live: ["a", "b"], me: "a", previousHolders: before, holders: now, owned: 4, high: 8, capPerRound: 2).takes(using: &random)
        let b = LeaseChoice(live: ["a", "b"], me: "b", previousHolders: before, holders: now, owned: 4, high: 8, capPerRound: 2).takes(using: &random)
        #expect(Set(a).isDisjoint(with: b), "a \(a), b \(b)")
        #expect(Set(a).union(b) == Set(0..<8))
    }

    /// Free partitions that are not a dead hub's (a cluster starting, one given up to rebalance) are still taken at most two a round.
    @Test func aStartingClusterTakesAtMostTheCapPerRound() {
        var random = Seeded(state: 3)
        let empty = [String?](repeating: nil, count: 16)
        let first = LeaseChoice(live: ["a"], me: "a", previousHolders: [], holders: empty, owned: 0, high: 16, capPerRound: 2)
        #expect(first.orphans.isEmpty)
        #expect(first.takes(using: &random).count == 2)
        // A partition a live hub gave up (to rebalance) is no orphan either.
        var before = empty
        before[3] = "b"
        let later = LeaseChoice(live: ["a", "b"], me: "a", previousHolders: before, holders: empty, owned: 0, high: 8, capPerRound: 2)
        #expect(later.orphans.isEmpty)
        #expect(later.takes(using: &random).count == 2)
    }

    /// A partition shows the present only once a read round begun after its install (or after a request) has read it to its end.
    @Test func aLateJoinerWaitsForARoundBegunAfterItsArrival() {
        var part = ClusterPartition()
        part.phase = .applied
        part.installedRound = 10
        part.drainedRound = 10
        #expect(!part.isPresent, "the snapshot's past until a later round reads it to its end")
        #expect(!part.hasApplied(arrivedAtRound: 10))
        part.drainedRound = 11
        #expect(part.isPresent)
        #expect(part.hasApplied(arrivedAtRound: 10))
        #expect(!part.hasApplied(arrivedAtRound: 11))
        part.phase = .loading
        #expect(!part.hasApplied(arrivedAtRound: 0))
    }
}
