import Testing
import TrackHubCore
@testable import TrackHubServer

/// PROTOCOL 17: what one subscription of a stop link gets, in order.
@Suite struct StopLinkFollowerTests {
    static let home = GeoPoint(lat: 38.72, lon: -9.14)
    /// Another customer's stop about 1.1 km north of home.
    static let other = GeoPoint(lat: 38.73, lon: -9.14)
    /// A point about 110 m from `other`: inside its circle.
    static let nearOther = GeoPoint(lat: 38.729, lon: -9.14)
    /// A point about 550 m from both.
    static let between = GeoPoint(lat: 38.725, lon: -9.14)

    func sight(shown: Bool, stopsBefore: Int = 0) -> StopLinkSight {
        StopLinkSight(stopsBefore: stopsBefore, reached: false, shown: shown,
                      marker: shown ? MarkerSample(position: Self.between, bearingDeg: 180, alongM: 500) : nil,
                      stopPoint: Self.home, route: nil, status: .moving, otherStops: [Self.other])
    }

    @Test func aSnapshotIsAlwaysFollowedByAStopMessage() {
        var f = StopLinkFollower(stop: .waypoint(id: "b"), visibleWithinStops: 0, mode: .frames)
        do { let r = f.afterSnapshot(sight(shown: false, stopsBefore: 2), etaS: 1500); #expect(r
            == [.stop(.init(stopsBefore: 2, etaS: 1500, visible: false))]) }
        do { let r = f.afterSnapshot(sight(shown: false, stopsBefore: 2), etaS: 1500); #expect(r.count == 1) }
    }

    @Test func noFrameWhileHiddenAndVisibleTrueComesBeforeTheFirstFrame() {
        var f = StopLinkFollower(stop: .waypoint(id: "b"), visibleWithinStops: 0, mode: .frames)
        _ = f.afterSnapshot(sight(shown: false, stopsBefore: 1), etaS: 600)
        do { let r = f.onTick(sight(shown: false, stopsBefore: 1), etaS: 600, hasFrame: true, remainingPath: nil, nowMs: 100); #expect(r.isEmpty) }
        do { let r = f.onTick(sight(shown: true), etaS: 300, hasFrame: true, remainingPath: nil, nowMs: 200); #expect(r
            == [.stop(.init(stopsBefore: 0, etaS: 300, visible: true)), .frame]) }
        do { let r = f.onTick(sight(shown: true), etaS: 299, hasFrame: true, remainingPath: nil, nowMs: 300); #expect(r == [.frame]) }
        do { let r = f.onTick(sight(shown: false), etaS: 290, hasFrame: true, remainingPath: nil, nowMs: 400); #expect(r
            == [.stop(.init(stopsBefore: 0, etaS: 290, visible: false))]) }
    }

