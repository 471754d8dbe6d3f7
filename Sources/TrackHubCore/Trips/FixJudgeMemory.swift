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
