import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// The transport rules of PROTOCOL sections 1, 3 and 4 that need no trip.
@Suite struct WireBasicsTests {
    @Test func pingIsAnsweredWithPongCarryingTheHubClockAndTheRequestID() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            let before = nowMillis()
            let pong = try connection.request(["op": "ping"], id: 7)
            #expect(pong["type"] as? String == "pong")
            #expect(pong["re"] as? Int == 7)
            let t = try #require(pong["t"] as? Int64)
            #expect(t >= before - 1000 && t <= nowMillis() + 1000)
        }
    }

    @Test func helloIsAnsweredWithWelcomeNamingProtocolAndRates() throws {
        try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
            let connection = try clients.connect()
            try connection.send(["op": "hello", "id": "greeting"])
            let welcome = try connection.next(type: "welcome")
            #expect(welcome["re"] as? String == "greeting")
            #expect(welcome["protocol"] as? Int == 1)
            #expect(welcome["tick_hz"] as? Int == 20)
            #expect(welcome["fleet_hz"] as? Double == 1)
            #expect(welcome["session"] is String)
        }
    }

    @Test func clientOfferingNoSubprotocolIsAccepted() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect(offerSubprotocol: false)
            #expect(try connection.request(["op": "ping"], id: 1)["type"] as? String == "pong")
        }
    }

    @Test func upgradeOnAnotherPathIsRefused() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connectNoWait(path: "/elsewhere")
            _ = try connection.waitClosed()
            #expect(connection.closeInfo != nil)
        }
    }

    @Test func browserOriginOtherThanHostIsRefusedUnlessAllowed() throws {
        try withTestHub { hub, clients in
            // libwebsockets' client puts "http://" in front of the origin it is given.
            let foreign = try clients.connectNoWait(origin: "evil.example")
            _ = try foreign.waitClosed()
            let own = try clients.connect(origin: "127.0.0.1:\(hub.port)")
            #expect(try own.request(["op": "ping"], id: 1)["type"] as? String == "pong")
        }
        try withTestHub(configure: { $0.allowOrigins = ["*"] }) { _, clients in
            let anyOrigin = try clients.connect(origin: "evil.example")
            #expect(try anyOrigin.request(["op": "ping"], id: 2)["type"] as? String == "pong")
        }
    }

    @Test func invalidJSONGetsBadRequestAndTheConnectionCarriesOn() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            connection.sendText("{not json")
            let error = try connection.next(type: "error")
            #expect(error["code"] as? String == "bad_request")
            #expect(try connection.request(["op": "ping"], id: 2)["type"] as? String == "pong")
        }
    }

    @Test func unknownOpGetsBadRequestNamingTheOp() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            let error = try connection.request(["op": "teleport"], id: 3)
            #expect(error["type"] as? String == "error")
            #expect(error["code"] as? String == "bad_request")
            #expect((error["message"] as? String)?.contains("teleport") == true)
        }
    }

    @Test func messageOverTheSizeLimitClosesWith1009() throws {
        try withTestHub(configure: { $0.maxMessageBytes = 1024 }) { hub, clients in
            let connection = try clients.connect()
            connection.sendText(#"{"op":"ping","pad":""# + String(repeating: "x", count: 2000) + #""}"#)
            #expect(try connection.waitClosed() == 1009)
        }
    }

    @Test func subscribeToATripThatDoesNotExistAnswersAnUnknownSnapshot() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            let snapshot = try connection.request(["op": "subscribe", "trip": "nobody-yet"], id: 1)
            #expect(snapshot["type"] as? String == "snapshot")
            #expect(snapshot["status"] as? String == "unknown")
            #expect(snapshot["leg"] as? Int == 0)
            #expect(snapshot["last_event"] as? Int == 0)
            #expect((snapshot["waypoints"] as? [Any])?.isEmpty == true)
            #expect((snapshot["trail"] as? [Any])?.isEmpty == true)
            for field in ["rider", "config", "route", "destination", "position", "bearing", "progress", "done_m", "remaining_m", "eta_s"] {
                #expect(snapshot[field] is NSNull, "\(field) should be null")
            }
        }
    }

    @Test func unsubscribeAnswersUnsubscribedWhetherOrNotSubscribed() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            let reply = try connection.request(["op": "unsubscribe", "trip": "never"], id: 4)
            #expect(reply["type"] as? String == "unsubscribed")
            #expect(reply["trip"] as? String == "never")
        }
    }

    @Test func healthzIsOkAndMetricsArePrometheusText() throws {
        try withTestHub { hub, _ in
            let (status, health) = try hub.httpJSON("GET", "/healthz")
            #expect(status == 200)
            #expect(health["status"] as? String == "ok")
            let (metricsStatus, body) = try hub.http("GET", "/metrics")
            #expect(metricsStatus == 200)
            let text = String(decoding: body, as: UTF8.self)
            for name in ["trackhub_connections", "trackhub_subscriptions", "trackhub_fixes_in_total", "trackhub_frames_out_total", "trackhub_bytes_out_total", "trackhub_frames_dropped_total", "trackhub_tick_duration_seconds_count"] {
                #expect(text.contains("\n\(name) ") || text.hasPrefix("\(name) ") || text.contains("# TYPE \(name) "), "missing \(name)")
            }
        }
    }

    @Test func unknownRoutesAndTripsAre404WithAnErrorBody() throws {
        try withTestHub { hub, _ in
            let (status, json) = try hub.httpJSON("GET", "/v1/trips/missing")
            #expect(status == 404)
            let error = try #require(json["error"] as? [String: Any])
            #expect(error["code"] as? String == "not_found")
            #expect(try hub.httpJSON("GET", "/v1/nothing").status == 404)
        }
    }
}
