import Foundation
import Testing
@testable import TrackHubCore

/// A courier driving east along `Fixture.eastRoute` at `mps`, a fix every second (hub time =
/// fix time), up to `toM`.
private func drive(_ d: inout Driver, mps: Double, from fromM: Double = 0, toM: Double) {
    var x = fromM
    while x < toM {
        x = min(toM, x + mps)
        d.send(Fixture.at(east: x), at: d.now - Fixture.t0 + 1000)
    }
}

/// The fastest frame-to-frame move among `frames`, m/s, leaving out jump frames.
private func fastestSlide(_ frames: [TripFrame]) -> Double {
    zip(frames, frames.dropFirst()).filter { !$0.1.jump }.map { a, b in
        Geodesy.distanceM(a.position, b.position) / (Double(b.t - a.t) / 1000)
    }.max() ?? 0
}

@Suite struct CatchUpLimitRuleTests {  // 6.2
    @Test func shortGapWithShortDurationIsSlowedToTheLimitNotJumped() {
        var d = Driver(Fixture.trip(route: Fixture.eastRoute(lengthM: 3000)))
        drive(&d, mps: 20, toM: 200)
        let before = d.frames.count
        // 2 s without fixes, then one that asks to cover 60 m in 200 ms (300 m/s).
        d.send(Fixture.at(east: 260), at: d.now - Fixture.t0 + 2000, durationMs: 200)
        let limit = d.trip.catchUpLimitMps()
        #expect(abs(limit - 1.5 * (0.3 * 30 + 0.7 * 20)) < 1e-6)  // 1.5 × v after this fix, r = 1
        let segment = d.segments.last!
        #expect(!segment.jump)
        #expect(segment.durationMs == Int64((60 / limit * 1000).rounded(.up)))
        d.advance(by: 5000)
        let frames = Array(d.frames[(before - 1)...])
        #expect(fastestSlide(frames) <= limit * 1.001)
        #expect(!frames.contains { $0.jump })
        #expect(abs(alongOf(d.trip, at: d.now)! - 260) < 0.01)
    }

    @Test func longGapIsAJumpInFramesAndSegments() {
        var d = Driver(Fixture.trip(route: Fixture.eastRoute(lengthM: 5000)))
        drive(&d, mps: 20, toM: 400)
        // A 65 s tunnel: the next fix is 1 300 m on and asks for 200 ms.
        d.send(Fixture.at(east: 1700), at: d.now - Fixture.t0 + 65_000, durationMs: 200)
        let segment = d.segments.last!
        #expect(segment.jump && segment.durationMs == 0 && segment.path.count == 1)
        #expect(Geodesy.distanceM(segment.path[0], Fixture.at(east: 1700)) < 0.01)
        let before = d.frames.count
        d.advance(by: 1000)
        let after = Array(d.frames[before...])
        #expect(after.count == 1)
        #expect(after.first?.jump == true)
        #expect(Geodesy.distanceM(after[0].position, Fixture.at(east: 1700)) < 0.01)
        // Only that frame carries jump.
        drive(&d, mps: 20, from: 1700, toM: 1800)
        #expect(d.frames.filter(\.jump).count == 1)
        #expect(!d.segments.dropLast(0).suffix(5).contains { $0.jump })
    }

    @Test func aJumpFollowedAtOnceByAnotherFixStillMarksTheNextFrame() {
        var d = Driver(Fixture.trip(route: Fixture.eastRoute(lengthM: 5000)))
        drive(&d, mps: 20, toM: 400)
        d.send(Fixture.at(east: 1700), at: d.now - Fixture.t0 + 65_000, durationMs: 0)
        #expect(d.segments.last?.jump == true)
        // A second fix before any tick: the marker slides on from the jump's target.
        let fix = Fixture.fix(Fixture.at(east: 1702), ts: d.now + 50, seq: 1000)
        #expect(d.trip.judge(fix) == .applied)
        #expect(d.trip.apply(fix, now: d.now).segment?.jump == false)
        let before = d.frames.count
        d.advance(by: 100)
        #expect(d.frames.count == before + 1)
        #expect(d.frames.last?.jump == true)
    }

    @Test func spedUpReplayIsNotSlowed() {
        // Fixes 1 s apart in device time arrive 250 ms apart: r = 4.
        var trip = Fixture.trip(route: Fixture.eastRoute(lengthM: 3000))
        var segments: [TripSegment] = []
        for i in 0..<12 {
            let fix = Fixture.fix(Fixture.at(east: Double(i) * 20), ts: Fixture.t0 + Int64(i) * 1000, seq: Int64(i), durationMs: 250)
            #expect(trip.judge(fix) == .applied)
            let hub = Fixture.t0 + Int64(i) * 250
            if let s = trip.apply(fix, now: hub).segment { segments.append(s) }
        }
        #expect(abs(trip.clockRatio - 4) < 1e-9)
        // 20 m in 250 ms is 80 m/s of the hub's clock: within 1.5 × 20 × 4.
        #expect(segments.dropFirst().allSatisfy { $0.durationMs == 250 && !$0.jump })
    }

