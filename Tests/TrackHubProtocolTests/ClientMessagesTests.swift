import Testing
import TrackHubCore
@testable import TrackHubProtocol

/// What the client encoders write, the hub's decoders read back equal (the id included),
/// and the simulator's messages keep the bytes they had.
@Suite struct ClientMessagesTests {
    typealias F = WireFixtures

    static func decoded(_ bytes: [UInt8]) -> (id: MessageID?, message: ClientMessage?) {
        let (id, result) = ClientMessage.decode(bytes, now: F.t0 + 60_000)
        return (id, try? result.get())
    }

    @Test func clientMessagesRoundTripThroughTheDecoder() {
        let fix = FixInput(
            lat: 38.7158123, lon: -9.1420456, ts: F.t0, seq: 9_007_199_254_740_991, durationMs: 1500.5, speedMps: 8.25,
            heading: 271.5, accuracyM: 4.5)
        let cases: [(bytes: [UInt8], id: MessageID?, message: ClientMessage)] = [
            (ClientMessages.hello(token: "a.b.c", id: .string("h")), .string("h"), .hello(token: "a.b.c")),
            (ClientMessages.hello(token: nil), nil, .hello(token: nil)),
            (ClientMessages.subscribe(trip: "T:1", id: .integer(0)), .integer(0), .subscribe(trip: "T:1", mode: .frames, sinceEvent: nil)),
            (
                ClientMessages.subscribe(trip: "T1", mode: .segments, sinceEvent: 12, id: .number("2.50")), .number("2.50"),
                .subscribe(trip: "T1", mode: .segments, sinceEvent: 12)
            ),
            (ClientMessages.unsubscribe(trip: "T1", id: .integer(3)), .integer(3), .unsubscribe(trip: "T1")),
            (ClientMessages.fix(trip: "T1", fix, id: .integer(-4)), .integer(-4), .fix(trip: "T1", fix: fix)),
            (
                ClientMessages.fix(trip: "T1", FixInput(lat: -90, lon: 180, ts: F.t0 + 60_000)), nil,
                .fix(trip: "T1", fix: FixInput(lat: -90, lon: 180, ts: F.t0 + 60_000))
            ),
            (ClientMessages.proceed(trip: "T1", id: .string("p\"q")), .string("p\"q"), .proceed(trip: "T1")),
            (ClientMessages.viewport(F.viewport, id: .integer(5)), .integer(5), .viewport(F.viewport)),
            (ClientMessages.viewport(Viewport.world(zoom: 0)), nil, .viewport(Viewport.world(zoom: 0))),
            (ClientMessages.viewport(nil, id: .integer(6)), .integer(6), .viewport(nil)),
            (ClientMessages.ping(id: .integer(7)), .integer(7), .ping),
            (ClientMessages.ping(), nil, .ping),
        ]
        for (bytes, id, message) in cases {
            let (decodedID, decodedMessage) = Self.decoded(bytes)
            #expect(decodedMessage == message, "\(text(bytes))")
            #expect(decodedID == id, "\(text(bytes))")
        }
    }

    @Test func clientMessagesLeaveTheHeadroomAskedFor() {
        let plain = ClientMessages.fix(trip: "T1", FixInput(lat: 1, lon: 2, ts: F.t0, seq: 1), id: .integer(1))
        let roomy = ClientMessages.fix(trip: "T1", FixInput(lat: 1, lon: 2, ts: F.t0, seq: 1), id: .integer(1), headroom: 10)
        #expect(roomy.count == plain.count + 10)
        #expect(roomy.prefix(10).allSatisfy { $0 == 0 })
        #expect(Array(roomy.dropFirst(10)) == plain)
    }

