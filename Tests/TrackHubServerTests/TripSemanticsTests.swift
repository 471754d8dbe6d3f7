import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// Trip semantics as a subscriber sees them on the wire (PROTOCOL sections 4, 6 and 7):
/// waypoint holds and proceed, arrival, off route and back, event numbering and order,
/// and `since_event` replay.
@Suite struct TripSemanticsTests {
    /// A 556 m street: three points along the meridian from 38.700 to 38.705.
    static let shortRoute: [[Double]] = [[Lisbon.lon, 38.700], [Lisbon.lon, 38.7025], [Lisbon.lon, 38.705]]
    static var shortLengthM: Double { 0.005 * Lisbon.metresPerDegree }

    @Test func waypointHoldsTheTripUntilProceedReleasesIt() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("hold", ["waypoints": [Lisbon.point(alongM: 500)]])
            let viewer = try clients.connect()
            try viewer.subscribe("hold", id: 1)
            var courier = Courier(trip: "hold")
            try viewer.sendFix(courier.fix(alongM: 250), id: 2)
            // Beyond the waypoint: clamped to it, and applied.
            let clamped = try viewer.sendFix(courier.fix(alongM: 520, durationMs: 800), id: 3)
            #expect(clamped["applied"] as? Bool == true)
            let reached = try viewer.next(type: "event") { $0.name == "waypoint_reached" }
            #expect(reached.int("index") == 0)
            #expect(reached.int("remaining_waypoints") == 0)
            #expect(abs(reached.double("lat")! - Lisbon.lat(alongM: 500)) < 50 / Lisbon.metresPerDegree)
            // The running animation still ends at its (clamped) target.
            try viewer.nextFrame(atLat: Lisbon.lat(alongM: 500))
            let (_, trip) = try hub.httpJSON("GET", "/v1/trips/hold")
            #expect(trip["status"] as? String == "holding")
            #expect((trip["waypoints"] as? [[String: Any]])?.first?["visited"] as? Bool == false)

            let held = try viewer.sendFix(courier.fix(alongM: 700), id: 4)
            #expect(held["applied"] as? Bool == false)
            #expect(held["reason"] as? String == "holding")

            let ack = try viewer.request(["op": "proceed", "trip": "hold"], id: 5)
            #expect(ack.type == "ack")
            #expect(ack["trip"] as? String == "hold")
            #expect(ack["applied"] as? Bool == true)
            let resumed = try viewer.next(type: "event") { $0.name == "waypoint_resumed" }
            #expect(resumed.int("index") == 0)
            #expect(resumed.int("remaining_waypoints") == 0)
            #expect(resumed.int("n") == reached.int("n")! + 1)
            let (_, after) = try hub.httpJSON("GET", "/v1/trips/hold")
            #expect(after["status"] as? String == "moving")
            #expect(after.int("leg") == 1)
            #expect((after["waypoints"] as? [[String: Any]])?.first?["visited"] as? Bool == true)