    @Test func backlogSentAtOnceIsNotSlowed() {
        var trip = Fixture.trip(route: Fixture.eastRoute(lengthM: 3000))
        var last: TripSegment?
        for i in 0..<5 {
            let fix = Fixture.fix(Fixture.at(east: Double(i) * 50), ts: Fixture.t0 + Int64(i) * 1000, seq: Int64(i))
            #expect(trip.judge(fix) == .applied)
            last = trip.apply(fix, now: Fixture.t0 + 60_000).segment ?? last
        }
        #expect(trip.clockRatio == .infinity)
        #expect(last?.durationMs == 1000)
    }

    @Test func clockRatioComesFromTheReceivedTimesNotTheApplyTime() {
        // The hub applies a batch when it commits, but r is over when the fixes arrived.
        var trip = Fixture.trip(route: Fixture.eastRoute(lengthM: 3000))
        for i in 0..<4 {
            let fix = Fixture.fix(Fixture.at(east: Double(i) * 10), ts: Fixture.t0 + Int64(i) * 1000, seq: Int64(i))
            #expect(trip.judge(fix) == .applied)
            _ = trip.apply(fix, now: Fixture.t0 + 5000, receivedAt: Fixture.t0 + Int64(i) * 1000)
        }
        #expect(abs(trip.clockRatio - 1) < 1e-9)
    }

    @Test func reportedSpeedIsTheNewestSampleOfTheEstimate() {
        var trip = Fixture.trip(route: Fixture.eastRoute(lengthM: 3000))
        var fix = FixInput(lat: Fixture.at(east: 0).lat, lon: Fixture.at(east: 0).lon, ts: Fixture.t0, seq: 1, speedMps: 12)
        _ = trip.judge(fix)
        _ = trip.apply(fix, now: Fixture.t0)
        #expect(trip.speedMps == 12)  // known from the first fix
        let p = Fixture.at(east: 100)  // 100 m in 10 s would be 10 m/s
        fix = FixInput(lat: p.lat, lon: p.lon, ts: Fixture.t0 + 10_000, seq: 2, speedMps: 20)
        _ = trip.judge(fix)
        _ = trip.apply(fix, now: Fixture.t0 + 10_000)
        #expect(abs(trip.speedMps! - (0.3 * 20 + 0.7 * 12)) < 1e-9)
    }
}

@Suite struct ArrivalAtDestinationRuleTests {  // 6.7
    /// Every arrived trip's last frame: at the destination, progress 1, remaining 0, eta 0.
    static func expectLastFrameAtDestination(_ d: Driver, _ destination: GeoPoint, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let last = d.frames.last else { Issue.record("no frame", sourceLocation: sourceLocation); return }
        #expect(d.trip.status == .arrived, sourceLocation: sourceLocation)
        #expect(last.status == .arrived, sourceLocation: sourceLocation)
        #expect(Geodesy.distanceM(last.position, destination) < 1e-6, sourceLocation: sourceLocation)
        #expect(last.progress == 1 && last.remainingM == 0 && last.etaS == 0, "\(last)", sourceLocation: sourceLocation)
        let info = d.trip.progressInfo(at: d.now)
        #expect(info.progress == 1 && info.remainingM == 0 && info.etaS == 0, sourceLocation: sourceLocation)
    }

    @Test func markerGoesOnToTheDestinationAfterArriving() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 800))
        d.send(Fixture.at(east: 970), at: 5000)  // stops 30 m short: within arrival_buffer_m
        d.advance(by: 30_000)
        #expect(d.eventNames == ["arrived"])
        Self.expectLastFrameAtDestination(d, Fixture.at(east: 1000))
        // Frames of the way on are no faster than the limit, and no frame follows the last.
        #expect(fastestSlide(d.frames) <= d.trip.catchUpLimitMps() * 1.001)
        var trip = d.trip
        #expect(trip.tick(now: d.now + 100).frame == nil)
    }

    @Test func markerAlreadyAtTheDestinationStillSendsTheArrivedFrame() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 800))
        d.send(Fixture.at(east: 1000), at: 5000)
        d.advance(by: 30_000)
        Self.expectLastFrameAtDestination(d, Fixture.at(east: 1000))
    }

    @Test func arrivalWhileHeadingOffTheRouteEndsAtTheDestinationNotPastIt() {
        // The fixes leave the route just after its end (PROTOCOL 6.7, item 5 of issue 16).
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 900))
        d.send(Fixture.at(east: 1300), at: 10_000)  // 300 m past the end: off route
        #expect(d.eventNames == ["off_route"])
        d.advance(by: 60_000)
        #expect(d.eventNames == ["off_route", "arrived"])
        Self.expectLastFrameAtDestination(d, Fixture.at(east: 1000))
    }

    @Test func arrivalRightAfterProceedGoesOnToTheDestination() throws {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 960)]))
        d.send(Fixture.at(east: 960))
        d.advance(by: 100)
        #expect(d.trip.status == .holding)
        #expect(try d.trip.proceed(now: d.now).map(\.kind.name) == ["waypoint_resumed", "arrived"])
        #expect(d.trip.wantsTick)
        d.advance(by: 30_000)
        Self.expectLastFrameAtDestination(d, Fixture.at(east: 1000))
    }

    @Test func tripWithoutRouteGoesOnToItsDestinationStraight() {
        let dest = Fixture.at(east: 500, north: 500)
        var d = Driver(Fixture.trip(route: nil, destination: dest))
        d.send(Fixture.at(east: 0))
        d.send(Fixture.at(east: 480, north: 480), at: 60_000)
        d.advance(by: 60_000)
        #expect(d.trip.status == .arrived)
        let last = d.frames.last!
        #expect(Geodesy.distanceM(last.position, dest) < 1e-6 && last.etaS == 0 && last.progress == nil)
    }

    @Test func etaIsNullOnceEndedWithoutArriving() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 200), at: 10_000)
        #expect(d.trip.progressInfo(at: d.now).etaS != nil)
        _ = d.trip.end(now: d.now)
        #expect(d.trip.progressInfo(at: d.now).etaS == nil)
    }

    @Test func segmentAfterArrivalEndsAtTheDestination() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 800))
        d.send(Fixture.at(east: 970), at: 5000)
        d.advance(by: 5000)
        #expect(d.trip.status == .arrived)
        let s = d.trip.currentSegment(at: d.now)!
        #expect(Geodesy.distanceM(s.path.last!, Fixture.at(east: 1000)) < 1e-6)
        #expect(s.progressTo == 1 && s.remainingM == 0 && s.etaS == 0 && s.status == .arrived)
    }
}

