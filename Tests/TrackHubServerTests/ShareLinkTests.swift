import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// PROTOCOL 13: share links, what a share token sees, the end at arrival, revocation.
@Suite struct ShareLinkTests {
    static let secret = "share-links-s3cret"
    static var admin: [String: String] {
        bearer(JWT.mint(TokenClaims(subject: "a", expiresAt: Int64(Date().timeIntervalSince1970) + 3600, scopes: [.admin], trips: nil), secret: secret))
    }
    /// A 200 m street: a fix at 180 m arrives (within the default 50 m buffer).
    static let shortRoute: [[Double]] = [[Lisbon.lon, Lisbon.southLat], [Lisbon.lon, Lisbon.lat(alongM: 200)]]

    /// `withTestHub` on a hub with a JWT secret and trips S1 and S2.
    func withSecuredHub(_ body: (TestHub, TestHubClients) throws -> Void) throws {
        try withTestHub(configure: { $0.jwtSecret = Self.secret }) { hub, clients in
            for id in ["S1", "S2"] {
                let (status, json) = try hub.httpJSON(
                    "POST", "/v1/trips", json: ["id": id, "route": Self.shortRoute, "rider": ["id": "r-7", "name": "Alex", "phone": "+351"]],
                    headers: Self.admin)
                #expect(status == 201, "setup: \(status) \(json)")
            }
            try body(hub, clients)
        }
    }

    func share(_ hub: TestHub, _ trip: String, _ body: [String: Any]? = nil) throws -> [String: Any] {
        let (status, json) = try hub.httpJSON("POST", "/v1/trips/\(trip)/share", json: body, headers: Self.admin)
        #expect(status == 201, "share answered \(status) \(json)")
        return json
    }

    @Test func anOpenHubIssuesNoLinksAndSaysWhy() throws {
        try withTestHub { hub, _ in
            _ = try hub.createLisbonTrip("O1")
            let (status, json) = try hub.httpJSON("POST", "/v1/trips/O1/share", json: [:])
            #expect(status == 409)
            #expect(TestHub.errorOf(json).message.contains("--jwt-secret"), "\(json)")
            #expect(try hub.httpJSON("DELETE", "/v1/shares/abc").status == 409)
        }
    }

    @Test func shareAnswersATokenForTheTripWithAJtiAndItsExpiry() throws {
        try withSecuredHub { hub, _ in
            let before = nowMillis()
            let body = try share(hub, "S1", ["ttl_s": 600])
            let token = try #require(body["token"] as? String)
            let jti = try #require(body["jti"] as? String)
            #expect(body["url"] as? String == "/t/\(token)")
            let expiresAt = try #require(body["expires_at"] as? Int64 ?? (body["expires_at"] as? Int).map(Int64.init))
            #expect(expiresAt >= before / 1000 * 1000 + 599_000 && expiresAt <= nowMillis() + 601_000)
            let claims = try JWT.verify(token, secret: Self.secret, nowMs: nowMillis()).get()
            #expect(claims.scopes == [.share] && claims.trips == ["S1"] && claims.jti == jti)
            // The default is a day; more than 30 days, a fraction, or an unknown trip are refused.
            let day = try share(hub, "S1")
            let dayExpiry = (day["expires_at"] as? Int64) ?? Int64(day["expires_at"] as? Int ?? 0)
            #expect(abs(dayExpiry - nowMillis() - 86_400_000) < 5_000)
            #expect(try hub.httpJSON("POST", "/v1/trips/S1/share", json: ["ttl_s": 2_592_001], headers: Self.admin).status == 400)
            #expect(try hub.httpJSON("POST", "/v1/trips/S1/share", json: ["ttl_s": 1.5], headers: Self.admin).status == 400)
            #expect(try hub.httpJSON("POST", "/v1/trips/NOPE/share", json: [:], headers: Self.admin).status == 404)
            // Only admin issues and revokes.
            #expect(try hub.httpJSON("POST", "/v1/trips/S1/share", json: [:], headers: bearer(token)).status == 403)
            #expect(try hub.httpJSON("DELETE", "/v1/shares/\(jti)", headers: bearer(token)).status == 403)
        }
    }

