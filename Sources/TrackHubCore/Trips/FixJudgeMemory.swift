/// What `Trip.judge` remembers between fixes: the fixes seen (for duplicates) and the last
/// applied one (for order and outliers). The hub takes a copy before judging a batch and puts
/// it back if the batch could not be stored, so a fix that was never stored is not later
/// taken for a duplicate of itself.
public struct FixJudgeMemory: Sendable, Equatable {
    var seenSeqs: SeenFixKeys
    var seenTimestamps: SeenFixKeys
    var lastApplied: Trip.AppliedFix?
    var previousAppliedTs: Int64?
}

extension Trip {
    /// The judging memory; see `FixJudgeMemory`.
    public var judgeMemory: FixJudgeMemory {
        get {
            FixJudgeMemory(seenSeqs: seenSeqs, seenTimestamps: seenTimestamps, lastApplied: lastApplied, previousAppliedTs: previousAppliedTs)
        }
        set {
            seenSeqs = newValue.seenSeqs
            seenTimestamps = newValue.seenTimestamps
            lastApplied = newValue.lastApplied
            previousAppliedTs = newValue.previousAppliedTs
        }
    }
}

extension Trip {
    /// This trip without its remembered seqs and timestamps: what a store keeps as the trip's
    /// state (stores rebuild the duplicate check from the fixes they hold). Cheap, and it
    /// leaves the hub's copy the only owner of its sets, so judging the next fix does not
    /// copy them.
    public var withoutSeenFixes: Trip {
        var copy = self
        copy.seenSeqs = SeenFixKeys(capacity: seenSeqs.capacity)
        copy.seenTimestamps = SeenFixKeys(capacity: seenTimestamps.capacity)
        return copy
    }
}
