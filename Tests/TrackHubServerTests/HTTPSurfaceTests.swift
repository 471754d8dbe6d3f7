import Foundation
import Testing
import TrackHubProtocol
@testable import TrackHubServer
import TrackHubTesting

/// PROTOCOL 14 on a real hub: CORS, 405 with Allow, Location on 201, the trail's formats,
/// the API description without a token.
@Suite struct HTTPSurfaceTests {
    static let secret = "surface-s3cret-surface-s3cret-32"
    static let shop = "http://shop.example"

    func admin() -> [String: String] {
        bearer(JWT.mint(TokenClaims(subject: "a", expiresAt: Int64(Date().timeIntervalSince1970) + 3600, scopes: [.admin], trips: nil), secret: Self.secret))
    }

    func exchange(_ hub: TestHub, _ method: String, _ path: String, json: Any? = nil, headers: [String: String] = [:]) throws -> (status: Int, headers: [String: String], body: Data) {
        try HTTPTestClient.exchange(port: hub.port, method: method, path: path, json: json, headers: headers)
    }

    @Test func preflightNeedsNoTokenAndAllowedOriginsGetCORSHeaders() throws {
        try withTestHub(configure: { $0.jwtSecret = Self.secret; $0.allowOrigins = [Self.shop] }) { hub, _ in
            let preflight = try exchange(hub, "OPTIONS", "/v1/trips/T1", headers: [
                "Origin": Self.shop, "Access-Control-Request-Method": "DELETE", "Access-Control-Request-Headers": "authorization"])
            #expect(preflight.status == 204)
            #expect(preflight.headers["access-control-allow-origin"] == Self.shop)
            #expect(preflight.headers["vary"] == "Origin")
            #expect(preflight.headers["access-control-allow-methods"] == "GET, DELETE")
            #expect(preflight.headers["access-control-allow-headers"] == "Authorization, Content-Type")
            #expect(preflight.headers["access-control-max-age"] == "600")
            // An answer to the real request carries them too, a refusal from the headers (401) included.
            let created = try exchange(hub, "POST", "/v1/trips", json: ["id": "T1", "route": authTestRoute], headers: admin().merging(["Origin": Self.shop]) { a, _ in a })
            #expect(created.status == 201)
            #expect(created.headers["access-control-allow-origin"] == Self.shop)
            let refused = try exchange(hub, "POST", "/v1/trips", json: ["route": authTestRoute], headers: ["Origin": Self.shop])
            #expect(refused.status == 401)
            #expect(refused.headers["access-control-allow-origin"] == Self.shop)
            // No Origin: no CORS headers. Another origin: 403, none.
            #expect(try exchange(hub, "GET", "/v1/trips", headers: admin()).headers["access-control-allow-origin"] == nil)
            let other = try exchange(hub, "OPTIONS", "/v1/trips", headers: ["Origin": "http://evil.example"])
            #expect(other.status == 403)
            #expect(other.headers["access-control-allow-origin"] == nil)
            // OPTIONS on an unknown path is a 404, not a 401.
            #expect(try exchange(hub, "OPTIONS", "/v1/nothing").status == 404)
        }
    }

    @Test func wrongMethodIs405WithAllowAndCreatedHasLocation() throws {
        try withTestHub { hub, _ in
            let created = try exchange(hub, "POST", "/v1/trips", json: ["id": "L1", "route": authTestRoute])
            #expect(created.status == 201)
            #expect(created.headers["location"] == "/v1/trips/L1")
            #expect(try hub.httpJSON("GET", created.headers["location"] ?? "/").status == 200)
            for (method, path, allow) in [("PATCH", "/v1/trips", "GET, POST, OPTIONS"), ("POST", "/v1/trips/L1", "GET, DELETE, OPTIONS"),
                                          ("GET", "/v1/trips/L1/proceed", "POST, OPTIONS"), ("DELETE", "/v1/openapi.json", "GET, OPTIONS")] {
                let answer = try exchange(hub, method, path)
                #expect(answer.status == 405, "\(method) \(path)")
                #expect(answer.headers["allow"] == allow, "\(method) \(path)")
                let message = ((try? JSONSerialization.jsonObject(with: answer.body)) as? [String: [String: String]])?["error"]?["message"] ?? ""
                #expect(message.contains(method), "\(message)")
            }
        }
    }

    @Test func trailComesAsGeoJSONGPXOrCSV() throws {
        try withTestHub { hub, _ in
            try hub.createTrip(["id": "X1", "route": authTestRoute])
            let ts = nowMillis() - 120_000
            let fixes: [[String: Any]] = [
                ["lat": 38.7158, "lon": -9.1420, "ts": ts, "seq": 1],
                ["lat": 38.7170, "lon": -9.1390, "ts": ts + 60_000, "seq": 2],
                ["lat": 38.7170, "lon": -9.1390, "ts": ts + 60_000, "seq": 2],
            ]
            #expect(try hub.httpJSON("POST", "/v1/trips/X1/fixes", json: ["fixes": fixes]).status == 200)
            let geo = try exchange(hub, "GET", "/v1/trips/X1/trail")
            #expect(geo.headers["content-type"] == "application/geo+json")
            let gpx = try exchange(hub, "GET", "/v1/trips/X1/trail?format=gpx")
            #expect(gpx.status == 200)
            #expect(gpx.headers["content-type"] == "application/gpx+xml")
            let gpxText = String(decoding: gpx.body, as: UTF8.self)
            #expect(gpxText.components(separatedBy: "<trkpt ").count - 1 == 2)
            #expect(gpxText.contains("<trkpt lat=\"38.7158\" lon=\"-9.142\"><time>\(TrailExport.iso8601(millis: ts))</time></trkpt>"))
            let csv = try exchange(hub, "GET", "/v1/trips/X1/trail?format=csv")
            #expect(csv.headers["content-type"]?.hasPrefix("text/csv") == true)
            let lines = String(decoding: csv.body, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
            #expect(lines == ["ts,lat,lon,reason,altitude,battery", "\(ts),38.7158,-9.142,,,", "\(ts + 60_000),38.717,-9.139,,,"], "\(lines)")
            let bad = try hub.httpJSON("GET", "/v1/trips/X1/trail?format=kml")
            #expect(bad.status == 400)
            let badMessage = (bad.json["error"] as? [String: Any])?["message"] as? String
            #expect(badMessage?.contains("format") == true, "\(bad.json)")
        }
    }

    @Test func openAPIIsServedWithoutAToken() throws {
        try withTestHub(configure: { $0.jwtSecret = Self.secret }) { hub, _ in
            let (status, json) = try hub.httpJSON("GET", "/v1/openapi.json")
            #expect(status == 200)
            #expect(json["openapi"] as? String == "3.1.0")
            #expect(try hub.httpJSON("GET", "/v1/trips").status == 401)
        }
    }
}
