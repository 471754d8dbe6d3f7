import Foundation
import Testing
@testable import TrackHubCore

/// The privacy rules of a link for one stop (PROTOCOL 17), on an east-running 3 km route.
@Suite struct StopVisibilityTests {
    /// A straight route 3 km east of the fixture's origin, a vertex every 100 m.
    let route = Fixture.eastRoute(lengthM: 3000, stepM: 100)

    /// The smallest straight-line distance from any point of `path` to `stop`.
    func nearest(_ path: [GeoPoint], _ stop: GeoPoint) -> Double {
        path.map { Geodesy.distanceM($0, stop) }.min() ?? .infinity
    }

    @Test func hiddenWithoutMarkerOrWithTooManyStopsBefore() {
        let far = [Fixture.at(east: 2000, north: 1000)]
        #expect(!StopVisibility.isShown(marker: nil, stopsBefore: 0, visibleWithinStops: 0, otherStops: []))
        #expect(!StopVisibility.isShown(marker: Fixture.origin, stopsBefore: 2, visibleWithinStops: 1, otherStops: far))
        #expect(StopVisibility.isShown(marker: Fixture.origin, stopsBefore: 1, visibleWithinStops: 1, otherStops: far))
        #expect(StopVisibility.isShown(marker: Fixture.origin, stopsBefore: 0, visibleWithinStops: 0, otherStops: []))
    }

    @Test func hiddenWithin200MetresOfAnotherStopVisitedOrNot() {
        let other = Fixture.at(east: 1000)
        #expect(!StopVisibility.isShown(marker: Fixture.at(east: 850), stopsBefore: 0, visibleWithinStops: 0, otherStops: [other]))
        #expect(!StopVisibility.isShown(marker: Fixture.at(east: 1000, north: 199), stopsBefore: 0, visibleWithinStops: 0, otherStops: [other]))
        #expect(StopVisibility.isShown(marker: Fixture.at(east: 1000, north: 202), stopsBefore: 0, visibleWithinStops: 0, otherStops: [other]))
        #expect(StopVisibility.isShown(marker: Fixture.at(east: 1250), stopsBefore: 0, visibleWithinStops: 0, otherStops: [other]))
    }

    @Test func aSegmentQualifiesOnlyWhenEveryPointIsClear() {
        let other = Fixture.at(east: 1000)
        let clear = [Fixture.at(east: 400), Fixture.at(east: 500), Fixture.at(east: 600)]
        let touching = clear + [Fixture.at(east: 810)]
        #expect(StopVisibility.segmentQualifies(path: clear, otherStops: [other]))
        #expect(!StopVisibility.segmentQualifies(path: touching, otherStops: [other]))
        #expect(StopVisibility.segmentQualifies(path: touching, otherStops: []))
    }

    @Test func theRouteStretchWithNoOtherStopIsMarkerToStop() throws {
        let stretch = try #require(StopVisibility.routeStretch(route: route, markerAlongM: 500, stopAlongM: 2500, otherStops: []))
        #expect(Geodesy.distanceM(stretch.first!, route.point(atDistance: 500)) < 0.01)
        #expect(Geodesy.distanceM(stretch.last!, route.point(atDistance: 2500)) < 0.01)
    }

    @Test func theRouteStretchStartsPastTheLastOtherStopBeforeTheStop() throws {
        // Another stop beside the route at 1 500 m (50 m north): the stretch must start > 200 m past it.
        let other = Fixture.at(east: 1500, north: 50)
        let stretch = try #require(StopVisibility.routeStretch(route: route, markerAlongM: 200, stopAlongM: 2800, otherStops: [other]))
        #expect(nearest(stretch, other) > StopVisibility.privacyRadiusM)
        // Longest: it starts just outside the circle (the cut keeps the margin twice at most).
        let startGap = Geodesy.distanceM(stretch.first!, other)
        #expect(startGap < StopVisibility.privacyRadiusM + 2 * StopVisibility.routeCutMarginM + 1)
        #expect(Geodesy.distanceM(stretch.last!, route.point(atDistance: 2800)) < 0.01)
    }

