import Foundation
import Testing
@testable import TrackHubCore

/// PROTOCOL 17: stop ids, dwells, per-stop ETAs and following one stop.
@Suite struct StopTests {
    /// Waypoints at 300 m ("a", 60 s) and 600 m ("b", 120 s) of the 1 000 m east route.
    static func stopsTrip(wait: Bool = true) -> Trip {
        var t = try! Trip(
            id: "t1", route: Fixture.eastRoute(), waypoints: [Fixture.at(east: 300), Fixture.at(east: 600)],
            destination: nil, config: TripConfig(waitAtWaypoints: wait), now: Fixture.t0,
            stops: [StopDetails(id: "a", name: "Ann", dwellS: 60), StopDetails(id: "b", dwellS: 120)])
        _ = t.created(now: Fixture.t0)
        return t
    }

    /// A driver whose courier has gone 100 m in 10 s (speed known), ticked 1 s on.
    static func moving(wait: Bool = true) -> Driver {
        var d = Driver(stopsTrip(wait: wait))
        d.send(Fixture.at(east: 0))
        d.send(Fixture.at(east: 100), at: 10_000)
        d.advance(by: 1_000)
        return d
    }

    /// Sends a fix at `east` metres 30 s after the last one, then ticks until `done` holds
    /// (at most a minute of trip time: the marker slides there over the fix interval).
    static func reach(_ d: inout Driver, east: Double, until done: (Driver) -> Bool) {
        d.send(Fixture.at(east: east), at: d.now - Fixture.t0 + 30_000)
        let limit = d.now + 60_000
        while !done(d), d.now < limit { d.advance(by: 100) }
    }

    /// Until the trip holds at a waypoint.
    static func holding(_ d: Driver) -> Bool { d.trip.status == .holding }

