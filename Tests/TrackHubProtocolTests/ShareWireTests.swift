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

    /// PROTOCOL 17: a link for one stop names it and how near (in stops) the courier is shown.
    @Test func shareRequestTakesAStopAndVisibleWithinStops() throws {
        let plain = try ShareRequest.decode([])
        #expect(plain.stop == nil && plain.visibleWithinStops == 0)
        let stop = try ShareRequest.decode(bytes(#"{"stop":"order-7","visible_within_stops":100}"#))
        #expect(stop.stop == "order-7" && stop.visibleWithinStops == 100)
        #expect(try ShareRequest.decode(bytes(#"{"stop":"destination"}"#)).stop == "destination")
        #expect(try ShareRequest.decode(bytes(#"{"stop":"destination"}"#)).visibleWithinStops == 0)
        for (bad, field) in [(#"{"stop":7}"#, "stop"), (#"{"stop":""}"#, "stop"), (#"{"stop":"a b"}"#, "stop"),
                             (#"{"visible_within_stops":-1}"#, "visible_within_stops"),
                             (#"{"visible_within_stops":101}"#, "visible_within_stops"),
                             (#"{"visible_within_stops":1.5}"#, "visible_within_stops")] {
            do {
                _ = try ShareRequest.decode(bytes(bad))
                Issue.record("\(bad) was accepted")
            } catch {
                #expect(error.code == .badRequest && error.message.contains(field), "\(bad): \(error.message)")
            }
        }
    }

    /// The customer's body is the viewer's with the rider cut to its name, no config and no trail.
    @Test func aClientsShareRequestHasItsExactBytesAndReadsBack() throws {
        let link = ShareRequest(ttlSeconds: 3600, stop: "order-7", visibleWithinStops: 2)
        #expect(String(decoding: link.encoded(), as: UTF8.self) == #"{"ttl_s":3600,"stop":"order-7","visible_within_stops":2}"#)
        #expect(try ShareRequest.decode(link.encoded()) == link)
        #expect(String(decoding: ShareRequest().encoded(), as: UTF8.self) == #"{"ttl_s":86400}"#)
    }

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

/// PROTOCOL 17: the `stop` message's exact bytes.
@Suite struct StopLinkMessageTests {
    @Test func stopMessageHasItsExactBytes() {
        #expect(String(decoding: StopLinkMessages.stop(trip: "T1", stop: "order-7", stopsBefore: 2, etaS: 1500, visible: false), as: UTF8.self)
            == #"{"type":"stop","trip":"T1","stop":"order-7","stops_before":2,"eta_s":1500,"visible":false}"#)
        #expect(String(decoding: StopLinkMessages.stop(trip: "T1", stop: "destination", stopsBefore: 0, etaS: nil, visible: true), as: UTF8.self)
            == #"{"type":"stop","trip":"T1","stop":"destination","stops_before":0,"eta_s":null,"visible":true}"#)
    }
}
