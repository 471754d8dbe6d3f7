import Foundation
import Testing
@testable import TrackHubCore

/// One test (at least) per numbered rule of PROTOCOL section 6, named after the rule it holds.
@Suite struct OnRouteRuleTests {  // 6.1
    @Test func fixWithinRerouteDistanceIsOnRoute() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 100, north: 90))
        #expect(d.trip.status == .moving)
        #expect(d.eventNames.isEmpty)
        d.send(Fixture.at(east: 200, north: 110), at: 5000)
        #expect(d.trip.status == .offRoute)
        #expect(d.eventNames == ["off_route"])
    }

    @Test func offRouteTripNeedsHalfTheRerouteDistanceToComeBack() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 200, north: 150), at: 5000)
        d.send(Fixture.at(east: 300, north: 70), at: 10000)  // within 100 m but not within 50 m
        #expect(d.trip.status == .offRoute)
        d.send(Fixture.at(east: 400, north: 40), at: 15000)
        #expect(d.trip.status == .moving)
        #expect(d.eventNames == ["off_route", "back_on_route"])
    }

    @Test func candidateWithinAccuracyToleranceWinsInOrder() {
        // Two passes 30 m apart: with accuracy 25 m the later pass is a candidate too, and the
        // in-order rule keeps the marker on the pass it is travelling.
        let pts = [Fixture.at(east: 0), Fixture.at(east: 1000), Fixture.at(east: 1000, north: 30), Fixture.at(east: 0, north: 30)]
        var d = Driver(Fixture.trip(route: try! Route(points: pts)))
        d.send(Fixture.at(east: 100, north: 20), accuracyM: 25)  // nearer the way back, but the out pass is within tolerance
        #expect(abs(alongOf(d.trip, at: d.now)! - 100) < 0.5)
        d.send(Fixture.at(east: 200, north: 25), at: 5000, accuracyM: 5)  // tolerance 10: only the way back
        #expect(abs(d.segments.last!.doneM! - 1830) < 0.5)
    }

    @Test func markerAlongDistanceIsZeroBeforeFirstFix() {
        // On a street passed twice, the first fix takes the first pass (reference 0).
        var d = Driver(Fixture.trip(route: Fixture.outAndBack()))
        #expect(d.trip.marker(at: d.now) == nil)
        d.send(Fixture.at(east: 800, north: 2))
        #expect(abs(alongOf(d.trip, at: d.now)! - 800) < 0.5)
    }

    @Test func inOrderRuleFollowsOutAndBackRoute() {
        var d = Driver(Fixture.trip(route: Fixture.outAndBack()))
        var t: Int64 = 0
        for e in stride(from: 0.0, through: 1000, by: 100) {
            d.send(Fixture.at(east: e, north: 3), at: t); t += 5000
        }
        d.advance(to: Fixture.t0 + t)
        #expect(abs(alongOf(d.trip, at: d.now)! - 1000) < 1)
        for e in stride(from: 900.0, through: 100, by: -100) {
            d.send(Fixture.at(east: e, north: -3), at: t); t += 5000
            d.advance(to: Fixture.t0 + t)
            #expect(abs(alongOf(d.trip, at: d.now)! - (2000 - e)) < 1)
        }
    }

    @Test func burstOnAStreetPassedTwiceIsFollowedInOrder() {
        // 6.1 (amended): a backlog sent at once is judged while the marker still stands at the
        // first fix; the way back (east 900 … 500, along 1100 … 1500) must not take the way out.
        var d = Driver(Fixture.trip(route: Fixture.outAndBack()))
        var ts = d.now
        var targets: [Double] = []
        for e in Array(stride(from: 100.0, through: 1000, by: 100)) + Array(stride(from: 900.0, through: 500, by: -100)) {
            let f = Fixture.fix(Fixture.at(east: e, north: e == 1000 ? 0 : 3), ts: ts, seq: Int64(targets.count + 1))
            ts += 10_000
            #expect(d.trip.judge(f) == .applied)
            if let segment = d.trip.apply(f, now: d.now).segment, let done = segment.doneM { targets.append(done) }
        }
        #expect(targets.count == 15)
        #expect(abs(targets.last! - 1500) < 0.5, "the last fix, on the way back at east 500, is at along 1500")
        #expect(zip(targets, targets.dropFirst()).allSatisfy { $0 < $1 }, "each target farther along than the one before")
    }

    @Test func markerMovesAlongRouteGeometryNeverCuttingCorners() {
        let route = Fixture.lShape()
        var d = Driver(Fixture.trip(route: route))
        d.send(Fixture.at(east: 400))
        d.send(Fixture.at(east: 500, north: 400), at: 10_000, durationMs: 10_000)
        // Along distance 400 → 900 over 10 s: at 2 s the marker is at the corner, at 5 s at 650 m,
        // that is 150 m up the second leg (a chord would be inside the L).
        let mid = d.trip.marker(at: d.now + 5000)!
        #expect(abs(mid.alongM! - 650) < 0.5)
        #expect(Geodesy.distanceM(mid.position, Fixture.at(east: 500, north: 150)) < 1)
        for k in 0...100 {
            let s = d.trip.marker(at: d.now + Int64(k * 100))!
            #expect(route.nearest(to: s.position).offsetM < 0.01)
        }
    }
}

