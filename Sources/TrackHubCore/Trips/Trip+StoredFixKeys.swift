/// The duplicate rule past what memory holds (PROTOCOL 6.5 and 7: a fix whose seq, or without
/// seq whose ts, is already stored is a `duplicate`, however many fixes the trip has had since).
///
/// The trip remembers a bounded number of keys (`SeenFixKeys`). When a set is full, a key it
/// does not hold may be one it forgot, so the caller asks its store for those keys before
/// judging, and hands the answer back; judging then sees every stored key of these fixes.
extension Trip {
    /// The keys of `fixes` that memory cannot vouch for: not remembered, in a set that may
    /// have forgotten some. Empty for every trip with fewer fixes than the set's capacity.
    public func fixKeysToCheckInStore(_ fixes: [FixInput]) -> (seqs: [Int64], timestamps: [Int64]) {
        var seqs: [Int64] = []
        var timestamps: [Int64] = []
        for fix in fixes {
            if let seq = fix.seq {
                if seenSeqs.mayHaveForgotten && !seenSeqs.contains(seq) { seqs.append(seq) }
            } else if seenTimestamps.mayHaveForgotten && !seenTimestamps.contains(fix.ts) {
                timestamps.append(fix.ts)
            }
        }
        return (seqs, timestamps)
    }

    /// Records keys the store says it holds, so `judge` calls their fixes duplicates.
    public mutating func rememberStoredFixKeys(seqs: some Sequence<Int64>, timestamps: some Sequence<Int64>) {
        for seq in seqs { seenSeqs.insert(seq) }
        for ts in timestamps { seenTimestamps.insert(ts) }
    }
}