@Suite struct NonWaitingWaypointRuleTests {  // 6.6
    @Test func waypointsThatDoNotWaitClampNothing() {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 300)], config: TripConfig(waitAtWaypoints: false)))
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 800), at: 30_000)
        #expect(abs(d.segments.last!.doneM! - 800) < 0.5)
    }

    @Test func burstPastWaypointsCarriesOnToArrival() {
        let config = TripConfig(waitAtWaypoints: false)
        var trip = Fixture.trip(waypoints: [Fixture.at(east: 300), Fixture.at(east: 310), Fixture.at(east: 600)], config: config)
        var events: [TripEvent] = []
        var frames: [TripFrame] = []
        // A backlog: ten fixes, one every 10 s of device time, all applied in one millisecond.
        for i in 0...10 {
            let fix = Fixture.fix(Fixture.at(east: Double(i) * 100), ts: Fixture.t0 + Int64(i) * 10_000, seq: Int64(i))
            #expect(trip.judge(fix) == .applied)
            events += trip.apply(fix, now: Fixture.t0).events
        }
        var now = Fixture.t0
        while now < Fixture.t0 + 120_000 {
            now += 100
            let r = trip.tick(now: now)
            if let f = r.frame { frames.append(f) }
            events += r.events
        }
        #expect(events.map(\.kind) == [
            .waypointReached(index: 0, remainingWaypoints: 2), .waypointResumed(index: 0, remainingWaypoints: 2),
            .waypointReached(index: 1, remainingWaypoints: 1), .waypointResumed(index: 1, remainingWaypoints: 1),
            .waypointReached(index: 2, remainingWaypoints: 0), .waypointResumed(index: 2, remainingWaypoints: 0),
            .arrived,
        ])
        #expect(trip.status == .arrived && trip.leg == 3)
        #expect(Geodesy.distanceM(frames.last!.position, Fixture.at(east: 1000)) < 1e-6 && frames.last!.progress == 1)
    }
}

@Suite struct BackOnRouteRuleTests {  // 6.8
    @Test func laterFixesOnTheWayBackGoViaTheSnappedPointThenAlongTheRoute() {
        var d = Driver(Fixture.trip(route: Fixture.lShape()))
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 200, north: -200), at: 10_000)
        d.advance(by: 9000)
        d.send(Fixture.at(east: 300), at: 20_000)  // back on route at 300
        #expect(d.eventNames == ["off_route", "back_on_route"])
        d.advance(by: 4900)
        // Before the marker is back on the route, the next fix is round the corner.
        #expect(d.trip.marker(at: d.now)!.alongM == nil)
        d.send(Fixture.at(east: 500, north: 100), at: 25_000)
        guard case .viaRoute(_, let entry, let to) = d.trip.animation!.path else { Issue.record("not via the route: \(d.trip.animation!.path)"); return }
        #expect(abs(entry - 300) < 0.5 && abs(to - 600) < 0.5)
        var joined = false
        let route = Fixture.lShape()
        for _ in 0..<200 {
            d.advance(by: 100)
            let m = d.trip.marker(at: d.now)!
            if m.alongM != nil { joined = true }
            // Once on the route, it stays on it: it does not cut the corner at (500, 0).
            if joined { #expect(route.nearest(to: m.position).offsetM < 0.01) }
        }
        #expect(joined)
        #expect(abs(alongOf(d.trip, at: d.now)! - 600) < 0.5)
        #expect(abs(d.trip.progressInfo(at: d.now).doneM! - 600) < 0.5)
    }
}
