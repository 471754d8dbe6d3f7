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

    /// Wake-ups of a hub alone: `fixAt` says at which wake-ups a fix is committed (just before
    /// that wake-up's phase is served). Returns the wake-ups at which the trip was served,
    /// and for each fix the wake-ups it waited for the trip's next serve.
    private func run(_ schedule: inout TickSchedule, wakeUps: Int, fixAt: (Int) -> Bool) -> (serves: [Int], waits: [Int]) {
        var serves: [Int] = []
        var waits: [Int] = []
        var fixPending: Int?
        for w in 0..<wakeUps {
            if fixAt(w) {
                schedule.follow("t")
                fixPending = fixPending ?? w
            }
            if schedule.takeDue().contains("t") {
                serves.append(w)
                if let since = fixPending { waits.append(w - since) }
                fixPending = nil
            }
        }
        return (serves, waits)
    }

    @Test func aTripFollowsItsCourierToThePhaseWhereItsFixesLand() {
        var schedule = TickSchedule(tickHz: 10)
        let phases = schedule.phases
        schedule.insert("t")
        // A courier sending every 10 ticks, its fixes landing 13 sub-ticks after the trip's
        // phase: the second fix that lands there moves the trip.
        let (serves, waits) = run(&schedule, wakeUps: phases * 100) { $0 % (10 * phases) == 13 }
        #expect(waits.count == 10)
        #expect(waits.prefix(2) == [phases - 13, phases - 13], "the first two fixes wait for the trip's phase: \(waits)")
        #expect(waits.dropFirst(2).allSatisfy { $0 == schedule.followMargin }, "the next fixes' frames come soon: \(waits)")
        let gaps = zip(serves, serves.dropFirst()).map { $1 - $0 }
        #expect(gaps.allSatisfy { $0 >= phases }, "never two frames within a tick: \(gaps)")
        #expect(gaps.filter { $0 > phases }.count == 1, "the move costs one longer gap, once: \(gaps)")
        #expect(schedule.phaseMoves == 1)
        #expect(gaps.allSatisfy { $0 < 2 * phases })
    }

    @Test func fixesThatLandAnywhereInTheTickMoveNothing() {
        var schedule = TickSchedule(tickHz: 10)
        let phases = schedule.phases
        schedule.insert("t")
        // Every 10 ticks, but each time 3 sub-ticks later in the tick than the last (a loaded
        // hub's commits, an irregular app): a move would not help the next fix.
        let landings = Set((0..<10).map { 10 * phases * $0 + (7 + 3 * $0) % phases })
        let (serves, _) = run(&schedule, wakeUps: phases * 100) { landings.contains($0) }
        #expect(schedule.phaseMoves == 0)
        let gaps = zip(serves, serves.dropFirst()).map { $1 - $0 }
        #expect(gaps.allSatisfy { $0 == phases }, "\(gaps)")
    }

    @Test func aFixWhoseFrameComesSoonMovesNothing() {
        var schedule = TickSchedule(tickHz: 10)
        schedule.insert("t")
        #expect(schedule.takeDue() == ["t"])
        for _ in 1..<(schedule.phases - schedule.followSlack) { _ = schedule.takeDue() }
        schedule.follow("t")  // its phase is served followSlack wake-ups from now
        for _ in 0..<(3 * schedule.phases) { _ = schedule.takeDue() }
        #expect(schedule.phase(of: "t") == 0)
        #expect(schedule.phaseMoves == 0)
    }

    @Test func followingNeverBringsTwoFramesWithinATick() {
        // Fixes at random wake-ups, sometimes several a tick, some trips leaving and coming back.
        var state: UInt64 = 21  // a fixed linear congruential sequence: the same schedule every run
        func roll() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (state >> 33) % 100
        }
        for tickHz in [1, 10, 20, 50] {
            var schedule = TickSchedule(tickHz: tickHz)
            let phases = schedule.phases
            schedule.insert("t")
            var serves: [Int] = []
            var lastStop = -1
            for w in 0..<(phases * 400) {
                let roll = roll()
                if roll < 12 { schedule.follow("t") }
                if roll == 99 { schedule.remove("t"); lastStop = w }
                if schedule.takeDue().contains("t") { serves.append(w) }
                if !schedule.contains("t") && roll < 50 { schedule.insert("t") }
            }
            // Serves after the last removal (a trip that stopped and started again may tick
            // at once: no frame was sent while it was idle).
            let after = serves.filter { $0 > lastStop }
            let gaps = zip(after, after.dropFirst()).map { $1 - $0 }
            #expect(gaps.allSatisfy { $0 >= phases }, "at \(tickHz) Hz: gaps \(gaps)")
            #expect(gaps.allSatisfy { $0 < 2 * phases }, "at \(tickHz) Hz, a trip is never skipped twice: \(gaps)")
        }
    }

    // MARK: Dozing

    @Test func aDozingTripIsInNoPhaseButStillMovingAndWakesAtItsTimeInTheNextPhase() {
        var schedule = TickSchedule(tickHz: 10)
        schedule.insert("d")
        #expect(schedule.takeDue() == ["d"])
        schedule.doze("d", until: 5_000)
        #expect(schedule.phase(of: "d") == nil)
        #expect(schedule.contains("d") && schedule.count == 1 && schedule.dozingCount == 1)
        for _ in 0..<40 { #expect(!schedule.takeDue().contains("d"), "no tick while it dozes") }
        schedule.wakeDozers(now: 4_999)
        #expect(schedule.dozingCount == 1, "not before its time")
        schedule.wakeDozers(now: 5_000)
        #expect(schedule.dozingCount == 0 && schedule.count == 1)
        #expect(schedule.takeDue() == ["d"], "woken into the phase served next")
    }

    @Test func aFixACommandOrAFrameFollowerWakesADozingTripAtOnce() {
        var schedule = TickSchedule(tickHz: 10)
        for (name, wake) in [
            ("insert", { (s: inout TickSchedule) in s.insert("d") }),
            ("follow", { (s: inout TickSchedule) in s.follow("d") }),
            ("wake", { (s: inout TickSchedule) in s.wake("d") }),
            ("scheduleSoon", { (s: inout TickSchedule) in s.scheduleSoon("d") }),
        ] as [(String, (inout TickSchedule) -> Void)] {
            schedule.insert("d")
            schedule.doze("d", until: 60_000)
            wake(&schedule)
            #expect(schedule.dozingCount == 0, "\(name)")
            #expect(schedule.takeDue() == ["d"], "\(name): ticked at the next sub-tick")
            // Its old wake-up, left in the heap, wakes nothing twice.
            schedule.wakeDozers(now: 60_000)
            #expect(schedule.count == 1, "\(name)")
        }
        schedule.doze("d", until: 70_000)
        schedule.remove("d")
        #expect(schedule.count == 0 && !schedule.contains("d"))
        schedule.wakeDozers(now: 80_000)
        #expect(schedule.count == 0, "a removed trip's wake-up brings nothing back")
    }

    @Test func theWakeUpsOfTripsThatWokeEarlyAreBounded() {
        var schedule = TickSchedule(tickHz: 10)
        for i in 0..<10_000 {
            schedule.insert("d")
            schedule.doze("d", until: 1_000_000 + Int64(i))
            schedule.wake("d")
        }
        schedule.insert("d")
        schedule.doze("d", until: 2_000_000)
        #expect(schedule.pendingWakeups <= 2 * schedule.dozingCount + TickSchedule.staleWakeupsKept + 1)
        schedule.wakeDozers(now: 1_999_999)
        #expect(schedule.dozingCount == 1, "the stale wake-ups before its own wake nothing")
        schedule.wakeDozers(now: 2_000_000)
        #expect(schedule.dozingCount == 0 && schedule.pendingWakeups == 0)
    }
}
