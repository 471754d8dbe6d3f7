import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// A hub alone lets a moving trip nobody takes frames of skip its ticks until one could find
/// an event (`TickSchedule.doze`): its segment followers still get every event, and a frame
/// follower that comes meanwhile gets frames at once.
@Suite struct DozingTripTests {
    private static func waypoint(alongM: Double) -> [String: Any] { ["lat": Lisbon.lat(alongM: alongM), "lon": Lisbon.lon, "id": "w1"] }

    @Test func aTripWithOnlySegmentFollowersDozesAndAFrameFollowerWakesIt() throws {
        try withTestHub(configure: { $0.tickHz = 10 }) { hub, clients in
            try hub.createLisbonTrip("doze", ["waypoints": [Self.waypoint(alongM: 1000)]])
            let segments = try clients.connect()
            try segments.subscribe("doze", id: 1, ["mode": "segments"])
            var courier = Courier(trip: "doze")
            try segments.sendFix(courier.fix(alongM: 0), id: 2)
            // Then a 20 s slide that stops 100 m short of the waypoint: no tick of it can find an event.
            for (i, along) in [300.0, 600].enumerated() { try segments.sendFix(courier.fix(alongM: along), id: 10 + i) }
            try segments.sendFix(courier.fix(alongM: 900, durationMs: 20_000), id: 3)
            try waitUntil("the trip dozes") { try hub.metric("trackhub_trips_dozing") == 1 }
            #expect(try hub.metric("trackhub_trips_moving") == 1, "a dozing trip still counts as moving")

            let frames = try clients.connect()
            try frames.subscribe("doze", id: 4)
            // Woken by the subscription: its frames come now, not when the doze would end.
            let first = try frames.next(type: "frame", timeout: 5)
            let second = try frames.next(type: "frame", timeout: 5)
            let firstSeq = try #require(first.int("seq"))
            #expect(second.int("seq") == firstSeq + 1)
            #expect(try hub.metric("trackhub_trips_dozing") == 0)
        }
    }

    @Test func aDozingTripStillReachesItsWaypointForItsSegmentFollowers() throws {
        try withTestHub(configure: { $0.tickHz = 10 }) { hub, clients in
            try hub.createLisbonTrip("reach", ["waypoints": [Self.waypoint(alongM: 1100)]])
            let segments = try clients.connect()
            try segments.subscribe("reach", id: 1, ["mode": "segments"])
            var courier = Courier(trip: "reach")
            try segments.sendFix(courier.fix(alongM: 0), id: 2)
            for (i, along) in [300.0, 600, 900].enumerated() { try segments.sendFix(courier.fix(alongM: along), id: 10 + i) }
            // The marker crosses the waypoint's buffer (1 050 m) 4.5 s into a 9 s slide.
            try segments.sendFix(courier.fix(alongM: 1200, durationMs: 9000), id: 3)
            try waitUntil("the trip dozes") { try hub.metric("trackhub_trips_dozing") == 1 }
            let reached = try segments.next(type: "event") { $0["name"] as? String == "waypoint_reached" }
            #expect(reached["stop"] as? String == "w1")
            let lat = try #require(reached.double("lat"))
            #expect(lat >= Lisbon.lat(alongM: 1049) && lat <= Lisbon.lat(alongM: 1101), "found where the marker reached the buffer: \(lat)")
            #expect(try hub.metric("trackhub_trips_dozing") == 0, "awake for the event")
        }
    }
}
