/// Cluster mode with `--cluster-replicas`: entries the reader holds back because the
/// replicas have not confirmed them (`ReplicaConfirmation`), and their rescue by the
/// partition's owner.
extension RedisCommandLog {
    /// After each batch: which partitions have entries held back, since when.
    func noteHeldEntries(_ held: [Int: StreamID], now: Int64) {
        for p in state.held.keys where held[p] == nil { state.held[p] = nil }
        for (p, id) in held { state.held[p] = (state.held[p]?.since ?? now, id) }
    }

    /// Housekeeping: the owner of a partition whose entries have been held back for
    /// `ReplicaConfirmation.rescueAfterMs` confirms them itself (once a second while they stay).
    func rescueHeldEntries(now: Int64) {
        for (p, held) in state.held where state.parts[p].owned && now - held.since >= ReplicaConfirmation.rescueAfterMs {
            state.held[p] = (now, held.upTo)
            counters.confirmRescues += 1
            state.writer.confirm(partition: p, upTo: held.upTo)
        }
    }
}