@Suite struct AnimationRuleTests {  // 6.2, 6.3
    @Test func durationDefaultsToTimeSincePreviousAppliedFixAtMostTenSeconds() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 0))
        d.send(Fixture.at(east: 100), at: 4000)
        #expect(d.segments.last!.durationMs == 4000)
        d.send(Fixture.at(east: 300), at: 34_000)
        #expect(d.segments.last!.durationMs == 10_000)
    }

    @Test func durationIsRoundedAndClampedToSixtySeconds() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 0))
        // Short moves, so the catch-up limit (5 m/s at least) does not stretch them.
        d.send(Fixture.at(east: 5), at: 10_000, durationMs: 1234.5)
        #expect(d.segments.last!.durationMs == 1235)
        d.send(Fixture.at(east: 5), at: 20_000, durationMs: -50)
        #expect(d.segments.last!.durationMs == 0)
        d.send(Fixture.at(east: 300), at: 30_000, durationMs: 100_000)
        #expect(d.segments.last!.durationMs == 60_000)
    }

    @Test func firstFixPlacesMarkerAtOnce() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 300), durationMs: 5000)
        let seg = d.segments[0]
        #expect(seg.durationMs == 0)
        #expect(seg.path.count == 1)
        #expect(abs(d.trip.marker(at: d.now)!.alongM! - 300) < 0.5)
        #expect(!d.trip.isAnimating(at: d.now))
    }

    @Test func fixMidAnimationStartsFromCurrentSampledMarker() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 0))
        d.send(Fixture.at(east: 500), at: 10_000, durationMs: 10_000)
        d.advance(by: 5000)
        let before = d.trip.marker(at: d.now)!
        #expect(abs(before.alongM! - 250) < 0.5)
        d.send(Fixture.at(east: 800))
        #expect(d.segments.last!.path.first == before.position)
        #expect(d.trip.marker(at: d.now)!.position == before.position)
    }

    @Test func tickSendsFramesOnlyWhileMarkerMoves() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 0))
        d.advance(by: 5000)
        let afterFirst = d.frames.count
        #expect(afterFirst == 1)  // the placement
        d.send(Fixture.at(east: 100), durationMs: 4000)  // 25 m/s: within the limit (1.5 × 20 m/s)
        d.advance(by: 5000)
        #expect(d.frames.count == afterFirst + 40)
        var trip = d.trip
        #expect(trip.tick(now: d.now + 100).frame == nil)
    }

    @Test func lastFrameOfAnimationIsExactlyAtTarget() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 0))
        d.send(Fixture.at(east: 170), at: 3000, durationMs: 1050)  // does not end on a tick
        d.advance(by: 2000)
        let target = d.trip.route!.point(atDistance: d.segments.last!.doneM!)
        #expect(d.frames.last!.position == target)
        #expect(d.segments.last!.path.last == target)
    }
}

