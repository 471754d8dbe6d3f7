import Foundation
import Testing
@testable import TrackHubCore

/// PROTOCOL 16 in the core: when a trip wants a new route, and the router's ETA.
@Suite struct AutoRerouteTests {
    static let auto = TripConfig(waitAtWaypoints: false, autoReroute: true)

    @Test func searchIsDueAtTheSecondOffRouteFixFromThatFixThroughUnvisitedWaypoints() {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 200), Fixture.at(east: 700)], config: Self.auto))
        d.send(Fixture.at(east: 0))
        d.advance(by: 5_000)
        d.send(Fixture.at(east: 250))
        d.advance(by: 5_000)
        #expect(d.trip.leg == 1)
        #expect(d.trip.rerouteSearchPoints(now: d.now, lastFailureAt: nil) == nil, "on the route")
        d.send(Fixture.at(east: 300, north: 300))
        #expect(d.trip.status == .offRoute)
        #expect(d.trip.rerouteSearchPoints(now: d.now, lastFailureAt: nil) == nil, "one off-route fix is not enough")
        let rider = Fixture.at(east: 320, north: 320)
        d.advance(by: 5_000)
        d.send(rider)
        let points = d.trip.rerouteSearchPoints(now: d.now, lastFailureAt: nil)
        #expect(points == [rider, Fixture.at(east: 700), Fixture.eastRoute().end])
    }

    @Test func aFailedSearchWaitsTenSecondsAndAutoRerouteOffNeverSearches() {
        var d = Driver(Fixture.trip(config: Self.auto))
        d.send(Fixture.at(east: 0))
        d.advance(by: 5_000)
        d.send(Fixture.at(east: 100, north: 300))
        d.advance(by: 5_000)
        d.send(Fixture.at(east: 120, north: 320))
        #expect(d.trip.rerouteSearchPoints(now: d.now, lastFailureAt: d.now - 9_999) == nil)
        #expect(d.trip.rerouteSearchPoints(now: d.now, lastFailureAt: d.now - 10_000) != nil)
        var off = Driver(Fixture.trip(config: TripConfig(autoReroute: false)))
        off.send(Fixture.at(east: 0))
        off.advance(by: 5_000)
        off.send(Fixture.at(east: 100, north: 300))
        off.advance(by: 5_000)
        off.send(Fixture.at(east: 120, north: 320))
        #expect(off.trip.status == .offRoute)
        #expect(off.trip.rerouteSearchPoints(now: off.now, lastFailureAt: nil) == nil)
    }

    @Test func theHubsRerouteIsQuietSaysWhyAndKeepsWaypoints() throws {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 700)], config: Self.auto))
        d.send(Fixture.at(east: 0))
        d.advance(by: 5_000)
        d.send(Fixture.at(east: 100, north: 300))
        let rider = Fixture.at(east: 120, north: 320)
        d.advance(by: 5_000)
        d.send(rider)
        let found = try Route(points: [rider, Fixture.at(east: 700, north: 320), Fixture.at(east: 700), Fixture.at(east: 1000)])
        let events = try d.trip.reroute(
            route: found, waypoints: nil, destination: d.trip.destination, now: d.now, reason: .offRoute, source: .router,
            routerDurationS: 120)
        #expect(events.map(\.kind) == [.rerouted(reason: .offRoute)])
        #expect(d.trip.status == .moving, "the rider is on the new route: no back_on_route")
        #expect(d.trip.offRouteFixCount == 0)
        #expect(d.trip.waypoints.map { [$0.index: $0.visited] } == [[0: false]])
        #expect(d.trip.routeSource == .router)
        #expect(d.trip.rerouteSearchPoints(now: d.now, lastFailureAt: nil) == nil)
    }

    @Test func untilTheSpeedIsKnownTheRoutersTimeTimesTheShareLeftIsTheETA() throws {
        let route = Fixture.eastRoute()
        var trip = try Trip(
            id: "r", route: route, waypoints: [], destination: nil, config: Self.auto, now: Fixture.t0,
            routeSource: .router, routerDurationS: 200)
        _ = trip.created(now: Fixture.t0)
        var d = Driver(trip)
        d.send(Fixture.at(east: 250))
        #expect(d.trip.speedMps == nil)
        #expect(d.trip.progressInfo(at: d.now).etaS == 150, "200 s × 750 / 1000 m")
        d.advance(by: 10_000)
        d.send(Fixture.at(east: 350))
        #expect(d.trip.speedMps != nil)
        let eta = try #require(d.trip.progressInfo(at: d.now).etaS)
        #expect(eta < 100, "the rider's own speed (10 m/s) takes over")
        var client = Driver(Fixture.trip())
        client.send(Fixture.at(east: 250))
        #expect(client.trip.progressInfo(at: client.now).etaS == nil, "a client's route: no ETA before the speed")
    }

    @Test func storedConfigsWithoutTheNewKeysStillDecode() throws {
        let old = #"{"arrivalBufferM":50,"rerouteDistanceM":100,"waitAtWaypoints":true,"maxSpeedMps":70}"#
        let config = try JSONDecoder().decode(TripConfig.self, from: Data(old.utf8))
        #expect(config.mode == .car)
        #expect(config.reroutesAutomatically == false)
    }
}
