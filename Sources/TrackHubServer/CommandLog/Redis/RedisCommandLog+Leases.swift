import Foundation

/// Cluster mode: acting on the lease thread's reports (`PartitionLeases`), and fencing.
///
/// A node acts as a partition's owner (snapshots, webhooks, ending trips, fleet positions)
/// only while its last report is valid: each report carries `Round.validUntil`, a deadline
/// before its lease keys can lapse in Redis. When a round stalls (a slow Redis, a paused
/// thread) and no report moves the deadline, a timer on the service thread drops the
/// ownership at it, so a hub that takes a lapsed key never acts as owner beside this one.
extension RedisCommandLog {
    /// The lease thread's report (on the service thread).
    func leasesReported(_ round: PartitionLeases.Round) {
        // A report that reached this thread after its deadline (a busy service thread) is
        // not acted on: its keys may have lapsed already.
        let late = round.validUntil <= systemMonotonicMicros() / 1000
        applyOwnership(late ? [] : round.owned ?? [])
        if round.owned != nil { state.ownershipKnown = true }
        state.leaseFence = late ? .max : round.validUntil
        guard !late, !(round.owned ?? []).isEmpty, round.validUntil != .max else { return }
        // One timer per report (a round every tenth of the lease): bounded.
        let delayMs = max(0, round.validUntil - systemMonotonicMicros() / 1000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delayMs))) { [self] in
            services.inbox.run { [self] in fenceLapsedLeases() }
        }
    }

    /// Drops the ownership the last report gave once its deadline has passed (no later
    /// report moved it): the keys may lapse from now on, and another hub take them. Run by
    /// the report's timer, and before an owner's periodic work (housekeeping, the fleet
    /// tick), which may come first when the whole process was paused.
    func fenceLapsedLeases() {
        guard state.leaseFence != .max, systemMonotonicMicros() / 1000 >= state.leaseFence else { return }
        guard state.parts.contains(where: \.owned) else { return }
        logWarning("cluster leases: no lease round has renewed this hub's partitions in time; it stops acting as their owner until one does")
        state.leaseFence = .max
        applyOwnership([])
    }

    /// Makes `owned` the partitions this node acts as the owner of.
    private func applyOwnership(_ owned: Set<Int>) {
        let now = services.clock.wallMillis()
        for p in 0..<state.partitions {
            let owns = owned.contains(p)
            if state.parts[p].owned && !owns { state.parts[p].lastUsed = now }  // let go after the idle time
            state.parts[p].owned = owns
            if owns && state.parts[p].phase == .idle { startApplying(p) }
        }
        updateWebhookScope()
    }
}
