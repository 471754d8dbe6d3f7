import Testing
import TrackHubCore
@testable import TrackHubProtocol

/// The encoders that moved into TrackHubProtocol write the very bytes the hub wrote before
/// (field order and number formatting included): web clients and other people's clients
/// parse them. `WireBefore` holds the old encoders' output for `WireFixtures`.
@Suite struct WireGoldenTests {
    typealias F = WireFixtures

    @Test func framesKeepTheirBytes() {
        #expect(text(ServerMessages.frame(trip: "T1", seq: 7, F.frame)) == WireBefore.frame)
        #expect(text(ServerMessages.frame(trip: "T:2", seq: 1, F.jumpFrame)) == WireBefore.frameJump)
    }

    @Test func segmentsKeepTheirBytes() {
        #expect(text(ServerMessages.segment(trip: "T1", seq: 2, F.segment)) == WireBefore.segment)
        #expect(text(ServerMessages.segment(trip: "T1", seq: 3, F.jumpSegment)) == WireBefore.segmentJump)
    }

    @Test func eventsKeepTheirBytes() {
        let before = [
            WireBefore.event0, WireBefore.event1, WireBefore.event2, WireBefore.event3,
            WireBefore.event4, WireBefore.event5, WireBefore.event6, WireBefore.event7,
        ]
        for (event, expected) in zip(F.events, before) {
            #expect(text(ServerMessages.event(trip: "T1", event)) == expected, "\(event.kind.name)")
        }
    }

    @Test func snapshotsAndTripBodiesKeepTheirBytes() throws {
        let unknown = TripView(id: "nope", trip: nil, now: F.t0)
        #expect(text(ServerMessages.snapshot(unknown, re: .number("5"), recovered: nil)) == WireBefore.snapshotUnknown)
        #expect(text(ServerMessages.snapshot(unknown, re: nil, recovered: false)) == WireBefore.snapshotUnknownRecovered)
        let expected: [(Int64, String, String)] = [
            (5010, WireBefore.snapshot5010, WireBefore.tripBody5010),
            (7010, WireBefore.snapshot7010, WireBefore.tripBody7010),
            (20_000, WireBefore.snapshot20000, WireBefore.tripBody20000),
        ]
        for (offset, snapshot, body) in expected {
            let view = try F.view(at: F.t0 + offset)
            #expect(text(ServerMessages.snapshot(view, re: .string("s"), recovered: true)) == snapshot, "at +\(offset) ms")
            #expect(text(HTTPBodies.trip(view)) == body, "at +\(offset) ms")
        }
        let pending = try Trip(id: "P", route: nil, waypoints: [], destination: nil, config: TripConfig(waitAtWaypoints: false), now: F.t0)
        #expect(text(HTTPBodies.trip(TripView(id: "P", trip: pending, now: F.t0))) == WireBefore.tripBodyPending)
    }

    @Test func tripListKeepsItsItemBytes() throws {
        let item = try F.view(at: F.t0 + 7010, includeRoute: false, includeTrail: false)
        #expect(text(HTTPBodies.tripList([item], next: nil)) == #"{"trips":["# + WireBefore.tripListItem + #"],"next":null}"#)
        #expect(text(HTTPBodies.tripList([item, item], next: "T1"))
            == #"{"trips":["# + WireBefore.tripListItem + "," + WireBefore.tripListItem + #"],"next":"T1"}"#)
        #expect(text(HTTPBodies.tripList([], next: nil)) == #"{"trips":[],"next":null}"#)
    }

    @Test func clustersKeepTheirBytes() {
        #expect(text(FleetMessages.clusters(re: nil, t: F.t0, viewport: F.viewport, total: 0, truncated: false, items: []))
            == WireBefore.clustersEmpty)
        #expect(text(FleetMessages.clusters(re: .number("9"), t: F.t0, viewport: F.viewport, total: 7, truncated: true, items: F.clusterItems))
            == WireBefore.clusters)
        #expect(text(FleetMessages.clustersBody(t: F.t0, viewport: F.viewport, total: 7, truncated: true, items: F.clusterItems))
            == WireBefore.clustersHTTP)
        #expect(text(FleetMessages.clustersContent(total: 7, truncated: true, items: F.clusterItems)) == WireBefore.clustersBody)
    }

    @Test func messagesLeaveTheHeadroomAskedFor() {
        let headroom = 16
        let encoded: [([UInt8], [UInt8])] = [
            (ServerMessages.frame(trip: "T1", seq: 7, F.frame, headroom: headroom), ServerMessages.frame(trip: "T1", seq: 7, F.frame)),
            (ServerMessages.segment(trip: "T1", seq: 2, F.segment, headroom: headroom), ServerMessages.segment(trip: "T1", seq: 2, F.segment)),
            (ServerMessages.event(trip: "T1", F.events[1], headroom: headroom), ServerMessages.event(trip: "T1", F.events[1])),
            (
                ServerMessages.snapshot(TripView(id: "x", trip: nil, now: 0), re: nil, recovered: nil, headroom: headroom),
                ServerMessages.snapshot(TripView(id: "x", trip: nil, now: 0), re: nil, recovered: nil)
            ),
            (
                FleetMessages.clusters(re: nil, t: 1, viewport: F.viewport, total: 0, truncated: false, items: [], headroom: headroom),
                FleetMessages.clusters(re: nil, t: 1, viewport: F.viewport, total: 0, truncated: false, items: [])
            ),
        ]
        for (withHeadroom, without) in encoded {
            #expect(withHeadroom.prefix(headroom).allSatisfy { $0 == 0 })
            #expect(Array(withHeadroom.dropFirst(headroom)) == without)
        }
    }

    @Test func httpBodiesKeepTheirBytes() {
        #expect(text(HTTPBodies.noAcks) == #"{"acks":[]}"#)
        #expect(text(HTTPBodies.health(status: "ok", trips: 2, connections: 3, server: "trackhub/1.0"))
            == #"{"status":"ok","trips":2,"connections":3,"server":"trackhub/1.0"}"#)
        #expect(text(HTTPBodies.error(.tooLarge("body is 5000000 bytes; the limit is 4194304")))
            == #"{"error":{"code":"too_large","message":"body is 5000000 bytes; the limit is 4194304"}}"#)
        #expect(text(HTTPBodies.error(.badRequest("Content-Length is malformed")))
            == #"{"error":{"code":"bad_request","message":"Content-Length is malformed"}}"#)
        #expect(text(TripView.riderJSON(.object(["id": .string("r1"), "name": .string("Ana")]))) == #"{"id":"r1","name":"Ana"}"#)
    }
}