@Suite struct JitterRuleTests {  // 6.4
    @Test func fixBehindMarkerWithinJitterThresholdStartsNoAnimation() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 500))
        let v = d.send(Fixture.at(east: 480), at: 3000)
        #expect(v == .applied)
        #expect(d.segments.count == 1)
        #expect(abs(alongOf(d.trip, at: d.now)! - 500) < 0.5)
    }

    @Test func runningAnimationFinishesDespiteSmallStepBack() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 500), at: 6000, durationMs: 4000)
        d.advance(by: 3000)  // marker at 400
        d.send(Fixture.at(east: 390))
        #expect(d.segments.count == 2)
        d.advance(by: 2000)
        #expect(abs(alongOf(d.trip, at: d.now)! - 500) < 0.5)
    }

    @Test func jitterThresholdGrowsWithAccuracy() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 500))
        d.send(Fixture.at(east: 440), at: 3000, accuracyM: 40)  // 60 m back < 80 m
        #expect(d.segments.count == 1)
        d.send(Fixture.at(east: 440), at: 6000, accuracyM: 10)  // 60 m back >= 30 m
        #expect(d.segments.count == 2)
    }

    @Test func largeJumpBackIsFollowed() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 500))
        d.send(Fixture.at(east: 400), at: 3000)
        let seg = d.segments.last!
        #expect(seg.progressTo! < seg.progressFrom!)
        d.advance(by: 5000)
        #expect(abs(alongOf(d.trip, at: d.now)! - 400) < 0.5)
    }
}

@Suite struct JudgingRuleTests {  // 6.5
    @Test func fixFasterThanMaxSpeedIsOutlier() {
        var trip = Fixture.trip()
        #expect(trip.judge(Fixture.fix(Fixture.at(east: 0), ts: 1000, seq: 1)) == .applied)
        #expect(trip.judge(Fixture.fix(Fixture.at(east: 1000), ts: 6000, seq: 2)) == .refused(.outlier))  // 200 m/s
        // The outlier is not the reference: 350 m in 10 s since the first fix is fine.
        #expect(trip.judge(Fixture.fix(Fixture.at(east: 350), ts: 11_000, seq: 3)) == .applied)
    }

    @Test func fixNotAfterPreviousAppliedIsOutOfOrder() {
        var trip = Fixture.trip()
        _ = trip.judge(Fixture.fix(Fixture.at(east: 0), ts: 5000, seq: 1))
        #expect(trip.judge(Fixture.fix(Fixture.at(east: 0), ts: 5000, seq: 2)) == .refused(.outOfOrder))
        #expect(trip.judge(Fixture.fix(Fixture.at(east: 0), ts: 4000, seq: 3)) == .refused(.outOfOrder))
    }

    @Test func repeatedSeqIsDuplicateWhateverItsFields() {
        var trip = Fixture.trip()
        _ = trip.judge(Fixture.fix(Fixture.at(east: 0), ts: 1000, seq: 5))
        #expect(trip.judge(Fixture.fix(Fixture.at(east: 50), ts: 9000, seq: 5)) == .refused(.duplicate))
        // A refused fix is stored too: its seq is a duplicate next time.
        #expect(trip.judge(Fixture.fix(Fixture.at(east: 5000), ts: 2000, seq: 6)) == .refused(.outlier))
        #expect(trip.judge(Fixture.fix(Fixture.at(east: 10), ts: 3000, seq: 6)) == .refused(.duplicate))
    }

    @Test func seqlessFixWithStoredTimestampIsDuplicate() {
        var trip = Fixture.trip()
        _ = trip.judge(Fixture.fix(Fixture.at(east: 0), ts: 1000, seq: 1))
        #expect(trip.judge(Fixture.fix(Fixture.at(east: 0), ts: 1000)) == .refused(.duplicate))
        #expect(trip.judge(Fixture.fix(Fixture.at(east: 10), ts: 2000)) == .applied)
        #expect(trip.judge(Fixture.fix(Fixture.at(east: 20), ts: 2000)) == .refused(.duplicate))
    }

    @Test func refusalsAreCheckedInProtocolOrder() {
        let wp = Fixture.at(east: 100)
        var d = Driver(Fixture.trip(waypoints: [wp]))
        d.send(Fixture.at(east: 100))
        d.advance(by: 100)
        #expect(d.trip.status == .holding)
        var t = d.trip
        let ts = d.now
        #expect(t.judge(Fixture.fix(wp, ts: ts + 1000, seq: 1)) == .refused(.duplicate))
        #expect(t.judge(Fixture.fix(wp, ts: ts - 100, seq: 50)) == .refused(.outOfOrder))
        #expect(t.judge(Fixture.fix(Fixture.at(east: 900), ts: ts + 1000, seq: 51)) == .refused(.outlier))
        #expect(t.judge(Fixture.fix(wp, ts: ts + 2000, seq: 52)) == .refused(.holding))
        _ = t.end(now: ts + 3000)
        #expect(t.judge(Fixture.fix(wp, ts: ts + 4000, seq: 53)) == .refused(.ended))
    }

