import Testing
import TrackHubCore
@testable import TrackHubProtocol

/// PROTOCOL 12: the webhook body is `{type: "trip.<name>", timestamp, data}`, `data` being the
/// event message without `type`, byte for byte as subscribers got it.
@Suite struct WebhookPayloadTests {
    typealias F = WireFixtures

    private func payload(_ index: Int, trip: String = "T1") throws -> WebhookPayload {
        try WebhookPayload(storedEvent: ServerMessages.event(trip: trip, F.events[index]))
    }

    @Test func bodiesKeepTheirBytes() throws {
        let created = try payload(0)
        #expect(String(decoding: created.body, as: UTF8.self)
            == ##"{"type":"trip.trip_created","timestamp":"2023-11-14T22:13:20.000Z","data":{"trip":"T1","n":1,"name":"trip_created","t":1700000000000,"lat":null,"lon":null}}"##)
        let reached = try payload(1)
        #expect(String(decoding: reached.body, as: UTF8.self)
            == ##"{"type":"trip.waypoint_reached","timestamp":"2023-11-14T22:13:20.001Z","data":{"trip":"T1","n":2,"name":"waypoint_reached","t":1700000000001,"lat":38.7158,"lon":-9.142,"index":0,"remaining_waypoints":2,"stop":null,"stop_name":null}}"##)
        let offRoute = try payload(4)
        #expect(String(decoding: offRoute.body, as: UTF8.self)
            == ##"{"type":"trip.off_route","timestamp":"2023-11-14T22:13:20.004Z","data":{"trip":"T1","n":5,"name":"off_route","t":1700000000004,"lat":38.7158,"lon":-9.142,"distance_m":123.5}}"##)
    }

    @Test func typeIsTripDotTheEventName() throws {
        for (index, event) in F.events.enumerated() {
            let p = try payload(index)
            #expect(p.type == "trip." + event.kind.name)
            #expect(p.eventName == event.kind.name)
            #expect(p.n == event.n)
        }
    }

    @Test func webhookIDIsTripColonN() throws {
        #expect(try payload(3, trip: "order:42").webhookID == "order:42:4")
    }

    @Test func dataIsTheEventWithoutTypeWhateverItsFieldOrder() throws {
        // Bytes not written by the hub's encoder: `data` is rebuilt without `type`.
        let stored = Array(##"{"trip":"T9","type":"event","n":3,"name":"arrived","t":0,"lat":1.5,"lon":2}"##.utf8)
        let p = try WebhookPayload(storedEvent: stored)
        #expect(String(decoding: p.body, as: UTF8.self)
            == ##"{"type":"trip.arrived","timestamp":"1970-01-01T00:00:00.000Z","data":{"trip":"T9","n":3,"name":"arrived","t":0,"lat":1.5,"lon":2}}"##)
    }

    @Test func signedContentIsIDDotTimestampDotBody() throws {
        let p = try payload(0)
        let content = String(decoding: p.signedContent(timestamp: 1_700_000_123), as: UTF8.self)
        #expect(content == "T1:1.1700000123." + String(decoding: p.body, as: UTF8.self))
    }

    @Test func rejectsBytesThatAreNotAnEvent() {
        #expect(throws: ProtocolError.self) { try WebhookPayload(storedEvent: Array(#"{"type":"frame","trip":"T1"}"#.utf8)) }
        #expect(throws: ProtocolError.self) { try WebhookPayload(storedEvent: Array("not json".utf8)) }
    }
}
