import Foundation
import Testing
import TrackHubCore
@testable import TrackHubProtocol

/// PROTOCOL 13 on the wire: the share bodies, the request, and the customer's view of a trip.
@Suite struct ShareWireTests {
    typealias F = WireFixtures

    @Test func shareBodiesHaveTheirExactBytes() {
        #expect(text(HTTPBodies.share(token: "a.b.c", jti: "J1", expiresAt: 1_764_640_000_000))
            == #"{"token":"a.b.c","jti":"J1","url":"/t/a.b.c","expires_at":1764640000000}"#)
        #expect(text(HTTPBodies.shareRevoked(jti: "J1")) == #"{"jti":"J1","revoked":true}"#)
    }

    @Test func shareRequestTakesTTLFromOneSecondToThirtyDays() throws {
        #expect(try ShareRequest.decode([]).ttlSeconds == 86_400)
        #expect(try ShareRequest.decode(bytes(#"{"ttl_s":2592000}"#)).ttlSeconds == 2_592_000)
        for bad in [#"{"ttl_s":0}"#, #"{"ttl_s":2592001}"#, #"{"ttl_s":1.5}"#, #"{"ttl_s":"1h"}"#, "[]"] {
            #expect(throws: ProtocolError.self, "\(bad)") { try ShareRequest.decode(bytes(bad)) }
        }
    }

    /// The customer's body is the viewer's with the rider cut to its name, no config and no trail.
    @Test func customerViewDiffersFromTheFullOneOnlyInRiderConfigAndTrail() throws {
        for offset: Int64 in [5010, 7010] {
            var view = try F.view(at: F.t0 + offset)
            let full = try #require(try JSONSerialization.jsonObject(with: Data(HTTPBodies.trip(view))) as? [String: Any])
            view.audience = .customer
            let body = HTTPBodies.trip(view)
            let customer = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            #expect(text(body).contains(#""rider":{"name":"Ana"},"config":null,"#))
            #expect(customer["trail"] as? [Any] != nil && (customer["trail"] as? [Any])?.isEmpty == true)
            #expect(Set(full.keys) == Set(customer.keys))
            let rest = { (body: [String: Any]) in NSDictionary(dictionary: body.filter { !["rider", "config", "trail"].contains($0.key) }) }
            #expect(rest(full).isEqual(to: rest(customer) as? [AnyHashable: Any] ?? [:]), "at +\(offset)")
        }
    }

    @Test func customerRiderIsOnlyAStringName() {
        func rider(_ json: String?) -> String {
            var w = JSONWriter(headroom: 0, capacity: 64)
            TripView.writeCustomerRider(&w, json.map(bytes))
            return text(w.finish())
        }
        #expect(rider(#"{"id":"r1","name":"Ana","phone":"+351"}"#) == #"{"name":"Ana"}"#)
        #expect(rider(#"{"id":"r1"}"#) == "null")
        #expect(rider(#"{"name":7}"#) == "null")
        #expect(rider(nil) == "null")
    }
}