    @Test func seenKeysAreBoundedAndForgetTheOldest() throws {
        var s = SeenFixKeys(capacity: 3)
        for k in 1...4 { s.insert(Int64(k)) }
        #expect(s.count == 3)
        #expect(!s.contains(1) && s.contains(2) && s.contains(4))
        let back = try JSONDecoder().decode(SeenFixKeys.self, from: JSONEncoder().encode(s))
        var s2 = back
        s.insert(5); s2.insert(5)
        #expect(s == s2 && !s2.contains(2))
        #expect(SeenFixKeys.defaultCapacity == 100_000)
    }
}

@Suite struct WaypointRuleTests {  // 6.6
    @Test func waypointOrDestinationTooFarIsSetupError() {
        let r = Fixture.eastRoute()
        do {
            _ = try Trip(id: "a", route: r, waypoints: [Fixture.at(east: 100), Fixture.at(east: 200, north: 150)], destination: nil, config: TripConfig(), now: 0)
            Issue.record("expected an error")
        } catch {
            if case .waypointTooFar(let i, let dist) = error { #expect(i == 1 && abs(dist - 150) < 1) } else { Issue.record("\(error)") }
            #expect(error.field == "waypoints[1]")
            #expect(error.message.contains("waypoints[1]"))
        }
        do {
            _ = try Trip(id: "a", route: r, waypoints: [], destination: Fixture.at(east: 1000, north: 120), config: TripConfig(), now: 0)
            Issue.record("expected an error")
        } catch {
            #expect(error.field == "destination")
        }
    }

    @Test func waypointsProjectAtOrAfterThePreviousProjection() throws {
        let t = try Trip(id: "a", route: Fixture.outAndBack(), waypoints: [Fixture.at(east: 1000), Fixture.at(east: 400)], destination: nil, config: TripConfig(), now: 0)
        #expect(abs(t.waypoints[0].alongM! - 1000) < 0.5)
        #expect(abs(t.waypoints[1].alongM! - 1600) < 0.5)
        #expect(abs(t.destinationAlongM! - 2000) < 0.5)
    }

    @Test func targetBeyondNextWaypointIsClampedToIt() {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 500)]))
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 800), at: 15_000)
        #expect(abs(d.segments.last!.doneM! - 500) < 0.5)
        // And on the first fix as well.
        var d2 = Driver(Fixture.trip(waypoints: [Fixture.at(east: 500)]))
        d2.send(Fixture.at(east: 800))
        #expect(abs(alongOf(d2.trip, at: d2.now)! - 500) < 0.5)
    }

    @Test func reachingWaypointWithWaitingHoldsUntilProceed() throws {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 500)]))
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 500), at: 10_000)
        d.advance(by: 10_000)
        #expect(d.trip.status == .holding)
        #expect(d.events.last!.kind == .waypointReached(index: 0, remainingWaypoints: 0))
        #expect(d.send(Fixture.at(east: 600), at: 25_000) == .refused(.holding))
        #expect(abs(alongOf(d.trip, at: d.now)! - 500) < 0.5)
        let ev = try d.trip.proceed(now: d.now)
        #expect(ev.map(\.kind) == [.waypointResumed(index: 0, remainingWaypoints: 0)])
        #expect(d.trip.status == .moving && d.trip.leg == 1 && d.trip.waypoints[0].visited)
        #expect(d.send(Fixture.at(east: 700), at: 30_000) == .applied)
        #expect(throws: TripCommandError.notHolding(status: .moving)) { try d.trip.proceed(now: d.now) }
    }

    @Test func runningAnimationStillEndsAtTargetAfterWaypointReached() {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 500)]))
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 500), at: 8000, durationMs: 8000)
        d.advance(by: 7200)  // along 460: within 50 m of the waypoint
        #expect(d.trip.status == .holding)
        #expect(abs(alongOf(d.trip, at: d.now)! - 460) < 1)
        d.advance(by: 2000)
        #expect(abs(alongOf(d.trip, at: d.now)! - 500) < 0.5)
    }

    @Test func withoutWaitingWaypointIsVisitedAtOnceWithBothEvents() {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 300), Fixture.at(east: 600)], config: TripConfig(waitAtWaypoints: false)))
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 300), at: 4000)
        d.advance(by: 4000)
        #expect(d.eventNames == ["waypoint_reached", "waypoint_resumed"])
        #expect(d.events[0].kind == .waypointReached(index: 0, remainingWaypoints: 1))
        #expect(d.events[1].kind == .waypointResumed(index: 0, remainingWaypoints: 1))
        #expect(d.trip.status == .moving && d.trip.leg == 1)
    }

    @Test func waypointWithoutRouteIsReachedByStraightLine() {
        var d = Driver(Fixture.trip(route: nil, waypoints: [Fixture.at(east: 300, north: 300)]))
        d.send(Fixture.at(east: 0))
        d.send(Fixture.at(east: 280, north: 290), at: 20_000)
        d.advance(by: 15_000)  // 403 m at the catch-up limit (1.5 × 20 m/s): 13.4 s
        #expect(d.trip.status == .holding)
    }
}

