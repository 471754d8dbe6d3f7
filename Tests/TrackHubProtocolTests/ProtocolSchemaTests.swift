import Foundation
import Testing
import TrackHubCore
@testable import TrackHubProtocol

/// Every message and body the encoders write has the members PROTOCOL.md lists for it, in
/// the order it lists them (sections 3, 4 and 5), and the page's concrete examples read
/// back equal (parsed as JSON, so spacing and number spelling in the page do not matter).
@Suite struct ProtocolSchemaTests {
    /// A member list as PROTOCOL.md writes it: `{re?, trip, protocol: 1, ...}`.
    struct Schema {
        var members: [(name: String, optional: Bool, value: String?)]
        /// `...`: further members may follow.
        var isOpen: Bool

        init(_ notation: String) {
            var body = notation.trimmingCharacters(in: ["{", "}", " "])
            isOpen = body.hasSuffix("...")
            if isOpen { body = String(body.dropLast(3)) }
            members = body.split(separator: ",").compactMap { part in
                let token = part.trimmingCharacters(in: [" "])
                guard !token.isEmpty else { return nil }
                let pieces = token.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: [" "]) }
                var name = pieces[0]
                let optional = name.hasSuffix("?")
                if optional { name.removeLast() }
                return (name, optional, pieces.count > 1 ? pieces[1] : nil)
            }
        }
    }

    /// Checks `json`'s members (after `leading`, e.g. `type` or `op` and `id`) against `schema`:
    /// every required member, optional ones where present, nothing else, in that order.
    static func expectMembers(
        _ json: [UInt8], _ notation: String, after leading: [String] = [], _ rule: String
    ) throws {
        let schema = Schema(notation)
        guard case .object(let object) = try JSONParser().parse(json) else {
            Issue.record("\(rule): not an object")
            return
        }
        let keys = object.entries.map(\.key)
        #expect(Array(keys.prefix(leading.count)) == leading, "\(rule): starts with \(keys.prefix(leading.count))")
        let rest = Array(keys.dropFirst(leading.count))
        let present = Set(rest)
        let expected = schema.members.filter { !$0.optional || present.contains($0.name) }.map(\.name)
        if schema.isOpen {
            #expect(Array(rest.prefix(expected.count)) == expected, "\(rule): \(rest)")
        } else {
            #expect(rest == expected, "\(rule): \(rest)")
        }
        for member in schema.members {
            if let value = member.value {
                #expect(object[member.name] == (try JSONParser().parse(Array(value.utf8))), "\(rule): \(member.name)")
            }
        }
    }

    static func expectType(_ json: [UInt8], _ type: String) throws {
        #expect(try JSONParser().parse(json)["type"] == .string(type))
    }

    typealias F = WireFixtures

    // MARK: server messages (PROTOCOL 4)

    @Test func welcomePongErrorUnsubscribedAndAckHaveTheirMembers() throws {
        let welcome = ServerReplies.welcome(re: .number("1"), session: "c7", server: "trackhub/1.0", tickHz: 10, fleetHz: 1)
        try Self.expectMembers(welcome, "{re?, session, server, protocol: 1, tick_hz, fleet_hz}", after: ["type"], "welcome")
        try Self.expectMembers(
            ServerReplies.welcome(re: nil, session: "c7", server: "s", tickHz: 10, fleetHz: 1),
            "{re?, session, server, protocol: 1, tick_hz, fleet_hz}", after: ["type"], "welcome without re")
        try Self.expectMembers(ServerReplies.pong(re: .string("p"), t: F.t0), "{re?, t}", after: ["type"], "pong")
        try Self.expectMembers(
            ServerReplies.error(re: .number("2"), .notFound("trip T9 does not exist")), "{re?, code, message}", after: ["type"], "error")
        try Self.expectMembers(
            ServerReplies.unsubscribed(re: nil, trip: "T1", reason: "forbidden"), "{re?, trip, reason?}", after: ["type"], "unsubscribed")
        try Self.expectMembers(
            ServerReplies.ack(re: .number("3"), trip: "T1", seq: 4, verdict: .refused(.duplicate)),
            "{re?, trip, seq?, applied, reason?}", after: ["type"], "ack")
        try Self.expectMembers(
            ServerReplies.ack(re: nil, trip: "T1", seq: nil, applied: true), "{re?, trip, seq?, applied, reason?}", after: ["type"], "ack")
        for (bytes, type) in [
            (welcome, "welcome"), (ServerReplies.pong(re: nil, t: 1), "pong"), (ServerReplies.error(re: nil, .badRequest("x")), "error"),
            (ServerReplies.unsubscribed(re: nil, trip: "T"), "unsubscribed"),
            (ServerReplies.ack(re: nil, trip: "T", seq: nil, applied: true), "ack"),
        ] {
            try Self.expectType(bytes, type)
        }
    }

    static let snapshotSchema =
        "{re?, trip, status, rider, config, route, waypoints, destination, position, bearing, progress, done_m, remaining_m, eta_s, leg, trail, last_event, last_fix_t, battery, stale, recovered?}"

    @Test func snapshotHasItsMembers() throws {
        let known = ServerMessages.snapshot(try F.view(at: F.t0 + 7010), re: .string("s"), recovered: true)
        try Self.expectMembers(known, Self.snapshotSchema, after: ["type"], "snapshot")
        try Self.expectType(known, "snapshot")
        let unknown = ServerMessages.snapshot(TripView(id: "T9", trip: nil, now: F.t0), re: nil, recovered: nil)
        try Self.expectMembers(unknown, Self.snapshotSchema, after: ["type"], "snapshot of an unknown trip")
        // PROTOCOL 4: unknown trip: status unknown, waypoints and trail empty, leg and last_event 0, the rest null.
        let parsed = try JSONParser().parse(unknown)
        #expect(parsed["status"] == "unknown")
        #expect(parsed["waypoints"] == [])
        #expect(parsed["trail"] == [])
        #expect(parsed["leg"] == 0)
        #expect(parsed["last_event"] == 0)
        for field in ["rider", "config", "route", "destination", "position", "bearing", "progress", "done_m", "remaining_m", "eta_s",
                      "last_fix_t", "battery", "stale"] {
            #expect(parsed[field] == .null, "\(field)")
        }
    }

    @Test func snapshotPartsHaveTheShapesOfTheConventions() throws {
        let parsed = try JSONParser().parse(ServerMessages.snapshot(try F.view(at: F.t0 + 20_000), re: nil, recovered: nil))
        // Conventions: a point is `{"lat": 38.7158, "lon": -9.1420}`; a line is `[lon, lat]` pairs.
        #expect(parsed["route"]?.arrayValue?.first == (try parse("[-9.1420, 38.7158]")))
        #expect(parsed["waypoints"]?.arrayValue?.first == (try parse(
            #"{"index": 0, "lat": 38.71701, "lon": -9.13902, "visited": false, "id": null, "name": null, "dwell_s": 0, "eta_s": 25, "remaining_m": 194}"#)))
        #expect(parsed["position"] == (try parse(#"{"lat": 38.7162, "lon": -9.1410}"#)))
        // `trail` as `[[lon, lat, ts], ...]`.
        #expect(parsed["trail"]?.arrayValue?.last == (try parse("[-9.1410, 38.7162, 1700000005000]")))
        // `config` with every default filled in (PROTOCOL 5; `mode` and `auto_reroute` come with section 16).
        #expect(parsed["config"] == (try parse(#"{"arrival_buffer_m": 50, "reroute_distance_m": 100, "wait_at_waypoints": true, "max_speed_mps": 70, "mode": "car", "auto_reroute": false}"#)))
    }

    @Test func frameSegmentAndEventHaveTheirMembers() throws {
        let frameSchema = "{trip, seq, t, lat, lon, bearing, progress, done_m, remaining_m, eta_s, leg, status, jump?}"
        try Self.expectMembers(ServerMessages.frame(trip: "T1", seq: 7, F.frame), frameSchema, after: ["type"], "frame")
        let jump = ServerMessages.frame(trip: "T1", seq: 8, F.jumpFrame)
        try Self.expectMembers(jump, frameSchema, after: ["type"], "jump frame")
        #expect(try JSONParser().parse(jump)["jump"] == true)
        try Self.expectType(jump, "frame")
        let segmentSchema =
            "{trip, seq, t0, duration_ms, path, progress_from, progress_to, done_m, remaining_m, eta_s, leg, status, jump?}"
        try Self.expectMembers(ServerMessages.segment(trip: "T1", seq: 2, F.segment), segmentSchema, after: ["type"], "segment")
        let jumpSegment = ServerMessages.segment(trip: "T1", seq: 3, F.jumpSegment)
        try Self.expectMembers(jumpSegment, segmentSchema, after: ["type"], "jump segment")
        // A jump segment: duration_ms 0 and a one-point path.
        #expect(try JSONParser().parse(jumpSegment)["path"] == (try parse("[[2, 1]]")))
        try Self.expectType(jumpSegment, "segment")
        let extras: [String: [String]] = [
            "waypoint_reached": ["index", "remaining_waypoints", "stop", "stop_name"],
            "waypoint_resumed": ["index", "remaining_waypoints", "stop", "stop_name"],
            "off_route": ["distance_m"], "rerouted": ["reason"],
        ]
        for event in F.events {
            let bytes = ServerMessages.event(trip: "T1", event)
            try Self.expectMembers(bytes, "{trip, n, name, t, lat, lon, ...}", after: ["type"], event.kind.name)
            try Self.expectType(bytes, "event")
            let keys = try JSONParser().parse(bytes).objectValue?.entries.map(\.key) ?? []
            #expect(Array(keys.dropFirst(7)) == extras[event.kind.name, default: []], "\(event.kind.name)")
        }
    }

    @Test func clustersHaveTheirMembers() throws {
        let bytes = FleetMessages.clusters(re: .number("9"), t: F.t0, viewport: F.viewport, total: 7, truncated: true, items: F.clusterItems)
        try Self.expectMembers(bytes, "{re?, t, zoom, bbox, total, truncated, items}", after: ["type"], "clusters")
        try Self.expectType(bytes, "clusters")
        let items = try JSONParser().parse(bytes)["items"]?.arrayValue ?? []
        #expect(items.count == 3)
        for item in items {
            let json = Array(item.description.utf8)
            if item["count"] == 1 {
                try Self.expectMembers(json, "{id, lat, lon, count, trip, status, bearing, stale}", "single rider")
            } else {
                try Self.expectMembers(json, "{id, lat, lon, count, bounds, expansion_zoom}", "cluster")
            }
        }
        // `GET /v1/fleet/clusters`: the body of a `clusters` message (no `type`, no `re`).
        let body = FleetMessages.clustersBody(t: F.t0, viewport: F.viewport, total: 7, truncated: true, items: F.clusterItems)
        try Self.expectMembers(body, "{t, zoom, bbox, total, truncated, items}", "clusters body")
    }

    // MARK: HTTP bodies (PROTOCOL 1 and 5)

    @Test func httpBodiesHaveTheirMembersAndMatchTheExamples() throws {
        // "The trip" is a snapshot's fields without `re` and `recovered`; no HTTP body carries `type`.
        try Self.expectMembers(
            HTTPBodies.trip(try F.view(at: F.t0 + 5010)),
            "{trip, status, rider, config, route, waypoints, destination, position, bearing, progress, done_m, remaining_m, eta_s, leg, trail, last_event, last_fix_t, battery, stale}",
            "trip")
        let listed = try F.view(at: F.t0 + 5010, includeRoute: false, includeTrail: false)
        let list = HTTPBodies.tripList([listed], next: "T1")
        try Self.expectMembers(list, "{trips, next}", "trip list")
        // Each listed trip is without `route` and `trail`.
        let first = try JSONParser().parse(list)["trips"]?.arrayValue?.first
        try Self.expectMembers(
            Array((first?.description ?? "").utf8),
            "{trip, status, rider, config, waypoints, destination, position, bearing, progress, done_m, remaining_m, eta_s, leg, last_event, last_fix_t, battery, stale}",
            "listed trip")
        // `{"fixes": []}` answers `{"acks": []}`.
        #expect(try JSONParser().parse(HTTPBodies.noAcks) == (try parse(#"{"acks": []}"#)))
        let acks = HTTPBodies.acks(trip: "T1", fixes: [FixInput(lat: 0, lon: 0, ts: 1, seq: 5)], verdicts: [.refused(.outlier)])
        try Self.expectMembers(acks, "{acks}", "acks")
        let ack = try JSONParser().parse(acks)["acks"]?.arrayValue?.first
        try Self.expectMembers(Array((ack?.description ?? "").utf8), "{trip, seq?, applied, reason?}", "acks[0]")
        // `{"error": {"code": ..., "message": ...}}`.
        let error = try JSONParser().parse(HTTPBodies.error(.tooLarge("body is over 4194304 bytes")))
        #expect(error == (try parse(#"{"error": {"code": "too_large", "message": "body is over 4194304 bytes"}}"#)))
        // `200 {"status":"ok", ...}`.
        try Self.expectMembers(HTTPBodies.health(status: "ok", trips: 0, connections: 0, server: "s"), #"{status: "ok", ...}"#, "health")
    }

    // MARK: client messages (PROTOCOL 3)

    @Test func clientMessagesHaveTheirMembers() throws {
        let id = MessageID.integer(1)
        let cases: [([UInt8], String, String)] = [
            (ClientMessages.hello(token: "a.b.c", id: id), "hello", "{token?}"),
            (ClientMessages.hello(token: nil), "hello", "{token?}"),
            (ClientMessages.subscribe(trip: "T1", mode: .segments, sinceEvent: 0, id: id), "subscribe", "{trip, mode?, since_event?}"),
            (ClientMessages.subscribe(trip: "T1"), "subscribe", "{trip, mode?, since_event?}"),
            (ClientMessages.unsubscribe(trip: "T1", id: id), "unsubscribe", "{trip}"),
            (
                ClientMessages.fix(
                    trip: "T1", FixInput(lat: 38.7158, lon: -9.142, ts: F.t0, seq: 1, durationMs: 1000, speedMps: 8, heading: 90, accuracyM: 5),
                    id: id),
                "fix", "{trip, lat, lon, ts, seq?, duration_ms?, speed_mps?, heading?, accuracy_m?}"
            ),
            (ClientMessages.fix(trip: "T1", FixInput(lat: 38.7158, lon: -9.142, ts: F.t0)), "fix", "{trip, lat, lon, ts, seq?, duration_ms?, speed_mps?, heading?, accuracy_m?}"),
            (ClientMessages.proceed(trip: "T1", id: id), "proceed", "{trip}"),
            (ClientMessages.viewport(F.viewport, id: id), "viewport", "{bbox, zoom}"),
            (ClientMessages.viewport(nil), "viewport", "{bbox}"),
            (ClientMessages.ping(id: id), "ping", "{}"),
        ]
        for (bytes, op, schema) in cases {
            let parsed = try JSONParser().parse(bytes)
            #expect(parsed["op"] == .string(op))
            let leading = parsed["id"] == nil ? ["op"] : ["op", "id"]
            try Self.expectMembers(bytes, schema, after: leading, op)
        }
    }

    @Test func clientRequestBodiesHaveTheirMembers() throws {
        let create = CreateTripRequest(
            id: "T1", route: .points([GeoPoint(lat: 38.7158, lon: -9.142), GeoPoint(lat: 38.72, lon: -9.13)]),
            waypoints: [GeoPoint(lat: 38.717, lon: -9.139)], destination: GeoPoint(lat: 38.72, lon: -9.13),
            rider: ["id": "r1", "name": "Ana"], config: TripConfig(waitAtWaypoints: false))
        try Self.expectMembers(
            ClientRequestBodies.createTrip(create), "{id?, route?, waypoints?, destination?, rider?, config?}", "create trip")
        try Self.expectMembers(
            ClientRequestBodies.createTrip(CreateTripRequest(route: .polyline("_p~iF~ps|U_ulLnnqC"))), "{route_polyline}", "polyline")
        try Self.expectMembers(
            ClientRequestBodies.reroute(RerouteRequest(route: .points(create.waypoints + [GeoPoint(lat: 38.73, lon: -9.12)]), waypoints: [])),
            "{route, waypoints?, destination?}", "reroute")
        try Self.expectMembers(
            ClientRequestBodies.fixes(FixBatchRequest(fixes: [FixInput(lat: 1, lon: 2, ts: F.t0)])), "{fixes}", "fix batch")
    }
}