    /// The simulator's `subscribe`, `unsubscribe` and `proceed` as it wrote them itself before.
    @Test func simulatorMessagesKeepTheirBytes() {
        #expect(text(ClientMessages.subscribe(trip: "sim-1", mode: .segments, sinceEvent: 0, id: .integer(3)))
            == #"{"op":"subscribe","id":3,"trip":"sim-1","mode":"segments","since_event":0}"#)
        #expect(text(ClientMessages.unsubscribe(trip: "sim-1", id: .integer(4))) == #"{"op":"unsubscribe","id":4,"trip":"sim-1"}"#)
        #expect(text(ClientMessages.proceed(trip: "sim-1", id: .integer(5))) == #"{"op":"proceed","id":5,"trip":"sim-1"}"#)
        #expect(text(ClientRequestBodies.reroute(RerouteRequest(route: .points([GeoPoint(lat: 60.1699, lon: 24.9384), GeoPoint(lat: 60.17, lon: 24.94)]))))
            == #"{"route":[[24.9384,60.1699],[24.94,60.17]]}"#)
    }

    @Test func fixIsWrittenInTheProtocolsOrder() {
        let fix = FixInput(lat: 60.1699, lon: 24.9384, ts: F.t0, seq: 2, durationMs: 1000, speedMps: 12.5, heading: 90, accuracyM: 5)
        #expect(text(ClientMessages.fix(trip: "T1", fix, id: .integer(2)))
            == #"{"op":"fix","id":2,"trip":"T1","lat":60.1699,"lon":24.9384,"ts":1700000000000,"seq":2,"duration_ms":1000,"speed_mps":12.5,"heading":90,"accuracy_m":5}"#)
    }

    @Test func requestBodiesRoundTripThroughTheDecoders() throws {
        let route = [GeoPoint(lat: 38.7158, lon: -9.142), GeoPoint(lat: 38.7190001, lon: -9.1350002)]
        let creates = [
            CreateTripRequest(),
            CreateTripRequest(
                id: "T1", route: .points(route), waypoints: [GeoPoint(lat: 38.717, lon: -9.139)], destination: GeoPoint(lat: 38.719, lon: -9.135),
                rider: ["id": 7, "name": "Ana \"A\"", "extra": [true, nil]],
                config: TripConfig(arrivalBufferM: 20, rerouteDistanceM: 150.5, waitAtWaypoints: false, maxSpeedMps: 30)),
            CreateTripRequest(route: .polyline("_p~iF~ps|U_ulLnnqC_mqNvxq`@"), config: TripConfig(waitAtWaypoints: false)),
        ]
        for request in creates {
            #expect(try CreateTripRequest.decode(ClientRequestBodies.createTrip(request)) == request)
        }
        let reroutes = [
            RerouteRequest(route: .points(route)),
            RerouteRequest(route: .points(route), waypoints: [], destination: GeoPoint(lat: 38.7185, lon: -9.136)),
            RerouteRequest(route: .polyline("_p~iF~ps|U_ulLnnqC"), waypoints: [GeoPoint(lat: 38.5, lon: -121.2)]),
        ]
        for request in reroutes {
            #expect(try RerouteRequest.decode(ClientRequestBodies.reroute(request)) == request)
        }
        let batch = FixBatchRequest(fixes: [
            FixInput(lat: 38.7158, lon: -9.142, ts: F.t0, seq: 1, durationMs: 1000),
            FixInput(lat: 38.716, lon: -9.141, ts: F.t0 + 1000, speedMps: 0, heading: 0, accuracyM: 0),
        ])
        #expect(try FixBatchRequest.decode(ClientRequestBodies.fixes(batch), now: F.t0 + 5000) == batch)
        #expect(try FixBatchRequest.decode(ClientRequestBodies.fixes(FixBatchRequest(fixes: [])), now: F.t0) == FixBatchRequest(fixes: []))
    }

    @Test func defaultConfigIsLeftOutAndAnotherIsWrittenWhole() throws {
        let plain = try JSONParser().parse(ClientRequestBodies.createTrip(CreateTripRequest(id: "T1")))
        #expect(plain == (try parse(#"{"id": "T1"}"#)))
        let custom = try JSONParser().parse(ClientRequestBodies.createTrip(CreateTripRequest(config: TripConfig(waitAtWaypoints: false))))
        #expect(custom["config"] == (try parse(#"{"arrival_buffer_m": 50, "reroute_distance_m": 100, "wait_at_waypoints": false, "max_speed_mps": 70}"#)))
    }
}