    @Test func aShareTokenSeesItsTripAsACustomerAndNothingElse() throws {
        try withSecuredHub { hub, clients in
            let token = try #require(try share(hub, "S1")["token"] as? String)
            let (status, trip) = try hub.httpJSON("GET", "/v1/trips/S1", headers: bearer(token))
            #expect(status == 200)
            #expect(trip["rider"] as? [String: String] == ["name": "Alex"], "\(trip)")
            #expect(trip["config"] is NSNull && (trip["trail"] as? [Any])?.isEmpty == true && trip["route"] is [Any])
            #expect(try hub.httpJSON("GET", "/v1/trips/S1/trail", headers: bearer(token)).status == 403)
            #expect(try hub.httpJSON("GET", "/v1/trips/S2", headers: bearer(token)).status == 403)
            #expect(try hub.httpJSON("GET", "/v1/fleet/clusters?zoom=3", headers: bearer(token)).status == 403)
            let (_, list) = try hub.httpJSON("GET", "/v1/trips", headers: bearer(token))
            let listed = list["trips"] as? [[String: Any]] ?? []
            #expect(listed.map { $0["trip"] as? String } == ["S1"] && listed.first?["rider"] as? [String: String] == ["name": "Alex"])

            let customer = try clients.connect(path: "/v1/ws?token=\(token)")
            let snapshot = try customer.subscribe("S1", id: 1)
            #expect(snapshot["rider"] as? [String: String] == ["name": "Alex"] && snapshot["config"] is NSNull)
            #expect(try customer.request(["op": "subscribe", "trip": "S2"], id: 2)["code"] as? String == "forbidden")
            #expect(try customer.request(["op": "viewport", "bbox": [-10, 38, -9, 39], "zoom": 10], id: 3)["code"] as? String == "forbidden")
            #expect(try customer.request(["op": "proceed", "trip": "S1"], id: 4)["code"] as? String == "forbidden")
        }
    }

    @Test func afterArrivalTheShareSubscriberGetsTheLastFrameThenUnsubscribedAndNoPosition() throws {
        try withSecuredHub { hub, clients in
            let token = try #require(try share(hub, "S1")["token"] as? String)
            let customer = try clients.connect(path: "/v1/ws?token=\(token)")
            let viewerToken = JWT.mint(TokenClaims(subject: "v", expiresAt: Int64(Date().timeIntervalSince1970) + 600, scopes: [.viewer], trips: ["S1"]), secret: Self.secret)
            let viewer = try clients.connect(path: "/v1/ws?token=\(viewerToken)")
            try customer.subscribe("S1", id: 1)
            try viewer.subscribe("S1", id: 1)
            let courierToken = JWT.mint(TokenClaims(subject: "c", expiresAt: Int64(Date().timeIntervalSince1970) + 600, scopes: [.courier], trips: ["S1"]), secret: Self.secret)
            let courier = try clients.connect(path: "/v1/ws?token=\(courierToken)")
            var device = Courier(trip: "S1")
            try courier.sendFix(device.fix(alongM: 0), id: 10)
            try courier.sendFix(device.fix(alongM: 180, durationMs: 1500), id: 11)

            let stream = try customer.collect("unsubscribed") { $0.type == "unsubscribed" }
            #expect(stream.last?["reason"] as? String == "arrived" && stream.last?["trip"] as? String == "S1")
            let arrivedAt = try #require(stream.firstIndex { $0.type == "event" && $0.name == "arrived" }, "no arrived event in \(stream)")
            let lastFrame = try #require(stream.last { $0.type == "frame" })
            #expect(abs(lastFrame.double("lat")! - Lisbon.lat(alongM: 200)) < 1e-6, "last frame \(lastFrame)")
            #expect(lastFrame.int("remaining_m") == 0 || lastFrame.double("remaining_m") == 0)
            #expect(stream.lastIndex { $0.type == "frame" }! > arrivedAt || lastFrame["status"] as? String == "arrived")

            // From then on: a snapshot with the status, without the rider's position; then the end.
            let (_, trip) = try hub.httpJSON("GET", "/v1/trips/S1", headers: bearer(token))
            #expect(trip["status"] as? String == "arrived" && trip["position"] is NSNull && trip["bearing"] is NSNull, "\(trip)")
            let again = try customer.subscribe("S1", id: 2)
            #expect(again["position"] is NSNull && (again["trail"] as? [Any])?.isEmpty == true)
            #expect(try customer.next(type: "unsubscribed")["reason"] as? String == "arrived")
            // A viewer still follows the trip (and sees where the marker is).
            let (_, whole) = try hub.httpJSON("GET", "/v1/trips/S1", headers: bearer(viewerToken))
            #expect(whole["position"] is [String: Any])
            #expect(try viewer.request(["op": "ping"], id: 5)["type"] as? String == "pong")
            #expect(!(viewer.drain().contains { $0.type == "unsubscribed" }))
        }
    }