    @Test func aSegmentsFollowerShownMidAnimationGetsTheRestIfItQualifies() {
        var f = StopLinkFollower(stop: .waypoint(id: "b"), visibleWithinStops: 0, mode: .segments)
        _ = f.afterSnapshot(sight(shown: false), etaS: 600)
        do { let r = f.onTick(sight(shown: true), etaS: 600, hasFrame: true, remainingPath: [Self.between, Self.home], nowMs: 100); #expect(r
            == [.stop(.init(stopsBefore: 0, etaS: 600, visible: true)), .remainingSegment]) }
        // Only on becoming shown: later ticks send nothing more.
        do { let r = f.onTick(sight(shown: true), etaS: 600, hasFrame: true, remainingPath: [Self.between, Self.home], nowMs: 200); #expect(r.isEmpty) }
        var g = StopLinkFollower(stop: .waypoint(id: "b"), visibleWithinStops: 0, mode: .segments)
        _ = g.afterSnapshot(sight(shown: false), etaS: 600)
        do { let r = g.onTick(sight(shown: true), etaS: 600, hasFrame: true, remainingPath: [Self.between, Self.nearOther], nowMs: 100); #expect(r
            == [.stop(.init(stopsBefore: 0, etaS: 600, visible: true))]) }
    }

    @Test func aFixSegmentGoesOnlyWhenShownAndEveryPointIsClear() {
        var f = StopLinkFollower(stop: .waypoint(id: "b"), visibleWithinStops: 0, mode: .segments)
        _ = f.afterSnapshot(sight(shown: true), etaS: 600)
        do { let r = f.onSegment(sight(shown: true), etaS: 600, path: [Self.between, Self.home], nowMs: 100); #expect(r == [.segment]) }
        do { let r = f.onSegment(sight(shown: true), etaS: 600, path: [Self.nearOther, Self.between], nowMs: 200); #expect(r.isEmpty) }
        do { let r = f.onSegment(sight(shown: false), etaS: 600, path: [Self.between], nowMs: 300); #expect(r
            == [.stop(.init(stopsBefore: 0, etaS: 600, visible: false))]) }
        var frames = StopLinkFollower(stop: .waypoint(id: "b"), visibleWithinStops: 0, mode: .frames)
        _ = frames.afterSnapshot(sight(shown: true), etaS: 600)
        do { let r = frames.onSegment(sight(shown: true), etaS: 600, path: [Self.between, Self.home], nowMs: 100); #expect(r.isEmpty) }
    }

    /// `waypoint_reached` fires within 50 m: in frames mode the frames up to the stop still go
    /// out (when shown), and the end once the marker is there; a frame past it never.
    @Test func inFramesModeTheEndWaitsForTheLastFrameAtTheStop() {
        var f = StopLinkFollower(stop: .waypoint(id: "b"), visibleWithinStops: 0, mode: .frames)
        _ = f.afterSnapshot(sight(shown: true), etaS: 10)
        do { let r = f.onReached(markerMoving: true); #expect(r.isEmpty) }
        do { let r = f.onTick(sight(shown: true), etaS: 0, hasFrame: true, remainingPath: nil, nowMs: 100); #expect(r.isEmpty) }
        do { let r = f.onTickAfterReached(shown: true, hasFrame: true, approach: .short); #expect(r == [.frame]) }
        do { let r = f.onTickAfterReached(shown: true, hasFrame: true, approach: .there); #expect(r == [.frame, .endArrived]) }
        do { let r = f.onTickAfterReached(shown: true, hasFrame: true, approach: .there); #expect(r.isEmpty) }
        var jumped = StopLinkFollower(stop: .waypoint(id: "b"), visibleWithinStops: 0, mode: .frames)
        _ = jumped.afterSnapshot(sight(shown: true), etaS: 10)
        _ = jumped.onReached(markerMoving: true)
        do { let r = jumped.onTickAfterReached(shown: true, hasFrame: true, approach: .past); #expect(r == [.endArrived]) }
        var segments = StopLinkFollower(stop: .waypoint(id: "b"), visibleWithinStops: 0, mode: .segments)
        _ = segments.afterSnapshot(sight(shown: true), etaS: 10)
        do { let r = segments.onReached(markerMoving: true); #expect(r == [.endArrived]) }
    }

    @Test func itEndsAtItsStopOnceThenNothing() {
        var f = StopLinkFollower(stop: .waypoint(id: "b"), visibleWithinStops: 0, mode: .frames)
        _ = f.afterSnapshot(sight(shown: true), etaS: 10)
        do { let r = f.onReached(); #expect(r == [.endArrived]) }
        do { let r = f.onReached(); #expect(r.isEmpty) }
        do { let r = f.onTick(sight(shown: true), etaS: 0, hasFrame: true, remainingPath: nil, nowMs: 100); #expect(r.isEmpty) }
        do { let r = f.onSegment(sight(shown: true), etaS: 0, path: [Self.home], nowMs: 200); #expect(r.isEmpty) }
    }
}
