import Testing
@testable import TrackHubServer

/// PROTOCOL 17's `stop` message cadence, per subscription of a link for one stop.
@Suite struct StopMessageGateTests {
    typealias Standing = StopMessageGate.Standing

    @Test func theFirstStandingIsSentAndAnUnchangedOneIsNot() {
        var gate = StopMessageGate()
        do { let sent = gate.shouldSend(Standing(stopsBefore: 2, etaS: 1500, visible: false), nowMs: 0); #expect(sent) }
        do { let sent = gate.shouldSend(Standing(stopsBefore: 2, etaS: 1500, visible: false), nowMs: 5000); #expect(!sent) }
    }

    @Test func stopsBeforeOrVisibleChangingIsSentAtOnce() {
        var gate = StopMessageGate()
        gate.sentAfterSnapshot(Standing(stopsBefore: 2, etaS: 1500, visible: false))
        do { let sent = gate.shouldSend(Standing(stopsBefore: 1, etaS: 1500, visible: false), nowMs: 10); #expect(sent) }
        do { let sent = gate.shouldSend(Standing(stopsBefore: 1, etaS: 1500, visible: true), nowMs: 11); #expect(sent) }
        do { let sent = gate.shouldSend(Standing(stopsBefore: 1, etaS: 1500, visible: false), nowMs: 12); #expect(sent) }
    }

    @Test func anEtaMoveOfUnderAMinuteIsNotSentOneOfAMinuteIs() {
        var gate = StopMessageGate()
        gate.sentAfterSnapshot(Standing(stopsBefore: 1, etaS: 600, visible: false))
        do { let sent = gate.shouldSend(Standing(stopsBefore: 1, etaS: 541, visible: false), nowMs: 5000); #expect(!sent) }
        do { let sent = gate.shouldSend(Standing(stopsBefore: 1, etaS: 540, visible: false), nowMs: 6000); #expect(sent) }
        // Measured from the last one sent (540), not from the snapshot's.
        do { let sent = gate.shouldSend(Standing(stopsBefore: 1, etaS: 500, visible: false), nowMs: 9000); #expect(!sent) }
        do { let sent = gate.shouldSend(Standing(stopsBefore: 1, etaS: 600, visible: false), nowMs: 9000); #expect(sent) }
    }

    @Test func etaMessagesComeAtMostOnceASecond() {
        var gate = StopMessageGate()
        gate.sentAfterSnapshot(Standing(stopsBefore: 1, etaS: 600, visible: false))
        do { let sent = gate.shouldSend(Standing(stopsBefore: 1, etaS: 400, visible: false), nowMs: 1000); #expect(sent) }
        do { let sent = gate.shouldSend(Standing(stopsBefore: 1, etaS: 200, visible: false), nowMs: 1999); #expect(!sent) }
        do { let sent = gate.shouldSend(Standing(stopsBefore: 1, etaS: 200, visible: false), nowMs: 2000); #expect(sent) }
        // The bound is for the ETA alone: a change of visible is never held back.
        do { let sent = gate.shouldSend(Standing(stopsBefore: 1, etaS: 0, visible: true), nowMs: 2001); #expect(sent) }
    }

    @Test func anEtaComingOrGoingCountsAsAMove() {
        var gate = StopMessageGate()
        gate.sentAfterSnapshot(Standing(stopsBefore: 0, etaS: nil, visible: false))
        do { let sent = gate.shouldSend(Standing(stopsBefore: 0, etaS: 30, visible: false), nowMs: 0); #expect(sent) }
        do { let sent = gate.shouldSend(Standing(stopsBefore: 0, etaS: nil, visible: false), nowMs: 1000); #expect(sent) }
    }
}