            // Moving again past the waypoint.
            try viewer.sendFix(courier.fix(alongM: 800), id: 6)
            let moved = try viewer.nextFrame(atLat: Lisbon.lat(alongM: 800))
            #expect(moved.int("leg") == 1)
            #expect(moved["status"] as? String == "moving")
        }
    }

    @Test func arrivalSendsArrivedAfterTheFrameThatTriggeredItAndLaterFixesAreNotAnimated() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createTrip(["id": "arrive", "route": Self.shortRoute])
            let viewer = try clients.connect()
            try viewer.subscribe("arrive", id: 1)
            var courier = Courier(trip: "arrive")
            try viewer.sendFix(courier.fix(alongM: 0), id: 2)
            try viewer.sendFix(courier.fix(alongM: 280, durationMs: 500), id: 3)
            try viewer.sendFix(courier.fix(alongM: Self.shortLengthM, durationMs: 800), id: 4)
            let stream = try viewer.collect("arrived") { $0.type == "event" && $0.name == "arrived" }
            let arrived = try #require(stream.last)
            // The frame that put the marker where the event says came before the event.
            let trigger = stream.dropLast().first { $0.type == "frame" && $0.double("lat") == arrived.double("lat") }
            #expect(trigger != nil, "no frame at \(arrived) before the arrived event")
            #expect(distanceM(arrived["lat"] as! Double, Lisbon.lon, 38.705, Lisbon.lon) <= 50.5)
            let (_, trip) = try hub.httpJSON("GET", "/v1/trips/arrive")
            #expect(trip["status"] as? String == "arrived")
            #expect(trip.int("eta_s") == 0)
            let late = try viewer.sendFix(courier.fix(alongM: Self.shortLengthM - 100), id: 5)
            #expect(late["applied"] as? Bool == false)
            #expect(late["reason"] as? String == "arrived")
            let proceed = try viewer.request(["op": "proceed", "trip": "arrive"], id: 6)
            #expect(proceed["code"] as? String == "conflict")
            #expect((proceed["message"] as? String)?.contains("arrived") == true)
        }
    }

    @Test func aFixFarFromTheRouteIsOffRouteUntilOneIsBackOnIt() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            let viewer = try clients.connect()
            try viewer.subscribe("detour", id: 1)
            try hub.createLisbonTrip("detour")
            var courier = Courier(trip: "detour")
            try viewer.sendFix(courier.fix(alongM: 200), id: 2)
            try viewer.sendFix(courier.fix(alongM: 300), id: 3)
            try viewer.nextFrame(atLat: Lisbon.lat(alongM: 300))
            let away = try viewer.sendFix(courier.fix(alongM: 300, eastM: 500), id: 4)
            #expect(away["applied"] as? Bool == true)
            let stream = try viewer.collect("off_route") { $0.type == "event" && $0.name == "off_route" }
            let offRoute = try #require(stream.last)
            #expect(abs(offRoute.double("distance_m")! - 500) < 5)
            #expect(offRoute["lat"] is Double && offRoute["lon"] is Double)
            let (_, trip) = try hub.httpJSON("GET", "/v1/trips/detour")
            #expect(trip["status"] as? String == "off_route")
            let offFrame = try viewer.next(type: "frame") { $0["status"] as? String == "off_route" }
            #expect(abs(offFrame.double("done_m")! - 300) < 1, "done_m keeps its last on-route value")
            // Still off: no second off_route.
            try viewer.sendFix(courier.fix(alongM: 400, eastM: 450), id: 5)
            // Back within half of reroute_distance_m: back_on_route.
            try viewer.sendFix(courier.fix(alongM: 500), id: 6)
            let back = try viewer.next(type: "event") { $0.name == "back_on_route" }
            #expect(back.int("n") == offRoute.int("n")! + 1, "one off_route per excursion")
            try viewer.nextFrame(atLat: Lisbon.lat(alongM: 500))
            let (_, again) = try hub.httpJSON("GET", "/v1/trips/detour")
            #expect(again["status"] as? String == "moving")
            #expect(abs(again.double("done_m")! - 500) < 1)
        }
    }

    @Test func eventsAreNumberedFromOneRisingByOne() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            let viewer = try clients.connect()
            try viewer.subscribe("numbered-events", id: 1)
            try hub.createLisbonTrip("numbered-events", ["waypoints": [Lisbon.point(alongM: 400)], "config": ["wait_at_waypoints": false]])
            var courier = Courier(trip: "numbered-events")
            try viewer.sendFix(courier.fix(alongM: 100), id: 2)
            try viewer.sendFix(courier.fix(alongM: 100, eastM: 300), id: 3)
            try viewer.sendFix(courier.fix(alongM: 300), id: 4)
            try viewer.sendFix(courier.fix(alongM: 500, durationMs: 500), id: 5)
            var seen = try viewer.collect("waypoint_resumed") { $0.type == "event" && $0.name == "waypoint_resumed" }
            #expect(try hub.httpJSON("DELETE", "/v1/trips/numbered-events").status == 200)
            seen += try viewer.collect("ended") { $0.type == "event" && $0.name == "ended" }
            let events = seen.filter { $0.type == "event" }
            #expect(events.map(\.name) == ["trip_created", "off_route", "back_on_route", "waypoint_reached", "waypoint_resumed", "ended"])
            #expect(events.compactMap { $0.int("n") } == Array(1...events.count))
            #expect(events.allSatisfy { $0["trip"] as? String == "numbered-events" })
        }
    }

    @Test func sinceEventReplaysEveryEventAfterNInOrderAsFirstSent() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            let live = try clients.connect()
            try live.subscribe("replayed", id: 1)
            try hub.createLisbonTrip("replayed")
            var courier = Courier(trip: "replayed")
            try live.sendFix(courier.fix(alongM: 100), id: 2)
            try live.sendFix(courier.fix(alongM: 100, eastM: 400), id: 3)
            try live.sendFix(courier.fix(alongM: 200), id: 4)
            var liveEvents: [[UInt8]] = []
            for n in 1...3 { liveEvents.append(try live.nextRaw(type: "event") { $0.int("n") == n }) }

            let all = try clients.connect()
            let recovered = try all.subscribe("replayed", id: 5, ["since_event": 0])
            #expect(recovered["recovered"] as? Bool == true)
            #expect(recovered.int("last_event") == 3)
            let replay = try (1...3).map { _ in try all.nextRaw(type: "event") }
            #expect(replay == liveEvents, "replayed events are as first sent, in order")

            let some = try clients.connect()
            #expect(try some.subscribe("replayed", id: 6, ["since_event": 2])["recovered"] as? Bool == true)
            #expect(try some.nextRaw(type: "event") == liveEvents[2])
            #expect(try some.request(["op": "ping"], id: 7).type == "pong")
            #expect(some.drain().filter { $0.type == "event" }.isEmpty, "only the events after 2")

            let ahead = try clients.connect()
            let notRecovered = try ahead.subscribe("replayed", id: 8, ["since_event": 10])
            #expect(notRecovered["recovered"] as? Bool == false)
            #expect(try ahead.request(["op": "ping"], id: 9).type == "pong")
            #expect(ahead.drain().filter { $0.type == "event" }.isEmpty, "nothing replayed past the last event")
        }
    }
}
