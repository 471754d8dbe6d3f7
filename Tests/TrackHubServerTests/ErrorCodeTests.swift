import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// Every error code reachable on an open hub (PROTOCOL sections 1, 3, 4, 5 and 7):
/// bad_request, not_found, conflict, too_large, rate_limited and unavailable, on the
/// wire and over HTTP, each with its HTTP status and a message naming what was wrong.
@Suite struct ErrorCodeTests {
    @Test func fixForATripThatDoesNotExistIsNotFound() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            var courier = Courier(trip: "nowhere")
            let error = try connection.request(courier.fix(alongM: 0), id: 1)
            #expect(error.type == "error")
            #expect(error["code"] as? String == "not_found")
            #expect((error["message"] as? String)?.contains("nowhere") == true)
            #expect(try connection.request(["op": "ping"], id: 2).type == "pong")
        }
    }

    @Test func subscriptionsPastTheLimitAreTooLargeButResubscribingIsNot() throws {
        try withTestHub(configure: { $0.maxSubscriptions = 2 }) { hub, clients in
            let connection = try clients.connect()
            try connection.subscribe("s1", id: 1)
            try connection.subscribe("s2", id: 2)
            let error = try connection.request(["op": "subscribe", "trip": "s3"], id: 3)
            #expect(error.type == "error")
            #expect(error["code"] as? String == "too_large")
            #expect((error["message"] as? String)?.contains("subscri") == true)
            // Subscribing again to one already followed does not count twice.
            try connection.subscribe("s1", id: 4, ["mode": "segments"])
            // Room again after an unsubscribe.
            #expect(try connection.request(["op": "unsubscribe", "trip": "s2"], id: 5).type == "unsubscribed")
            try connection.subscribe("s3", id: 6)
            // The limit is per connection.
            let other = try clients.connect()
            try other.subscribe("s3", id: 7)
        }
    }

    @Test func aRouteOverMaxRoutePointsIsTooLargeNamingRoute() throws {
        try withTestHub(configure: { $0.maxRoutePoints = 10 }) { hub, _ in
            let (status, json) = try hub.httpJSON("POST", "/v1/trips", json: ["id": "long", "route": Lisbon.route(points: 11)])
            #expect(status == 413)
            let error = TestHub.errorOf(json)
            #expect(error.code == "too_large")
            #expect(error.message.contains("route"))
            try hub.createLisbonTrip("short", points: 10)
            let (rerouteStatus, reroute) = try hub.httpJSON("PUT", "/v1/trips/short/route", json: ["route": Lisbon.route(points: 11)])
            #expect(rerouteStatus == 413)
            #expect(TestHub.errorOf(reroute).message.contains("route"))
            let (polyStatus, poly) = try hub.httpJSON("POST", "/v1/trips", json: ["id": "long-poly", "route_polyline": encodePolyline(Lisbon.route(points: 11))])
            #expect(polyStatus == 413)
            #expect(TestHub.errorOf(poly).message.contains("route_polyline"))
        }
    }

    @Test func tooManyWaypointsAreTooLargeNamingWaypoints() throws {
        try withTestHub(configure: { $0.maxWaypoints = 2 }) { hub, _ in
            let waypoints = [300.0, 600, 900].map { Lisbon.point(alongM: $0) }
            let (status, json) = try hub.httpJSON("POST", "/v1/trips", json: ["id": "stops", "route": Lisbon.route(), "waypoints": waypoints])
            #expect(status == 413)
            #expect(TestHub.errorOf(json).code == "too_large")
            #expect(TestHub.errorOf(json).message.contains("waypoints"))
        }
    }

    @Test func anHTTPBodyOverTheLimitIs413() throws {
        try withTestHub(configure: { $0.maxBodyBytes = 2048 }) { hub, _ in
            let (status, json) = try hub.httpJSON("POST", "/v1/trips", json: ["id": "big", "route": Lisbon.route(points: 400)])
            #expect(status == 413)
            #expect(TestHub.errorOf(json).code == "too_large")
            #expect(try hub.httpJSON("GET", "/v1/trips/big").status == 404)
        }
    }

    @Test func fixesFasterThanMaxFixRateAreRateLimited() throws {
        try withTestHub(configure: { $0.maxFixRate = 2 }) { hub, clients in
            try hub.createLisbonTrip("eager")
            let connection = try clients.connect()
            var courier = Courier(trip: "eager")
            for i in 1...5 {
                var fix = courier.fix(alongM: Double(i) * 20)
                fix["id"] = i
                try connection.send(fix)
            }
            let replies = try (1...5).map { (i: Int) in try connection.next("reply \(i)") { $0.int("re") == i } }
            let limited = replies.filter { $0["code"] as? String == "rate_limited" }
            #expect(replies.first?.type == "ack", "the first fix is within the rate")
            #expect(!limited.isEmpty, "five fixes at once on a 2/s connection")
            #expect(limited.allSatisfy { ($0["message"] as? String)?.contains("fix") == true })
            #expect(replies.allSatisfy { $0.type == "ack" || $0["code"] as? String == "rate_limited" })
            // The connection stays open and the refused fixes were not stored.
            #expect(try connection.request(["op": "ping"], id: 9).type == "pong")
            let (_, trail) = try hub.httpJSON("GET", "/v1/trips/eager/trail")
            let stored = ((trail["properties"] as? [String: Any])?["ts"] as? [Any])?.count
            #expect(stored == replies.count - limited.count)
        }
    }

    @Test func whileTheStoreCannotCommitFixesGetUnavailableAndNeverAnAck() throws {
        try withTestHub { hub, clients in
            try hub.createLisbonTrip("fragile")
            let viewer = try clients.connect()
            try viewer.subscribe("fragile", id: 1)
            let connection = try clients.connect()
            var courier = Courier(trip: "fragile")
            try connection.sendFix(courier.fix(alongM: 100), id: 1)
            #expect(try hub.httpJSON("GET", "/healthz").status == 200)

            hub.store.setFailing(true)
            let failed = courier.fix(alongM: 200)
            let error = try connection.request(failed, id: 2)
            #expect(error.type == "error")
            #expect(error["code"] as? String == "unavailable")
            let (healthStatus, health) = try hub.httpJSON("GET", "/healthz")
            #expect(healthStatus == 503)
            #expect(health["status"] as? String == "unavailable")
            let (batchStatus, batch) = try hub.httpJSON("POST", "/v1/trips/fragile/fixes", json: ["fixes": [courier.fix(alongM: 250, trip: false)]])
            #expect(batchStatus == 503)
            #expect(TestHub.errorOf(batch).code == "unavailable")
            let (createStatus, _) = try hub.httpJSON("POST", "/v1/trips", json: ["id": "never", "route": Lisbon.route()])
            #expect(createStatus == 503)

            hub.store.setFailing(false)
            #expect(try hub.httpJSON("GET", "/healthz").status == 200)
            #expect(try hub.httpJSON("GET", "/v1/trips/never").status == 404, "a create that was not stored did not happen")
            #expect(try connection.request(["op": "ping"], id: 4).type == "pong")
            let acks = connection.drain().filter { $0.type == "ack" }
            #expect(acks.isEmpty, "no ack for a fix that was not stored: \(acks)")
            #expect(try viewer.request(["op": "ping"], id: 5).type == "pong")
            let shown = viewer.drain().filter { $0.type == "event" }
            #expect(shown.isEmpty, "nothing that was not stored is shown: \(shown)")
            // Fixes are acked again once the store commits.
            let next = try connection.sendFix(courier.fix(alongM: 300), id: 6)
            #expect(next["applied"] as? Bool == true)
        }
    }

    /// PROTOCOL 7: only a stored fix is a `duplicate` when resent; one answered `unavailable`
    /// was not stored, so the courier's resend must be stored (and applied) then.
    @Test func aFixAnsweredUnavailableIsNewWhenResent() throws {
        try withTestHub { hub, clients in
            try hub.createLisbonTrip("resent")
            let connection = try clients.connect()
            var courier = Courier(trip: "resent")
            try connection.sendFix(courier.fix(alongM: 100), id: 1)
            hub.store.setFailing(true)
            let failed = courier.fix(alongM: 200)
            #expect(try connection.request(failed, id: 2)["code"] as? String == "unavailable")
            hub.store.setFailing(false)
            let retried = try connection.sendFix(failed, id: 3)
            #expect(retried["applied"] as? Bool == true, "\(retried)")
            let (_, trail) = try hub.httpJSON("GET", "/v1/trips/resent/trail")
            #expect(((trail["properties"] as? [String: Any])?["ts"] as? [Any])?.count == 2)
        }
    }

    /// PROTOCOL 7: a command that cannot be stored gets `unavailable` and changes nothing.
    @Test func anEndThatCouldNotBeStoredLeavesTheTripRunning() throws {
        try withTestHub { hub, clients in
            try hub.createLisbonTrip("unended")
            let viewer = try clients.connect()
            try viewer.subscribe("unended", id: 1)
            hub.store.setFailing(true)
            let (failedStatus, failed) = try hub.httpJSON("DELETE", "/v1/trips/unended")
            #expect(failedStatus == 503)
            #expect(TestHub.errorOf(failed).code == "unavailable")
            hub.store.setFailing(false)
            let (_, trip) = try hub.httpJSON("GET", "/v1/trips/unended")
            let (endStatus, _) = try hub.httpJSON("DELETE", "/v1/trips/unended")
            #expect(endStatus == 200)
            // The event is queued before the HTTP answer; the pong comes after it.
            #expect(try viewer.request(["op": "ping"], id: 2).type == "pong")
            let events = viewer.drain().filter { $0.type == "event" }
            #expect(trip["status"] as? String == "pending")
            #expect(events.map(\.name) == ["ended"])
        }
    }

    @Test func errorsAreCountedByCodeInMetrics() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            connection.sendText("[]")
            #expect(try connection.next(type: "error")["code"] as? String == "bad_request")
            try connection.send(["op": "proceed", "trip": "absent"])
            #expect(try connection.next(type: "error")["code"] as? String == "not_found")
            let (_, body) = try hub.http("GET", "/metrics")
            let text = String(decoding: body, as: UTF8.self)
            #expect(text.contains(#"trackhub_errors_out_total{code="bad_request"} 1"#))
            #expect(text.contains(#"trackhub_errors_out_total{code="not_found"} 1"#))
        }
    }

    /// A store read that fails is an error, never an answer that hides it: a subscribe gets
    /// `unavailable` (not a snapshot without its trail, nor `recovered: true` without the
    /// events), `GET /v1/trips/{id}` 503; the hub carries on once reads work again.
    @Test func aFailedStoreReadIsAnsweredUnavailable() throws {
        try withTestHub { hub, clients in
            try hub.createLisbonTrip("unread")
            let viewer = try clients.connect()
            hub.store.setReadsFailing(true)
            let refused = try viewer.request(["op": "subscribe", "trip": "unread"], id: 1)
            #expect(refused.type == "error")
            #expect(refused["code"] as? String == "unavailable")
            let resumed = try viewer.request(["op": "subscribe", "trip": "unread", "since_event": 0], id: 2)
            #expect(resumed.type == "error", "no recovered snapshot without the events: \(resumed)")
            let (status, body) = try hub.httpJSON("GET", "/v1/trips/unread")
            #expect(status == 503)
            #expect(TestHub.errorOf(body).code == "unavailable")

            hub.store.setReadsFailing(false)
            #expect(try viewer.request(["op": "subscribe", "trip": "unread"], id: 3).type == "snapshot")
            #expect(try hub.httpJSON("GET", "/v1/trips/unread").status == 200)
        }
    }
}
