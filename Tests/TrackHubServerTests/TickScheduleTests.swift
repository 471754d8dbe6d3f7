import Testing
@testable import TrackHubServer

/// The one tick scheduler: a hub alone walks its phases, a cluster node reads the phase of
/// each sub-tick of log time.
@Suite struct TickScheduleTests {
    @Test func aHubAloneServesEachPhaseInTurnAndAnIdleTripJoinsTheNext() {
        var schedule = TickSchedule(tickHz: 10)
        #expect(schedule.phases == 20)
        schedule.insert("a")
        #expect(schedule.takeDue() == ["a"], "an idle trip's first frame comes at the next sub-tick")
        schedule.insert("b")
        schedule.insert("a")  // already scheduled: keeps its phase
        for _ in 1..<20 { #expect(!schedule.takeDue().contains("a")) }
        #expect(schedule.takeDue() == ["a"], "one frame per trip per tick")
        schedule.remove("a")
        #expect(schedule.count == 1)
    }

    @Test func aClusterNodeReadsPhasesByLogTime() {
        var schedule = TickSchedule(tickHz: 10)
        schedule.insert("t", phase: 7)
        #expect(schedule.members(ofPhase: 7) == ["t"])
        #expect(schedule.members(ofPhase: 27) == ["t"], "phases wrap around the tick")
        schedule.insert("t", phase: -1)
        #expect(schedule.members(ofPhase: 19) == ["t"])
        #expect(schedule.members(ofPhase: 7).isEmpty, "a trip is in one phase")
        #expect(schedule.count == 1)
    }
}
