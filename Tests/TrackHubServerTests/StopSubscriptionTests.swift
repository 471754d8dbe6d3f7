import Foundation
import Testing
import TrackHubTesting

/// PROTOCOL 17 "Following one stop" through the hub: frames to the stop, encoded once per
/// trip and stop followed (never per subscriber), and `not_found` for an unknown stop.
@Suite struct StopSubscriptionTests {
    @Test func stopFollowersGetFramesToTheirStopEncodedOncePerStop() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("stops", [
                "waypoints": [
                    Lisbon.point(alongM: 1000).merging(["id": "a", "dwell_s": 60]) { $1 },
                    Lisbon.point(alongM: 1500).merging(["id": "b"]) { $1 },
                ],
                "config": ["wait_at_waypoints": false],
            ])
            let viewer = try clients.connect()
            try viewer.subscribe("stops", id: 1)
            let followersOfA = try (0..<2).map { i in
                let c = try clients.connect()
                let snapshot = try c.subscribe("stops", id: 1, ["stop": "a"])
                let stop = try #require(snapshot["stop"] as? [String: Any])
                #expect(stop["id"] as? String == "a" && stop.int("stops_before") == 0 && stop["reached"] as? Bool == false, "\(i)")
                return c
            }
            let followerOfB = try clients.connect()
            try followerOfB.subscribe("stops", id: 1, ["stop": "b"])
            let unknown = try followerOfB.request(["op": "subscribe", "trip": "stops", "stop": "zz"], id: 2)
            #expect(unknown["type"] as? String == "error" && unknown["code"] as? String == "not_found")
            #expect((unknown["message"] as? String ?? "").contains("stop"))

            var courier = Courier(trip: "stops")
            try viewer.sendFix(courier.fix(alongM: 100), id: 3)
            try viewer.sendFix(courier.fix(alongM: 300), id: 4)
            let lat = Lisbon.lat(alongM: 300)
            let own = try viewer.nextFrame(atLat: lat)
            let toA = try followersOfA.map { try $0.nextFrame(atLat: lat) }
            let toB = try followerOfB.nextFrame(atLat: lat)
            let done = try #require(own.double("done_m"))
            #expect(abs(toA[0].double("remaining_m")! - (1000 - done)) < 1)
            #expect(abs(toA[0].double("progress")! - done / 1000) < 1e-3)
            #expect(abs(toB.double("remaining_m")! - (1500 - done)) < 1)
            #expect(toB.int("eta_s")! >= toA[0].int("eta_s")! + 60, "a's dwell comes before b")
            #expect(own.int("eta_s")! >= toB.int("eta_s")!)
            #expect(toA[0].double("remaining_m") == toA[1].double("remaining_m") && toA[0].int("seq") == toA[1].int("seq"))

            // Four followers, three encodings per tick: the trip's own, a's and b's.
            let encoded = try #require(try hub.metric("trackhub_frames_encoded_total"))
            let out = try #require(try hub.metric("trackhub_frames_out_total"))
            #expect(encoded > 0 && encoded * 4 == out * 3, "encoded \(encoded), written \(out)")
        }
    }
}