@Suite struct ArrivalRuleTests {  // 6.7
    @Test func arrivesWhenNoWaypointLeftAndMarkerWithinBuffer() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 800))
        d.send(Fixture.at(east: 1000), at: 5000)
        d.advance(by: 2000)
        #expect(d.trip.status != .arrived)
        d.advance(by: 4000)
        #expect(d.trip.status == .arrived)
        #expect(d.eventNames == ["arrived"])
        #expect(d.trip.arrivedAt != nil)
        #expect(d.trip.progressInfo(at: d.now).etaS == 0)
        #expect(d.send(Fixture.at(east: 990), at: 20_000) == .refused(.arrived))
    }

    @Test func tripWithoutDestinationNeverArrives() {
        var d = Driver(Fixture.trip(route: nil))
        d.send(Fixture.at(east: 0))
        d.send(Fixture.at(east: 0, north: 10), at: 5000)
        d.advance(by: 10_000)
        #expect(d.trip.status == .moving)
        #expect(d.trip.destination == nil)
    }

    @Test func arrivalCheckedAgainRightAfterProceed() throws {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 980)]))
        d.send(Fixture.at(east: 980))
        d.advance(by: 100)
        #expect(d.trip.status == .holding)
        let ev = try d.trip.proceed(now: d.now)
        #expect(ev.map(\.kind.name) == ["waypoint_resumed", "arrived"])
        #expect(d.trip.status == .arrived)
    }
}

@Suite struct OffRouteRuleTests {  // 6.8
    @Test func offRouteIsJudgedOnReportedPositionNotClampedOne() {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 300)]))
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 800, north: 90), at: 10_000)  // clamped to 300, still on route
        #expect(d.trip.status == .moving)
        d.send(Fixture.at(east: 800, north: 120), at: 20_000)
        #expect(d.trip.status == .offRoute)
        if case .offRoute(let dist) = d.events.last!.kind { #expect(abs(dist - 120) < 1) }
    }

    @Test func offRouteMarkerMovesStraightAndKeepsLastOnRouteNumbers() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 300))
        d.send(Fixture.at(east: 500, north: 200), at: 10_000)
        #expect(d.eventNames == ["off_route"])
        let seg = d.segments.last!
        #expect(seg.path.count == 2)
        #expect(abs(seg.doneM! - 300) < 0.5)
        d.advance(by: 5000)
        let info = d.trip.progressInfo(at: d.now)
        #expect(abs(info.doneM! - 300) < 0.5)
        #expect(abs(info.progress! - 0.3) < 0.001)
        #expect(Geodesy.distanceM(d.trip.marker(at: d.now)!.position, Fixture.at(east: 400, north: 100)) < 1)
        d.send(Fixture.at(east: 600, north: 250), at: 20_000)
        #expect(d.eventNames == ["off_route"])  // once per excursion
    }

    @Test func backOnRouteGoesStraightToSnappedPointThenAlongRoute() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 300))
        d.send(Fixture.at(east: 400, north: 200), at: 10_000)
        d.send(Fixture.at(east: 600, north: 10), at: 20_000)
        #expect(d.eventNames == ["off_route", "back_on_route"])
        guard case .straightToRoute(_, let toM) = d.trip.animation!.path else { Issue.record("not straight to route"); return }
        #expect(abs(toM - 600) < 0.5)
        d.advance(by: 10_000)
        #expect(abs(alongOf(d.trip, at: d.now)! - 600) < 0.5)
        d.send(Fixture.at(east: 700), at: 30_000)
        guard case .alongRoute = d.trip.animation!.path else { Issue.record("not along route"); return }
    }
}

