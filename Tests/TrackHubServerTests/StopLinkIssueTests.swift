import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// PROTOCOL 17: `POST /v1/trips/{id}/share` with `stop` and `visible_within_stops`.
@Suite struct StopLinkIssueTests {
    typealias Links = ShareLinkTests

    @Test func aLinkForTheDestinationCarriesItsClaims() throws {
        try Links().withSecuredHub { hub, _ in
            let body = try Links().share(hub, "S1", ["stop": "destination", "visible_within_stops": 3])
            let token = try #require(body["token"] as? String)
            let claims = try JWT.verify(token, secret: Links.secret, nowMs: nowMillis()).get()
            #expect(claims.stop == "destination" && claims.visibleWithinStops == 3)
            let plain = try #require(try Links().share(hub, "S1")["token"] as? String)
            #expect(try JWT.verify(plain, secret: Links.secret, nowMs: nowMillis()).get().stop == nil)
        }
    }

    @Test func anUnknownStopOrABadCountIsABadRequestNamingIt() throws {
        try Links().withSecuredHub { hub, _ in
            for (body, field) in [(["stop": "no-such-stop"] as [String: Any], "stop"), (["stop": 7], "stop"),
                                  (["stop": "destination", "visible_within_stops": 101], "visible_within_stops")] {
                let (status, json) = try hub.httpJSON("POST", "/v1/trips/S1/share", json: body, headers: Links.admin)
                #expect(status == 400, "\(body): \(status)")
                #expect(TestHub.errorOf(json).message.contains(field), "\(json)")
            }
        }
    }

    @Test func aLinkForAWaypointByItsIDCarriesItAndAnUnknownIDIsRefused() throws {
        try Links().withSecuredHub { hub, _ in
            let (created, json) = try hub.httpJSON(
                "POST", "/v1/trips",
                json: ["id": "W1", "route": Links.shortRoute, "rider": ["name": "Alex"],
                       "waypoints": [["lat": Lisbon.lat(alongM: 100), "lon": Lisbon.lon, "id": "order-7"]]],
                headers: Links.admin)
            #expect(created == 201, "\(json)")
            let token = try #require(try Links().share(hub, "W1", ["stop": "order-7", "visible_within_stops": 1])["token"] as? String)
            let claims = try JWT.verify(token, secret: Links.secret, nowMs: nowMillis()).get()
            #expect(claims.stop == "order-7" && claims.visibleWithinStops == 1)
            let (status, refused) = try hub.httpJSON("POST", "/v1/trips/W1/share", json: ["stop": "order-8"], headers: Links.admin)
            #expect(status == 400 && TestHub.errorOf(refused).message.contains("stop"), "\(refused)")
        }
    }

    /// A stop link's GET answers its own view and it lists nothing; its subscribe gets the
    /// same view followed by a `stop` message, and naming another stop is refused.
    @Test func aStopLinkGetsItsOwnViewLiveAndOnlyItsStop() throws {
        try Links().withSecuredHub { hub, clients in
            let (created, json) = try hub.httpJSON(
                "POST", "/v1/trips",
                json: ["id": "W1", "route": Links.shortRoute, "rider": ["id": "r-7", "name": "Alex"],
                       "waypoints": [["lat": Lisbon.lat(alongM: 100), "lon": Lisbon.lon, "id": "order-7"]]],
                headers: Links.admin)
            #expect(created == 201, "\(json)")
            let stopToken = try #require(try Links().share(hub, "W1", ["stop": "destination"])["token"] as? String)
            let (status, body) = try hub.httpJSON("GET", "/v1/trips/W1", headers: bearer(stopToken))
            #expect(status == 200, "\(body)")
            #expect((body["waypoints"] as? [Any])?.isEmpty == true, "\(body)")
            #expect(body["rider"] as? [String: String] == ["name": "Alex"])
            #expect((body["stop"] as? [String: Any])?["id"] as? String == "destination")
            let (_, list) = try hub.httpJSON("GET", "/v1/trips", headers: bearer(stopToken))
            #expect((list["trips"] as? [Any])?.isEmpty == true, "\(list)")
            let customer = try clients.connect(path: "/v1/ws?token=\(stopToken)")
            let refusal = try customer.request(["op": "subscribe", "trip": "W1", "stop": "order-7"], id: 1)
            #expect(refusal["code"] as? String == "forbidden" && (refusal["message"] as? String)?.hasPrefix("stop:") == true, "\(refusal)")
            let snapshot = try customer.request(["op": "subscribe", "trip": "W1"], id: 2)
            #expect(snapshot["type"] as? String == "snapshot" && (snapshot["waypoints"] as? [Any])?.isEmpty == true, "\(snapshot)")
            #expect((snapshot["stop"] as? [String: Any])?["stops_before"] as? Int == 1, "\(snapshot)")
            let stop = try customer.next(type: "stop")
            #expect(stop["stop"] as? String == "destination" && stop["stops_before"] as? Int == 1, "\(stop)")
            #expect(stop["visible"] as? Bool == false && stop["eta_s"] is NSNull, "\(stop)")
        }
    }
}
