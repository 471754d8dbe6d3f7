import Foundation
import Testing
@testable import TrackHubCore

@Suite struct RerouteTests {  // PROTOCOL 5, PUT .../route
    /// A route 20 m north of the east route, 1200 m long.
    static let shifted = try! Route(points: (0...12).map { Fixture.at(east: Double($0) * 100, north: 20) })

    @Test func rerouteKeepsUnvisitedWaypointsAndSnapsMarker() throws {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 600)]))
        d.send(Fixture.at(east: 300))
        let ev = try d.trip.reroute(route: Self.shifted, waypoints: nil, destination: nil, now: d.now)
        #expect(ev.map(\.kind) == [.rerouted(reason: .client)])
        #expect(d.trip.waypoints.map(\.index) == [0])
        #expect(abs(d.trip.waypoints[0].alongM! - 600) < 0.5)
        #expect(d.trip.destination == Self.shifted.end)
        #expect(abs(d.trip.destinationAlongM! - Self.shifted.lengthM) < 1e-9)
        let m = d.trip.marker(at: d.now)!
        #expect(abs(m.alongM! - 300) < 0.5)
        #expect(Self.shifted.nearest(to: m.position).offsetM < 0.01)
        #expect(d.trip.progressInfo(at: d.now).progress! < 0.3)  // progress may go down: longer route
    }

    @Test func rerouteWithWaypointsReplacesUnvisitedNumberedAfterHighest() throws {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 200), Fixture.at(east: 600)], config: TripConfig(waitAtWaypoints: false)))
        d.send(Fixture.at(east: 200))
        d.advance(by: 100)
        #expect(d.trip.leg == 1)
        _ = try d.trip.reroute(route: Self.shifted, waypoints: [Fixture.at(east: 900, north: 20)], destination: Fixture.at(east: 1100, north: 20), now: d.now)
        #expect(d.trip.waypoints.map(\.index) == [0, 2])
        #expect(d.trip.waypoints.map(\.visited) == [true, false])
        #expect(abs(d.trip.destinationAlongM! - 1100) < 0.5)
    }

    @Test func rerouteKeepsWaypointHoldingTripWaitsAt() throws {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 300), Fixture.at(east: 600)]))
        d.send(Fixture.at(east: 300))
        d.advance(by: 100)
        #expect(d.trip.status == .holding)
        _ = try d.trip.reroute(route: Self.shifted, waypoints: [Fixture.at(east: 800, north: 20)], destination: nil, now: d.now)
        #expect(d.trip.waypoints.map(\.index) == [0, 2])
        #expect(d.trip.status == .holding)
        #expect(d.trip.holdingWaypoint?.index == 0)
        #expect(try d.trip.proceed(now: d.now).first?.kind == .waypointResumed(index: 0, remainingWaypoints: 1))
    }

    @Test func rerouteRejudgesStatusOnLastFixWithoutEvents() throws {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 300))
        d.send(Fixture.at(east: 400, north: 300), at: 10_000)
        #expect(d.trip.status == .offRoute)
        d.advance(by: 20_000)
        let via = try Route(points: [Fixture.at(east: 0), Fixture.at(east: 400, north: 300), Fixture.at(east: 800, north: 300)])
        let ev = try d.trip.reroute(route: via, waypoints: nil, destination: nil, now: d.now)
        #expect(ev.map(\.kind.name) == ["rerouted"])
        #expect(d.trip.status == .moving)
        #expect(abs(d.trip.progressInfo(at: d.now).doneM! - 500) < 1)
    }

    @Test func rerouteTooFarWaypointIsSetupErrorAndChangesNothing() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 300))
        let before = d.trip.route
        #expect(throws: TripSetupError.self) {
            try d.trip.reroute(route: Self.shifted, waypoints: [Fixture.at(east: 500, north: 400)], destination: nil, now: d.now)
        }
        #expect(d.trip.route == before)
    }

    @Test func rerouteOfArrivedOrEndedTripIsRefused() {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 1000))
        d.advance(by: 100)
        #expect(d.trip.status == .arrived)
        #expect(throws: TripSetupError.finished(status: .arrived)) {
            try d.trip.reroute(route: Self.shifted, waypoints: nil, destination: nil, now: d.now)
        }
        _ = d.trip.end(now: d.now)
        do {
            _ = try d.trip.reroute(route: Self.shifted, waypoints: nil, destination: nil, now: d.now)
        } catch {
            #expect(error == .finished(status: .ended) && error.isConflict)
        }
    }
}

@Suite struct TripCodableTests {
    /// Encodes and decodes, then drives both copies through the same script and compares all outputs.
    func expectRestoredBehavesIdentically(_ d: Driver, script: (inout Driver) -> Void) throws {
        let data = try JSONEncoder().encode(d.trip)
        var restored = d
        restored.trip = try JSONDecoder().decode(Trip.self, from: data)
        #expect(restored.trip.status == d.trip.status)
        #expect(restored.trip.marker(at: d.now) == d.trip.marker(at: d.now))
        var a = d, b = restored
        a.frames = []; a.events = []; a.segments = []
        b.frames = []; b.events = []; b.segments = []
        script(&a)
        script(&b)
        #expect(a.frames == b.frames)
        #expect(a.events == b.events)
        #expect(a.segments == b.segments)
        #expect(a.trip.lastEventNumber == b.trip.lastEventNumber)
        #expect(!a.frames.isEmpty || !a.events.isEmpty)
    }

    @Test func tripRestoredMidAnimationBehavesIdentically() throws {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 700)]))
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 400), at: 10_000, durationMs: 10_000)
        d.advance(by: 3300)
        try expectRestoredBehavesIdentically(d) { d in
            d.advance(by: 3000)
            d.send(Fixture.at(east: 700))
            d.send(Fixture.at(east: 700))  // same seq? no: a new seq, same ts: out_of_order
            d.advance(by: 20_000)
        }
    }

    @Test func tripRestoredWhileHoldingBehavesIdentically() throws {
        var d = Driver(Fixture.trip(waypoints: [Fixture.at(east: 300)]))
        d.send(Fixture.at(east: 300))
        d.advance(by: 100)
        #expect(d.trip.status == .holding)
        try expectRestoredBehavesIdentically(d) { d in
            _ = d.send(Fixture.at(east: 350), at: 20_000)
            d.events += (try? d.trip.proceed(now: d.now)) ?? []
            d.send(Fixture.at(east: 1000), at: 40_000)
            d.advance(by: 20_000)
        }
    }

    @Test func tripRestoredOffRouteBehavesIdentically() throws {
        var d = Driver(Fixture.trip())
        d.send(Fixture.at(east: 100))
        d.send(Fixture.at(east: 200, north: 200), at: 10_000)
        d.advance(by: 2000)
        #expect(d.trip.status == .offRoute)
        try expectRestoredBehavesIdentically(d) { d in
            d.send(Fixture.at(east: 300, north: 60), at: 20_000)
            d.send(Fixture.at(east: 400, north: 10), at: 30_000)
            d.advance(by: 20_000)
        }
    }

    @Test func duplicateBookkeepingSurvivesPersistence() throws {
        var trip = Fixture.trip()
        _ = trip.judge(Fixture.fix(Fixture.at(east: 0), ts: 1000, seq: 9))
        var back = try JSONDecoder().decode(Trip.self, from: JSONEncoder().encode(trip))
        #expect(back.judge(Fixture.fix(Fixture.at(east: 0), ts: 2000, seq: 9)) == .refused(.duplicate))
        #expect(back.lastEventNumber == 1)
    }
}
