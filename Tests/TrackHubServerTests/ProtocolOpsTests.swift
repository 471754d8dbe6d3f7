import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// Every client op of PROTOCOL section 3 and the server message it is answered with
/// (section 4): hello/welcome, subscribe/snapshot, unsubscribe/unsubscribed, fix/ack,
/// proceed/ack, viewport, ping/pong, and the live frame/segment/event messages.
@Suite struct ProtocolOpsTests {
    @Test func helloWithoutAnIDIsAnsweredWelcomeWithoutRe() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            try connection.send(["op": "hello"])
            let welcome = try connection.next(type: "welcome")
            #expect(welcome["re"] == nil)
            #expect(welcome["server"] is String)
            #expect(welcome.int("tick_hz") == 10)
            #expect(welcome.int("protocol") == 1)
        }
    }

    @Test func numericIDIsEchoedAsReOnPong() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            connection.sendText(#"{"op":"ping","id":12.5}"#)
            let pong = try connection.next(type: "pong")
            #expect(pong["re"] as? Double == 12.5)
            try connection.send(["op": "ping"])
            let bare = try connection.next(type: "pong")
            #expect(bare["re"] == nil)
            #expect(bare["t"] is Int)
        }
    }

    @Test func subscribeToAPendingTripAnswersItsWholeStateWithDefaultsFilledIn() throws {
        try withTestHub { hub, clients in
            try hub.createLisbonTrip("pending-1", ["rider": ["id": "r7", "name": "Ana"]])
            let viewer = try clients.connect()
            let snapshot = try viewer.subscribe("pending-1", id: 5)
            #expect(snapshot.int("re") == 5)
            #expect(snapshot["trip"] as? String == "pending-1")
            #expect(snapshot["status"] as? String == "pending")
            #expect((snapshot["rider"] as? [String: Any])?["name"] as? String == "Ana")
            let config = try #require(snapshot["config"] as? [String: Any])
            #expect(config.double("arrival_buffer_m") == 50)
            #expect(config.double("reroute_distance_m") == 100)
            #expect(config["wait_at_waypoints"] as? Bool == true)
            #expect(config.double("max_speed_mps") == 70)
            #expect((snapshot["route"] as? [[Double]])?.count == 21)
            let destination = try #require(snapshot["destination"] as? [String: Any])
            #expect(abs(destination.double("lat")! - Lisbon.northLat) < 1e-6)
            for field in ["position", "bearing", "progress", "done_m", "remaining_m", "eta_s"] {
                #expect(snapshot[field] is NSNull, "\(field) should be null before the first fix")
            }
            #expect(snapshot.int("leg") == 0)
            #expect(snapshot.int("last_event") == 1, "trip_created is event 1")
            #expect(snapshot["recovered"] == nil)
        }
    }

    @Test func fixIsAckedWithReTripAndSeqAndTheFirstOnePlacesTheMarkerAtOnce() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("first-fix")
            let viewer = try clients.connect()
            try viewer.subscribe("first-fix", id: 1)
            let courierConnection = try clients.connect()
            var courier = Courier(trip: "first-fix")
            let ack = try courierConnection.sendFix(courier.fix(alongM: 300, durationMs: 5000), id: 42)
            #expect(ack.int("re") == 42)
            #expect(ack["trip"] as? String == "first-fix")
            #expect(ack.int("seq") == 1)
            #expect(ack["applied"] as? Bool == true)
            #expect(ack["reason"] == nil)
            // Placed at once: the very first frame is already at the fix, whatever duration_ms said.
            let frame = try viewer.next(type: "frame")
            #expect(abs(frame.double("lat")! - Lisbon.lat(alongM: 300)) < 1e-6)
            #expect(frame.int("seq") == 1)
            #expect(frame["status"] as? String == "moving")
            let snapshot = try viewer.subscribe("first-fix", id: 2)
            let position = try #require(snapshot["position"] as? [String: Any])
            #expect(abs(position.double("lat")! - Lisbon.lat(alongM: 300)) < 1e-6)
            #expect(abs(snapshot.double("done_m")! - 300) < 1)
            #expect((snapshot["trail"] as? [[Double]])?.count == 1)
        }
    }

    @Test func frameCarriesEveryFieldOfSection4() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("frame-fields")
            let viewer = try clients.connect()
            try viewer.subscribe("frame-fields", id: 1)
            var courier = Courier(trip: "frame-fields")
            try viewer.sendFix(courier.fix(alongM: 100), id: 2)
            try viewer.sendFix(courier.fix(alongM: 300), id: 3)
            let last = try viewer.nextFrame(atLat: Lisbon.lat(alongM: 300))
            #expect(last["trip"] as? String == "frame-fields")
            #expect(last["t"] is Int)
            let bearing = try #require(last.double("bearing"))
            #expect(bearing >= 0 && bearing < 360)
            #expect(bearing < 1 || bearing > 359, "the route runs north")
            #expect(abs(last.double("progress")! - 300 / Lisbon.lengthM) < 1e-3)
            #expect(abs(last.double("done_m")! - 300) < 1)
            #expect(abs(last.double("remaining_m")! - (Lisbon.lengthM - 300)) < 1)
            #expect(last.int("eta_s") != nil, "two applied fixes 10 s apart give a speed")
            #expect(last.int("leg") == 0)
            #expect(last["status"] as? String == "moving")
        }
    }

    @Test func acksOnOneConnectionComeInTheOrderItsFixesArrived() throws {
        try withTestHub { hub, clients in
            try hub.createLisbonTrip("ack-order")
            let connection = try clients.connect()
            var courier = Courier(trip: "ack-order")
            for i in 1...8 {
                var fix = courier.fix(alongM: Double(i) * 50)
                fix["id"] = 100 + i
                try connection.send(fix)
            }
            let acks = try (1...8).map { _ in try connection.next(type: "ack") }
            #expect(acks.map { $0.int("re") } == (101...108).map { $0 })
            #expect(acks.map { $0.int("seq") } == (1...8).map { $0 })
            #expect(acks.allSatisfy { $0["applied"] as? Bool == true })
        }
    }

    @Test func refusedFixesAreAckedWithTheirReason() throws {
        try withTestHub { hub, clients in
            try hub.createLisbonTrip("refusals")
            let connection = try clients.connect()
            var courier = Courier(trip: "refusals")
            let first = courier.fix(alongM: 100)
            try connection.sendFix(first, id: 1)
            // The same seq again, whatever its other fields: duplicate.
            var again = courier.fix(alongM: 200)
            again["seq"] = first["seq"]
            let duplicate = try connection.sendFix(again, id: 2)
            #expect(duplicate["applied"] as? Bool == false)
            #expect(duplicate["reason"] as? String == "duplicate")
            // A ts not after the last applied fix's: out_of_order.
            var old = courier.fix(alongM: 120)
            old["ts"] = (first["ts"] as! Int64) - 1000
            let outOfOrder = try connection.sendFix(old, id: 3)
            #expect(outOfOrder["reason"] as? String == "out_of_order")
            // 1 km in 10 s is 100 m/s, above max_speed_mps 70: outlier.
            var far = courier.fix(alongM: 1100)
            far["ts"] = (first["ts"] as! Int64) + 10_000
            let outlier = try connection.sendFix(far, id: 4)
            #expect(outlier["applied"] as? Bool == false)
            #expect(outlier["reason"] as? String == "outlier")
            // A seqless fix with the ts of a stored one: duplicate too.
            var seqless = courier.fix(alongM: 130)
            seqless["seq"] = nil
            seqless["ts"] = first["ts"]
            let seqlessDuplicate = try connection.sendFix(seqless, id: 5)
            #expect(seqlessDuplicate["reason"] as? String == "duplicate")
            #expect(seqlessDuplicate["seq"] == nil, "no seq in the ack of a fix without one")
        }
    }

    @Test func proceedOnATripThatIsNotHoldingIsAConflictNamingItsStatus() throws {
        try withTestHub { hub, clients in
            try hub.createLisbonTrip("not-holding")
            let connection = try clients.connect()
            let error = try connection.request(["op": "proceed", "trip": "not-holding"], id: 9)
            #expect(error.type == "error")
            #expect(error["code"] as? String == "conflict")
            #expect((error["message"] as? String)?.contains("pending") == true)
            let missing = try connection.request(["op": "proceed", "trip": "no-such-trip"], id: 10)
            #expect(missing["code"] as? String == "not_found")
            #expect((missing["message"] as? String)?.contains("no-such-trip") == true)
        }
    }

    @Test func viewportGetsAReplyCarryingItsID() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            let reply = try connection.request(["op": "viewport", "bbox": [-9.2, 38.6, -9.0, 38.8], "zoom": 12], id: 77)
            #expect(reply.int("re") == 77)
            #expect(["clusters", "error"].contains(reply.type ?? ""))
            #expect(try connection.request(["op": "ping"], id: 78).type == "pong")
        }
    }

    @Test func unsubscribeStopsLiveMessages() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            try hub.createLisbonTrip("unsub")
            let leaving = try clients.connect()
            let staying = try clients.connect()
            try leaving.subscribe("unsub", id: 1)
            try staying.subscribe("unsub", id: 1)
            var courier = Courier(trip: "unsub")
            try staying.sendFix(courier.fix(alongM: 100), id: 2)
            try leaving.nextFrame(atLat: Lisbon.lat(alongM: 100))
            let reply = try leaving.request(["op": "unsubscribe", "trip": "unsub"], id: 3)
            #expect(reply.type == "unsubscribed")
            #expect(reply["trip"] as? String == "unsub")
            #expect(reply["reason"] == nil)
            _ = leaving.drain()
            // Frames and an event (off_route) for the one still subscribed...
            try staying.sendFix(courier.fix(alongM: 300), id: 4)
            try staying.nextFrame(atLat: Lisbon.lat(alongM: 300))
            try staying.sendFix(courier.fix(alongM: 300, eastM: 500), id: 5)
            try staying.next(type: "event") { $0.name == "off_route" }
            // ...and nothing for the one that left (the pong orders after anything queued before).
            #expect(try leaving.request(["op": "ping"], id: 6).type == "pong")
            let leftovers = leaving.drain().filter { $0["trip"] as? String == "unsub" }
            #expect(leftovers.isEmpty, "got \(leftovers) after unsubscribing")
        }
    }

    @Test func eventCarriesTripNNameTAndTheMarkerPosition() throws {
        try withTestHub { hub, clients in
            let viewer = try clients.connect()
            try viewer.subscribe("created-event", id: 1)
            try hub.createLisbonTrip("created-event")
            let event = try viewer.next(type: "event")
            #expect(event["trip"] as? String == "created-event")
            #expect(event.int("n") == 1)
            #expect(event.name == "trip_created")
            #expect(event["t"] is Int)
            #expect(event["lat"] is NSNull && event["lon"] is NSNull, "no marker yet")
        }
    }
}