@Suite struct ProgressRuleTests {  // 6.9
    @Test func progressDoneAndRemainingComeFromAlongDistance() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 250))
        let info = d.trip.progressInfo(at: d.now)
        #expect(abs(info.doneM! - 250) < 0.5)
        #expect(abs(info.remainingM! - (d.trip.destinationAlongM! - info.doneM!)) < 1e-9)
        #expect(abs(info.progress! - info.doneM! / d.trip.destinationAlongM!) < 1e-12)
    }

    @Test func etaUsesExponentiallyWeightedSpeedRoundedUp() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 0))
        #expect(d.trip.progressInfo(at: d.now).etaS == nil)  // speed unknown
        d.send(Fixture.at(east: 100), at: 10_000)  // 10 m/s
        d.send(Fixture.at(east: 300), at: 20_000)  // 20 m/s → 0.3 × 20 + 0.7 × 10 = 13
        #expect(abs(d.trip.speedMps! - 13) < 0.01)
        let seg = d.segments.last!
        #expect(seg.etaS == Int((seg.remainingM! / d.trip.speedMps!).rounded(.up)))
    }

    @Test func etaIsNullBelowHalfMetrePerSecond() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 0))
        d.send(Fixture.at(east: 4), at: 10_000)  // 0.4 m/s
        #expect(d.trip.progressInfo(at: d.now).etaS == nil)
    }

    @Test func offRouteSpeedUsesStraightLineDistance() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 0, north: 300))
        d.send(Fixture.at(east: 0, north: 400), at: 10_000)
        #expect(abs(d.trip.speedMps! - 10) < 0.05)
    }

    @Test func tripWithoutRouteHasNoProgressNumbers() {
        var d = Driver(Fixture.trip(route: nil))
        d.send(Fixture.at(east: 0))
        let info = d.trip.progressInfo(at: d.now)
        #expect(info.progress == nil && info.doneM == nil && info.remainingM == nil && info.etaS == nil)
    }
}

@Suite struct StatusAndEventRuleTests {  // 6.10 and event numbering
    @Test func statusFollowsTheTripLifecycle() throws {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 500)]))
        #expect(d.trip.status == .pending)
        d.send(Fixture.at(east: 100))
        #expect(d.trip.status == .moving)
        d.send(Fixture.at(east: 200, north: 200), at: 10_000)
        #expect(d.trip.status == .offRoute)
        d.send(Fixture.at(east: 450), at: 20_000)
        #expect(d.trip.status == .moving)
        d.advance(by: 10_000)
        #expect(d.trip.status == .holding)
        _ = try d.trip.proceed(now: d.now)
        #expect(d.trip.status == .moving)
        d.send(Fixture.at(east: 1000), at: 40_000)
        d.advance(by: 25_000)  // 550 m, slowed to the catch-up limit
        #expect(d.trip.status == .arrived)
        #expect(d.trip.end(now: d.now).map(\.kind) == [.ended])
        #expect(d.trip.status == .ended)
        #expect(d.trip.end(now: d.now + 1).isEmpty)
    }

    @Test func eventsAreNumberedFromOnePerTrip() {
        var trip = try! Trip(id: "x", route: Fixture.eastRoute(), waypoints: [], destination: nil, config: TripConfig(), now: 0)
        #expect(trip.lastEventNumber == 0)
        #expect(trip.created(now: 0).n == 1)
        var d = Driver(trip)
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 100, north: 300), at: 10_000)
        d.send(Fixture.at(east: 300), at: 20_000)
        #expect(d.events.map(\.n) == [2, 3])
        trip = d.trip
        #expect(trip.end(now: d.now).first?.n == 4)
        #expect(trip.lastEventNumber == 4)
    }

    @Test func endedTripStopsMoving() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 400), at: 5000, durationMs: 10_000)
        d.advance(by: 2000)
        let here = d.trip.marker(at: d.now)!.position
        _ = d.trip.end(now: d.now)
        #expect(d.trip.marker(at: d.now + 5000)!.position == here)
        #expect(d.trip.tick(now: d.now + 5000).frame == nil)
        #expect(!d.trip.isAnimating(at: d.now))
    }
}