    @Test func revokingEndsSubscriptionsAtOnceAndTheTokenIsRefused() throws {
        try withSecuredHub { hub, clients in
            let body = try share(hub, "S1")
            let token = try #require(body["token"] as? String)
            let jti = try #require(body["jti"] as? String)
            let customer = try clients.connect(path: "/v1/ws?token=\(token)")
            try customer.subscribe("S1", id: 1)

            let (status, revoked) = try hub.httpJSON("DELETE", "/v1/shares/\(jti)", headers: Self.admin)
            #expect(status == 200 && revoked["jti"] as? String == jti && revoked["revoked"] as? Bool == true)
            let end = try customer.next(type: "unsubscribed")
            #expect(end["reason"] as? String == "revoked" && end["trip"] as? String == "S1")
            // The connection stays open; what needs the token is unauthorized.
            #expect(try customer.request(["op": "ping"], id: 2)["type"] as? String == "pong")
            #expect(try customer.request(["op": "subscribe", "trip": "S1"], id: 3)["code"] as? String == "unauthorized")
            #expect(try customer.request(["op": "hello", "token": token], id: 4)["code"] as? String == "unauthorized")
            #expect(try hub.httpJSON("GET", "/v1/trips/S1", headers: bearer(token)).status == 401)
            #expect(try RawWire.upgradeStatus(port: hub.port, path: "/v1/ws?token=\(token)") == 401)
            // Again: the same answer; an unknown jti: 404.
            #expect(try hub.httpJSON("DELETE", "/v1/shares/\(jti)", headers: Self.admin).status == 200)
            #expect(try hub.httpJSON("DELETE", "/v1/shares/never-issued", headers: Self.admin).status == 404)
            // Another link for the same trip still works.
            let other = try #require(try share(hub, "S1")["token"] as? String)
            #expect(try hub.httpJSON("GET", "/v1/trips/S1", headers: bearer(other)).status == 200)
        }
    }

    @Test func aShareTokenWithoutJtiOrForSeveralTripsSeesNothing() throws {
        try withSecuredHub { hub, _ throws in
            let exp = Int64(Date().timeIntervalSince1970) + 600
            let noJTI = JWT.mint(TokenClaims(subject: nil, expiresAt: exp, scopes: [.share], trips: ["S1"]), secret: Self.secret)
            #expect(try hub.httpJSON("GET", "/v1/trips/S1", headers: bearer(noJTI)).status == 401)
            let star = JWT.mint(TokenClaims(subject: nil, expiresAt: exp, scopes: [.share], trips: nil, jti: "x1"), secret: Self.secret)
            #expect(try hub.httpJSON("GET", "/v1/trips/S1", headers: bearer(star)).status == 403)
            let two = JWT.mint(TokenClaims(subject: nil, expiresAt: exp, scopes: [.share], trips: ["S1", "S2"], jti: "x2"), secret: Self.secret)
            #expect(try hub.httpJSON("GET", "/v1/trips/S1", headers: bearer(two)).status == 403)
        }
    }
}
