import Testing
@testable import TrackHubCore

/// PROTOCOL 6.5 and 7: a stored fix is a duplicate however many fixes came since. Memory
/// holds a bounded number of keys; once full, the keys it cannot vouch for are the ones
/// the hub must ask its store about.
@Suite struct StoredFixKeysTests {
    /// A trip whose memory holds only `capacity` keys per set, after `count` fixes 1 s apart.
    func tripAfter(_ count: Int, capacity: Int) -> Trip {
        var trip = Fixture.trip()
        trip.seenSeqs = SeenFixKeys(capacity: capacity)
        trip.seenTimestamps = SeenFixKeys(capacity: capacity)
        for i in 0..<count {
            _ = trip.judge(Fixture.fix(Fixture.at(east: Double(i)), ts: Fixture.t0 + Int64(i) * 1000, seq: Int64(i)))
        }
        return trip
    }

    @Test func memoryThatForgotNothingAsksNothing() {
        let trip = tripAfter(3, capacity: 5)
        let old = Fixture.fix(Fixture.at(east: 0), ts: Fixture.t0 + 9000, seq: 77)
        let keys = trip.fixKeysToCheckInStore([old])
        #expect(keys.seqs.isEmpty && keys.timestamps.isEmpty)
    }

    @Test func fullMemoryAsksForWhatItDoesNotHold() {
        let trip = tripAfter(10, capacity: 5)  // seqs 0...4 forgotten
        let resent = Fixture.fix(Fixture.at(east: 1), ts: Fixture.t0 + 99_000, seq: 1)
        let remembered = Fixture.fix(Fixture.at(east: 9), ts: Fixture.t0 + 99_000, seq: 9)
        let seqless = Fixture.fix(Fixture.at(east: 2), ts: Fixture.t0 + 2000)
        let keys = trip.fixKeysToCheckInStore([resent, remembered, seqless])
        #expect(keys.seqs == [1])
        #expect(keys.timestamps == [Fixture.t0 + 2000])
    }

    @Test func keysTheStoreHoldsMakeDuplicates() {
        var trip = tripAfter(10, capacity: 5)
        let resent = Fixture.fix(Fixture.at(east: 1), ts: Fixture.t0 + 99_000, seq: 1)
        // Without the store's answer the forgotten fix would be applied (its ts is the newest).
        var unaided = trip
        #expect(unaided.judge(resent) == .applied)
        trip.rememberStoredFixKeys(seqs: [1], timestamps: [])
        #expect(trip.judge(resent) == .refused(.duplicate))
        let seqless = Fixture.fix(Fixture.at(east: 2), ts: Fixture.t0 + 2000)
        trip.rememberStoredFixKeys(seqs: [], timestamps: [Fixture.t0 + 2000])
        #expect(trip.judge(seqless) == .refused(.duplicate))
    }
}
