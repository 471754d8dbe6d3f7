import Foundation
import Testing
@testable import TrackHubCore

/// PROTOCOL 17: a stop link's sight of a real trip driven along a 3 km street with stops at
/// 1 000 m and 2 000 m and the destination at 3 000 m.
@Suite struct StopLinkSightTests {
    let stops = [Fixture.at(east: 1000), Fixture.at(east: 2000)]

    func trip() -> Trip { Fixture.trip(route: Fixture.eastRoute(lengthM: 3000, stepM: 100), waypoints: stops) }

    @Test func beforeTheFirstFixNothingIsShownAndTheStopsAreCounted() throws {
        let t = trip()
        let second = try #require(t.stopLinkSight(waypointIndex: 1, visibleWithinStops: 5, at: Fixture.t0))
        #expect(!second.shown && second.marker == nil && second.route == nil)
        #expect(second.stopsBefore == 1 && !second.reached && second.stopPoint == stops[1])
        #expect(second.otherStops == [stops[0]])
        let destination = try #require(t.stopLinkSight(waypointIndex: nil, visibleWithinStops: 0, at: Fixture.t0))
        #expect(destination.stopsBefore == 2 && destination.otherStops == stops)
        #expect(t.stopLinkSight(waypointIndex: 7, visibleWithinStops: 0, at: Fixture.t0) == nil)
    }

    @Test func theCourierIsShownOnlyNearEnoughAndClearOfTheOtherStops() throws {
        var d = Driver(trip())
        d.send(Fixture.at(east: 500), at: 0)
        d.advance(to: Fixture.t0 + 2000)
        let t = d.trip
        // 500 m along: clear of stop 0 (1 000 m). Stop 1 has one stop before it.
        let near = try #require(t.stopLinkSight(waypointIndex: 1, visibleWithinStops: 1, at: d.now))
        #expect(near.shown && near.marker != nil)
        let route = try #require(near.route)
        // The stretch starts past the other stop's circle, not at the marker.
        #expect(route.allSatisfy { Geodesy.distanceM($0, stops[0]) > StopVisibility.privacyRadiusM })
        #expect(Geodesy.distanceM(route.first!, Fixture.origin) > 1200)
        #expect(Geodesy.distanceM(route.last!, stops[1]) < 1)
        let far = try #require(t.stopLinkSight(waypointIndex: 1, visibleWithinStops: 0, at: d.now))
        #expect(!far.shown && far.marker == nil && far.route == nil)
        // The first stop's own link sees the marker and the whole way to its door.
        let first = try #require(t.stopLinkSight(waypointIndex: 0, visibleWithinStops: 0, at: d.now))
        #expect(first.shown && first.route.map { Geodesy.distanceM($0.first!, Fixture.at(east: 500)) < 1 } == true)
    }

    @Test func nearAnotherStopTheCourierIsHiddenAndTheStatusReadsMoving() throws {
        var d = Driver(trip())
        d.send(Fixture.at(east: 500), at: 0)
        d.send(Fixture.at(east: 900), at: 40_000)
        d.advance(to: Fixture.t0 + 45_000)
        let sight = try #require(d.trip.stopLinkSight(waypointIndex: 1, visibleWithinStops: 1, at: d.now))
        #expect(!sight.shown && sight.marker == nil && sight.route == nil)
        #expect(sight.status == .moving || sight.status == .pending)
    }
}

/// PROTOCOL 17: a stop link names its stop by waypoint id (or `"destination"`).
@Suite struct StopLinkSightByIDTests {
    @Test func aStopIsFoundByItsIDOrAsTheDestination() throws {
        let stops = [Fixture.at(east: 1000), Fixture.at(east: 2000)]
        var t = try Trip(id: "t1", route: Fixture.eastRoute(lengthM: 3000, stepM: 100), waypoints: stops, destination: nil,
                         config: TripConfig(), now: Fixture.t0, stops: [StopDetails(id: "a"), StopDetails(id: "b")])
        _ = t.created(now: Fixture.t0)
        #expect(t.stopLinkSight(.waypoint(id: "b"), visibleWithinStops: 0, at: Fixture.t0)?.stopPoint == stops[1])
        #expect(t.stopLinkSight(.waypoint(id: "b"), visibleWithinStops: 0, at: Fixture.t0)?.stopsBefore == 1)
        #expect(t.stopLinkSight(.destination, visibleWithinStops: 0, at: Fixture.t0)?.stopsBefore == 2)
        #expect(t.stopLinkSight(.waypoint(id: "c"), visibleWithinStops: 0, at: Fixture.t0) == nil)
    }
}