    @Test func theRouteStretchIsCheckedBetweenVerticesToo() throws {
        // Two vertices 1 km apart whose straight line passes 100 m from another stop.
        let sparse = try Route(points: [Fixture.origin, Fixture.at(east: 1000), Fixture.at(east: 2000)])
        let other = Fixture.at(east: 1400, north: 100)
        let stretch = try #require(StopVisibility.routeStretch(route: sparse, markerAlongM: 0, stopAlongM: 2000, otherStops: [other]))
        #expect(Geodesy.distanceM(stretch.first!, Fixture.origin) > 1400)
        #expect(nearest(stretch, other) > StopVisibility.privacyRadiusM)
    }

    @Test func anOtherStopBehindTheMarkerDoesNotShortenIt() throws {
        let other = Fixture.at(east: 300)
        let stretch = try #require(StopVisibility.routeStretch(route: route, markerAlongM: 800, stopAlongM: 2000, otherStops: [other]))
        #expect(Geodesy.distanceM(stretch.first!, route.point(atDistance: 800)) < 0.01)
    }

    @Test func anOtherStopNearTheOwnStopLeavesOnlyTheStopsPoint() throws {
        let other = Fixture.at(east: 2450)
        let stretch = try #require(StopVisibility.routeStretch(route: route, markerAlongM: 500, stopAlongM: 2500, otherStops: [other]))
        #expect(stretch.count == 1)
        #expect(Geodesy.distanceM(stretch[0], route.point(atDistance: 2500)) < 0.01)
    }

    @Test func noStretchOnceTheMarkerIsPastTheStop() {
        #expect(StopVisibility.routeStretch(route: route, markerAlongM: 2600, stopAlongM: 2500, otherStops: []) == nil)
    }

    @Test func randomStretchesNeverComeNearAnotherStop() throws {
        var rng = SplitMix64(seed: 37)
        for _ in 0..<200 {
            let r = randomRoute(&rng, n: 40)
            let others = (0..<3).map { _ in r.point(atDistance: rng.uniform(0, r.lengthM)) }
            let stopAlong = rng.uniform(0, r.lengthM), markerAlong = rng.uniform(0, stopAlong)
            let stretch = try #require(StopVisibility.routeStretch(route: r, markerAlongM: markerAlong, stopAlongM: stopAlong, otherStops: others))
            if stretch.count > 1 {
                // Densify: every metre of the stretch stays clear, not only its vertices.
                for i in 1..<stretch.count {
                    let d = Geodesy.distanceM(stretch[i - 1], stretch[i])
                    let steps = max(1, Int(d))
                    for k in 0...steps {
                        let f = Double(k) / Double(steps)
                        let p = GeoPoint(lat: stretch[i - 1].lat + f * (stretch[i].lat - stretch[i - 1].lat),
                                         lon: stretch[i - 1].lon + f * (stretch[i].lon - stretch[i - 1].lon))
                        #expect(StopVisibility.isClear(p, of: others))
                    }
                }
            }
        }
    }
}

/// PROTOCOL 17's status while hidden and the events a stop link gets.
@Suite struct StopLinkStandingTests {
    @Test func hiddenStatusReadsMovingUnlessPendingArrivedOrEnded() {
        for status in TripStatus.allCases {
            #expect(StopVisibility.status(status, courierShown: true) == status)
            let hidden = StopVisibility.status(status, courierShown: false)
            #expect(hidden == ([.pending, .arrived, .ended].contains(status) ? status : .moving), "\(status)")
        }
    }

    @Test func onlyItsOwnStopsEventsEndedAndTheSignalReachIt() {
        let all: [TripEventKind] = [
            .tripCreated, .waypointReached(index: 1, remainingWaypoints: 1), .waypointReached(index: 2, remainingWaypoints: 0),
            .waypointResumed(index: 2, remainingWaypoints: 0), .arrived, .offRoute(distanceM: 80), .backOnRoute,
            .rerouted(reason: nil), .ended, .signalLost(lastFixT: 1, battery: 40), .signalBack(gapMs: 5), .batteryLow(battery: 9),
        ]
        let forStop2 = all.filter { StopVisibility.letsThrough($0, ownWaypointIndex: 2, followsDestination: false) }
        #expect(forStop2 == [.waypointReached(index: 2, remainingWaypoints: 0), .ended, .signalLost(lastFixT: 1, battery: 40), .signalBack(gapMs: 5)])
        let forDestination = all.filter { StopVisibility.letsThrough($0, ownWaypointIndex: nil, followsDestination: true) }
        #expect(forDestination == [.arrived, .ended, .signalLost(lastFixT: 1, battery: 40), .signalBack(gapMs: 5)])
    }
}