    @Test func repeatedIDInOneRequestIsRejectedNamingIt() {
        #expect(throws: TripSetupError.duplicateStopID(index: 1)) {
            _ = try Trip(
                id: "t", route: Fixture.eastRoute(), waypoints: [Fixture.at(east: 300), Fixture.at(east: 600)],
                destination: nil, config: TripConfig(), now: Fixture.t0,
                stops: [StopDetails(id: "x"), StopDetails(id: "x")])
        }
        #expect(TripSetupError.duplicateStopID(index: 1).field == "waypoints[1].id")
    }

    @Test func eachWaypointsETAAddsTheDwellsBeforeIt() throws {
        let d = Self.moving()
        let own = d.trip.progressInfo(at: d.now)
        let done = try #require(own.doneM)
        let v = try #require(d.trip.speedMps)
        let etas = d.trip.waypointETAs(now: d.now)
        let a = try #require(d.trip.waypoints[0].alongM), b = try #require(d.trip.waypoints[1].alongM)
        let end = try #require(d.trip.destinationAlongM)
        #expect(abs(a - 300) < 1 && abs(b - 600) < 1)
        #expect(abs(etas[0].remainingM! - (a - done)) < 1e-6)
        #expect(etas[0].etaS == ((a - done) / v).rounded(.up))
        #expect(abs(etas[1].remainingM! - (b - done)) < 1e-6)
        #expect(etas[1].etaS == ((b - done) / v).rounded(.up) + 60)
        #expect(own.etaS == Int(((end - done) / v).rounded(.up)) + 180)
    }

    @Test func theHeldWaypointCountsWhatIsLeftOfItsDwell() throws {
        var d = Self.moving()
        Self.reach(&d, east: 300, until: Self.holding)
        let reached = try #require(d.events.first { $0.kind.name == "waypoint_reached" })
        #expect(d.trip.status == .holding)
        d.advance(by: 20_000)
        let b = try #require(d.trip.waypoints[1].alongM), end = try #require(d.trip.destinationAlongM)
        let elapsed = Double(d.now - reached.t) / 1000
        let own = d.trip.progressInfo(at: d.now)
        let done = try #require(own.doneM)
        let v = try #require(d.trip.speedMps)
        let etas = d.trip.waypointETAs(now: d.now)
        #expect(etas[0].remainingM == 0 && etas[0].etaS == 0)
        #expect(etas[1].etaS == ((b - done) / v).rounded(.up) + (60 - elapsed).rounded(.up))
        // Past its dwell the held waypoint adds nothing (never less than 0).
        d.advance(by: 60_000)
        let later = d.trip.progressInfo(at: d.now)
        #expect(d.trip.waypointETAs(now: d.now)[1].etaS == ((b - later.doneM!) / v).rounded(.up))
        #expect(later.etaS == Int(((end - later.doneM!) / v).rounded(.up)) + 120)
    }

    @Test func visitedWaypointsHaveNoETAAndEventsCarryTheStop() throws {
        var d = Self.moving(wait: false)
        Self.reach(&d, east: 350) { $0.trip.leg == 1 }
        let reached = try #require(d.events.first { $0.kind.name == "waypoint_reached" })
        #expect(reached.stopID == "a" && reached.stopName == "Ann")
        let resumed = try #require(d.events.first { $0.kind.name == "waypoint_resumed" })
        #expect(resumed.stopID == "a")
        let etas = d.trip.waypointETAs(now: d.now)
        #expect(etas[0].etaS == nil && etas[0].remainingM == nil)
        #expect(etas[1].etaS != nil)
    }

    @Test func stopProgressCountsStopsBeforeAndReached() throws {
        var d = Self.moving()
        #expect(d.trip.stopProgress(.waypoint(id: "zz"), now: d.now) == nil)
        let dest = try #require(d.trip.stopProgress(.destination, now: d.now))
        #expect(dest.id == "destination" && dest.stopsBefore == 2 && !dest.reached)
        #expect(dest.etaS.map { Int($0) } == d.trip.progressInfo(at: d.now).etaS)
        let b = try #require(d.trip.stopProgress(.waypoint(id: "b"), now: d.now))
        #expect(b.stopsBefore == 1 && !b.reached)
        #expect(b.etaS == d.trip.waypointETAs(now: d.now)[1].etaS)
        Self.reach(&d, east: 300, until: Self.holding)
        let a = try #require(d.trip.stopProgress(.waypoint(id: "a"), now: d.now))
        #expect(a.reached && a.etaS == 0 && a.remainingM == 0 && a.stopsBefore == 0)
        #expect(d.trip.stopProgress(.waypoint(id: "b"), now: d.now)?.stopsBefore == 1)
    }

    @Test func framesTowardAStopUseItsDistance() throws {
        var d = Self.moving()
        let f = try #require(d.frames.last)
        let toA = d.trip.frame(f, towardStop: .waypoint(id: "a"))
        let done = try #require(f.doneM), a = try #require(d.trip.waypoints[0].alongM)
        #expect(abs(toA.progress! - done / a) < 1e-9)
        #expect(abs(toA.remainingM! - (a - done)) < 1e-6)
        #expect(toA.etaS! < f.etaS!)
        #expect(d.trip.frame(f, towardStop: .destination).progress == f.progress)
        Self.reach(&d, east: 300, until: Self.holding)
        let g = try #require(d.frames.last)
        let reached = d.trip.frame(g, towardStop: .waypoint(id: "a"))
        #expect(reached.progress == 1 && reached.remainingM == 0 && reached.etaS == 0)
        let info = d.trip.progressInfo(at: d.now, toward: .waypoint(id: "b"))
        #expect(info.progress! <= 1 && abs(info.progress! - info.doneM! / d.trip.waypoints[1].alongM!) < 1e-9)
    }

    @Test func aNewRouteKeepsTheStopsItNamesAndDropsTheRest() throws {
        var d = Self.moving()
        var kept = d.trip
        _ = try kept.reroute(
            route: Fixture.eastRoute(), waypoints: [Fixture.at(east: 700)], destination: nil, now: d.now,
            stops: [StopDetails(id: "b", dwellS: 30)])
        #expect(kept.removedStopIDs(comparedTo: d.trip) == ["a"])
        #expect(kept.waypoints.map(\.id) == ["b"] && kept.waypoints[0].dwellS == 30)
        #expect(kept.stopProgress(.waypoint(id: "b"), now: d.now)?.stopsBefore == 0)
        var unchanged = d.trip
        _ = try unchanged.reroute(route: Fixture.eastRoute(), waypoints: nil, destination: nil, now: d.now)
        #expect(unchanged.removedStopIDs(comparedTo: d.trip).isEmpty)

        // The held waypoint keeps its id; a new waypoint may not take it.
        Self.reach(&d, east: 300, until: Self.holding)
        #expect(d.trip.status == .holding)
        var held = d.trip
        #expect(throws: TripSetupError.duplicateStopID(index: 1)) {
            _ = try held.reroute(
                route: Fixture.eastRoute(), waypoints: [Fixture.at(east: 700), Fixture.at(east: 800)], destination: nil,
                now: d.now, stops: [StopDetails(id: "c"), StopDetails(id: "a")])
        }
        _ = try held.reroute(
            route: Fixture.eastRoute(), waypoints: [Fixture.at(east: 700)], destination: nil, now: d.now,
            stops: [StopDetails(id: "c")])
        #expect(held.waypoints.map(\.id) == ["a", "c"])
        #expect(held.removedStopIDs(comparedTo: d.trip) == ["b"])
        // A visited waypoint's id cannot be taken either.
        _ = try held.proceed(now: d.now)
        #expect(throws: TripSetupError.duplicateStopID(index: 0)) {
            _ = try held.reroute(
                route: Fixture.eastRoute(), waypoints: [Fixture.at(east: 700)], destination: nil, now: d.now,
                stops: [StopDetails(id: "a")])
        }
    }

    @Test func storedWaypointsWithoutStopFieldsStillDecode() throws {
        let json = #"{"index":0,"point":{"lat":1,"lon":2},"alongM":5,"visited":false}"#
        let w = try JSONDecoder().decode(Waypoint.self, from: Data(json.utf8))
        #expect(w.id == nil && w.name == nil && w.dwellS == 0)
        let round = try JSONDecoder().decode(Waypoint.self, from: JSONEncoder().encode(Self.stopsTrip().waypoints[0]))
        #expect(round.id == "a" && round.name == "Ann" && round.dwellS == 60)
    }
}
