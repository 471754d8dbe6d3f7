import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// Phone apps' endpoints (PROTOCOL 11) on a real hub: the answers a phone that buffers and
/// resends acts on.
@Suite struct DeviceEndpointTests {
    static let phone = "phone-0123456789abcdef"

    static func osmand(_ hub: TestHub, _ query: String) throws -> (status: Int, body: Data) {
        try hub.http("GET", "/v1/osmand?" + query)
    }

    @Test func aFixIsAnswered503NeverTwoHundredWhileTheStoreCannotCommit() throws {
        try withTestHub { hub, _ in
            #expect(try hub.httpJSON("POST", "/v1/trips", json: ["id": "fragile"]).status == 201)
            #expect(try hub.httpJSON("PUT", "/v1/devices/\(Self.phone)", json: ["trip": "fragile"]).status == 200)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(try Self.osmand(hub, "id=\(Self.phone)&lat=38.7&lon=-9.14&timestamp=\(now - 20_000)").status == 200)

            hub.store.setFailing(true)
            let refused = try Self.osmand(hub, "id=\(Self.phone)&lat=38.7001&lon=-9.14&timestamp=\(now - 10_000)")
            #expect(refused.status == 503)
            #expect(try hub.http("POST", "/v1/owntracks/\(Self.phone)", json: ["_type": "location", "lat": 1, "lon": 2, "tst": now / 1000 - 5]).status == 503)
            #expect(try hub.httpJSON("PUT", "/v1/devices/other-0123456789abcdef", json: ["trip": NSNull()]).status == 503)

            hub.store.setFailing(false)
            // The phone sends the refused fix again: now stored, once.
            #expect(try Self.osmand(hub, "id=\(Self.phone)&lat=38.7001&lon=-9.14&timestamp=\(now - 10_000)").status == 200)
            let trail = try hub.httpJSON("GET", "/v1/trips/fragile/trail").json
            let ts = (trail["properties"] as? [String: Any])?["ts"] as? [Int64]
            #expect(ts == [now - 20_000, now - 10_000])
            #expect(try hub.httpJSON("GET", "/v1/devices/other-0123456789abcdef").status == 404, "a device that was not stored does not exist")
        }
    }

    @Test func aDeviceWhoseTripEndedIsBoundToNone() throws {
        try withTestHub { hub, _ in
            #expect(try hub.httpJSON("POST", "/v1/trips", json: ["id": "short"]).status == 201)
            #expect(try hub.httpJSON("PUT", "/v1/devices/\(Self.phone)", json: ["trip": "short"]).status == 200)
            #expect(try hub.httpJSON("DELETE", "/v1/trips/short").status == 200)
            let device = try hub.httpJSON("GET", "/v1/devices/\(Self.phone)")
            #expect(device.status == 200)
            #expect(device.json["trip"] is NSNull)
            #expect(try Self.osmand(hub, "id=\(Self.phone)&lat=38.7&lon=-9.14").status == 200)
            let seen = try hub.httpJSON("GET", "/v1/devices/\(Self.phone)").json
            #expect((seen["last_position"] as? [String: Any])?["lat"] as? Double == 38.7)
        }
    }

    @Test func aDeviceOverTheFixRateIsRateLimited() throws {
        try withTestHub(configure: { $0.maxFixRate = 2 }) { hub, _ in
            #expect(try hub.httpJSON("POST", "/v1/trips", json: ["id": "busy"]).status == 201)
            #expect(try hub.httpJSON("PUT", "/v1/devices/\(Self.phone)", json: ["trip": "busy"]).status == 200)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            var statuses: [Int] = []
            for i in 0..<6 {
                statuses.append(try Self.osmand(hub, "id=\(Self.phone)&lat=38.7&lon=-9.14&timestamp=\(now - 60_000 + Int64(i) * 1000)").status)
            }
            #expect(statuses.prefix(2).allSatisfy { $0 == 200 })
            #expect(statuses.contains(429), "\(statuses)")
        }
    }

    @Test func deviceIDsOfTheWrongShapeAreBadRequests() throws {
        try withTestHub { hub, _ throws in
            #expect(try hub.httpJSON("PUT", "/v1/devices/a%20b", json: ["trip": NSNull()]).status == 400)
            #expect(try hub.httpJSON("PUT", "/v1/devices/abc", json: [:]).status == 400, "trip is required")
            #expect(try hub.http("POST", "/v1/osmand", body: Data("id=a%20b&lat=1".utf8)).status == 400)
            // A well-formed id that is not registered: 404 before the rest is parsed (PROTOCOL 11).
            #expect(try hub.http("POST", "/v1/osmand", body: Data("id=abc&lat=1".utf8)).status == 404)
            #expect(try hub.http("PATCH", "/v1/osmand").status == 405)
        }
    }
}
