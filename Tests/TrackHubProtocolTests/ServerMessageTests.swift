import Testing
import TrackHubCore
@testable import TrackHubProtocol

/// `ServerMessage`, the one reader of the hub's messages: every type of PROTOCOL section 4
/// (and `jump`, 6.2) as the hub's own encoders write it, each field its readers use, and
/// agreement with the strict parse on whatever JSON object it is given.
@Suite struct ServerMessageTests {
    private static let t0 = WireFixtures.t0

    /// Checks that every top-level member the strict parse sees reads the same through the
    /// accessors, and that a name absent at the top level reads as absent.
    private func expectAgreesWithTheTree(_ message: ServerMessage, absent: [StaticString] = [], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let tree = try message.object()
        for (key, value) in tree {
            // The accessors take a StaticString; reach them through the members we know.
            guard let name = Self.knownKeys.first(where: { $0.description == key }) else {
                Issue.record("member \(key) has no accessor check", sourceLocation: sourceLocation)
                continue
            }
            #expect(message.contains(name), "\(key)", sourceLocation: sourceLocation)
            #expect(message.value(name) == value, "\(key)", sourceLocation: sourceLocation)
            #expect(message.string(name) == value.stringValue, "\(key)", sourceLocation: sourceLocation)
            #expect(message.double(name) == value.doubleValue, "\(key)", sourceLocation: sourceLocation)
            #expect(message.int(name) == value.numberValue?.int64Value, "\(key)", sourceLocation: sourceLocation)
            #expect(message.bool(name) == value.boolValue, "\(key)", sourceLocation: sourceLocation)
            #expect(message.isNull(name) == value.isNull, "\(key)", sourceLocation: sourceLocation)
        }
        for name in absent {
            #expect(tree[name.description] == nil, "\(name) is at the top level after all", sourceLocation: sourceLocation)
            #expect(!message.contains(name) && message.value(name) == nil && message.int(name) == nil, "\(name)", sourceLocation: sourceLocation)
        }
    }

    /// Every member name the hub's messages carry at their top level.
    private static let knownKeys: [StaticString] = [
        "type", "re", "session", "server", "protocol", "tick_hz", "fleet_hz", "trip", "status", "rider", "config", "route",
        "waypoints", "destination", "position", "bearing", "progress", "done_m", "remaining_m", "eta_s", "leg", "trail",
        "last_event", "recovered", "seq", "t", "lat", "lon", "jump", "t0", "duration_ms", "path", "progress_from",
        "progress_to", "n", "name", "index", "remaining_waypoints", "distance_m", "reason", "stop", "stops_before",
        "visible", "interval_ms", "watched", "zoom", "bbox", "total", "truncated", "items", "applied", "code", "message",
        "last_fix_t", "battery", "stale", "stop_name",
    ]

    @Test func welcome() throws {
        let message = ServerMessage(ServerReplies.welcome(re: .integer(1), session: "s-1", server: "trackhub 1.2", tickHz: 10, fleetHz: 2.5))
        #expect(message.type == .welcome)
        #expect(message.re == .number("1"))
        #expect(message.string("session") == "s-1")
        #expect(message.int("protocol") == 1 && message.int("tick_hz") == 10)
        #expect(message.double("fleet_hz") == 2.5)
        #expect(message.int("fleet_hz") == nil, "2.5 is not an integer")
        try expectAgreesWithTheTree(message)
    }

    @Test func snapshot() throws {
        let view = try WireFixtures.view(at: Self.t0 + 6000)
        let message = ServerMessage(ServerMessages.snapshot(view, re: .string("sub-7"), recovered: true))
        #expect(message.type == .snapshot)
        #expect(message.re == .string("sub-7"))
        #expect(message.string("trip") == "T1")
        #expect(message.string("status", is: "moving") || message.string("status", is: "holding"))
        #expect(message.bool("recovered") == true)
        #expect(message.value("config")?["mode"] == "car")
        #expect(message.value("waypoints")?.arrayValue?.count == 1)
        #expect(message.value("trail")?.arrayValue?.count == 2)
        #expect(message.value("rider") == ["id": "r1", "name": "Ana"])
        // `index` and `visited` belong to the waypoints, `mode` to the config: not the snapshot's.
        try expectAgreesWithTheTree(message, absent: ["index", "visited", "mode", "id"])

        let unknown = ServerMessage(ServerMessages.snapshot(TripView(id: "nope", trip: nil, now: Self.t0), re: nil, recovered: nil))
        #expect(unknown.string("status", is: "unknown") && unknown.isNull("route") && unknown.re == nil)
        #expect(!unknown.contains("recovered"))
        try expectAgreesWithTheTree(unknown)
    }

    @Test func frame() throws {
        let message = ServerMessage(ServerMessages.frame(trip: "T1", seq: 42, WireFixtures.frame, headroom: 0))
        #expect(message.type == .frame)
        #expect(message.int("seq") == 42 && message.int("t") == Self.t0 + 123)
        #expect(message.double("lat") == 38.7158123 && message.double("bearing") == 123.5)
        #expect(message.string("status", is: "moving") && !message.string("status", is: "holding"))
        #expect(message.bool("jump") == nil, "only a jump frame carries jump (PROTOCOL 6.2)")
        try expectAgreesWithTheTree(message)

        let jump = ServerMessage(ServerMessages.frame(trip: "T1", seq: 43, WireFixtures.jumpFrame))
        #expect(jump.bool("jump") == true && jump.isNull("progress") && jump.double("bearing") == 0)
        try expectAgreesWithTheTree(jump)
    }

    @Test func segment() throws {
        let message = ServerMessage(ServerMessages.segment(trip: "T1", seq: 7, WireFixtures.segment))
        #expect(message.type == .segment)
        #expect(message.int("seq") == 7 && message.int("t0") == Self.t0 && message.int("duration_ms") == 4000)
        #expect(message.value("path")?.arrayValue?.count == 3)
        #expect(message.int("t") == nil, "a segment has t0, not t")
        try expectAgreesWithTheTree(message)

        let jump = ServerMessage(ServerMessages.segment(trip: "T1", seq: 8, WireFixtures.jumpSegment))
        #expect(jump.bool("jump") == true && jump.int("duration_ms") == 0)
        try expectAgreesWithTheTree(jump)
    }

    @Test func everyEventKind() throws {
        for event in WireFixtures.events {
            let message = ServerMessage(ServerMessages.event(trip: "T1", event))
            #expect(message.type == .event)
            #expect(message.int("n") == Int64(event.n))
            #expect(message.string("name") == event.kind.name)
            if case .waypointReached(let index, _) = event.kind { #expect(message.int("index") == Int64(index)) }
            if event.position == nil { #expect(message.isNull("lat") && message.double("lat") == nil) }
            try expectAgreesWithTheTree(message)
        }
        let ended = ServerMessage(ServerMessages.event(trip: "T1", WireFixtures.events[7]))
        #expect(ended.string("name", is: "ended") && !ended.string("name", is: "end"))
    }

    @Test func stopAndCadence() throws {
        // Sections 17 and 18 have no encoder yet: their messages as PROTOCOL gives them.
        let stop = ServerMessage(#"{"type":"stop","trip":"T1","stop":"s2","stops_before":1,"eta_s":240,"visible":true}"#)
        #expect(stop.type == .stop && stop.string("stop") == "s2" && stop.int("stops_before") == 1 && stop.bool("visible") == true)
        try expectAgreesWithTheTree(stop)
        let cadence = ServerMessage(#"{"type":"cadence","trip":"T1","interval_ms":5000,"watched":false}"#)
        #expect(cadence.type == .cadence && cadence.int("interval_ms") == 5000 && cadence.bool("watched") == false)
        try expectAgreesWithTheTree(cadence)
    }

    @Test func clusters() throws {
        let first = ServerMessage(FleetMessages.clusters(
            re: .integer(9), t: Self.t0, viewport: WireFixtures.viewport, total: 7, truncated: false, items: WireFixtures.clusterItems))
        #expect(first.type == .clusters)
        #expect(first.int("re") == 9 && first.int("t") == Self.t0 && first.int("zoom") == 11 && first.int("total") == 7)
        #expect(first.value("items")?.arrayValue?.count == 3)
        // The items' own members are not the message's.
        try expectAgreesWithTheTree(first, absent: ["count", "id", "expansion_zoom", "bounds"])

        let update = ServerMessage(FleetMessages.clusters(
            re: nil, t: Self.t0 + 500, viewport: WireFixtures.viewport, total: 7, truncated: true, items: WireFixtures.clusterItems))
        #expect(update.re == nil && update.int("re") == nil && update.int("t") == Self.t0 + 500 && update.bool("truncated") == true)
    }

    @Test func ack() throws {
        let applied = ServerMessage(ServerReplies.ack(re: .integer(12), trip: "T1", seq: 12, applied: true))
        #expect(applied.type == .ack)
        #expect(applied.int("re") == 12 && applied.int("seq") == 12 && applied.bool("applied") == true)
        #expect(!applied.contains("reason"))
        try expectAgreesWithTheTree(applied)

        let refused = ServerMessage(ServerReplies.ack(re: nil, trip: "T1", seq: nil, applied: false, reason: "out_of_order"))
        #expect(refused.bool("applied") == false && refused.string("reason") == "out_of_order")
        #expect(refused.int("seq") == nil && refused.re == nil)
        try expectAgreesWithTheTree(refused)
    }

    @Test func unsubscribedPongAndError() throws {
        let unsubscribed = ServerMessage(ServerReplies.unsubscribed(re: .integer(3), trip: "T1", reason: "forbidden"))
        #expect(unsubscribed.type == .unsubscribed && unsubscribed.string("reason") == "forbidden")
        try expectAgreesWithTheTree(unsubscribed)

        let pong = ServerMessage(ServerReplies.pong(re: .number("1.50"), t: Self.t0))
        #expect(pong.type == .pong && pong.int("t") == Self.t0)
        #expect(pong.re == .number("1.50"), "re repeats the id's literal")
        try expectAgreesWithTheTree(pong)

        // A message with quotes, a backslash, a control character and non-ASCII text: escaped on the wire.
        let text = "field \"lat\" must be a number\\not \u{1}: got «x» 🚲"
        let error = ServerMessage(ServerReplies.error(re: .string("f\"1"), ProtocolError(.badRequest, text)))
        #expect(error.type == .error)
        #expect(error.string("code", is: "bad_request"))
        #expect(error.string("message") == text)
        #expect(error.re == .string("f\"1"))
        try expectAgreesWithTheTree(error)
    }

    @Test func typesAreReadWhereverTheyStandAndWhateverTheSpacing() {
        let spaced = ServerMessage(" {\n \"trip\" : \"T1\" ,\t\"seq\": 5 , \"type\"\r\n:\"frame\", \"t\" : -12 } ")
        #expect(spaced.type == .frame && spaced.int("seq") == 5 && spaced.int("t") == -12 && spaced.string("trip") == "T1")
        for type in ServerMessageType.allCases {
            #expect(ServerMessage(#"{"type":"\#(type.rawValue)"}"#).type == type)
        }
        #expect(ServerMessage(#"{"type":"frames"}"#).type == nil)
        #expect(ServerMessage(#"{"type":"fram"}"#).type == nil)
        #expect(ServerMessage(#"{"type":7}"#).type == nil)
        #expect(ServerMessage(#"{"kind":"frame"}"#).type == nil)
        // Escapes in a key or a value read as the text they stand for.
        let escaped = ServerMessage(#"{"\u0074ype":"fr\u0061me","name":"end\u0065d"}"#)
        #expect(escaped.type == nil, "a type with an escape is not matched in place")
        #expect(escaped.string("type") == "frame" && escaped.string("name", is: "ended"))
    }

    @Test func numbersReadAsTheParserReadsThem() {
        let message = ServerMessage(#"{"a":7.0,"b":7.5,"c":1e2,"d":-0,"e":9007199254740993,"f":9223372036854775807,"g":99999999999999999999,"h":"7","i":01,"j":-,"k":null,"l":true,"m":1700000000123456}"#)
        #expect(message.int("a") == 7 && message.int("b") == nil && message.int("c") == 100 && message.int("d") == 0)
        #expect(message.int("m") == 1_700_000_000_123_456, "a time in microseconds (16 digits) is exact")
        // Past 2^53 an integer reads as the parser's Double gives it, as in the tree.
        #expect(message.int("e") == 9_007_199_254_740_992)
        #expect(message.int("f") == nil, "2^63 - 1 rounds to 2^63, which no Int64 holds")
        #expect(message.int("g") == nil && message.double("g") == 1e20)
        #expect(message.int("h") == nil && message.double("h") == nil, "a string is not a number")
        #expect(message.int("i") == nil && message.int("j") == nil, "not JSON numbers")
        #expect(message.int("k") == nil && message.isNull("k") && message.bool("l") == true && message.int("l") == nil)
    }

    @Test func twoMembersInOneWalkReadAsTheyDoOneByOne() throws {
        let frame = ServerMessage(ServerMessages.frame(trip: "T1", seq: 42, WireFixtures.frame))
        let (seq, t) = frame.members("seq", "t")
        #expect(seq?.int == 42 && t?.int == Self.t0 + 123)
        // In either order, with one absent, or the same key twice.
        let (status, lat) = frame.members("status", "lat")
        #expect(status?.isString("moving") == true && lat?.double == frame.double("lat"))
        let (jump, trip) = frame.members("jump", "trip")
        #expect(jump == nil && trip?.string == "T1")
        let (a, b) = frame.members("seq", "seq")
        #expect(a?.int == 42 && b == nil, "a key is matched once")
        let ack = ServerMessage(ServerReplies.ack(re: nil, trip: "T1", seq: 3, applied: false, reason: "holding"))
        let (ackSeq, applied) = ack.members("seq", "applied")
        #expect(ackSeq?.int == 3 && applied?.bool == false && applied?.int == nil && applied?.isNull == false)
        let reason = try #require(ack.member("reason"))
        #expect(reason.string == "holding" && reason.isString("holding") && reason.json == "holding" && reason.double == nil)
        #expect(ack.member("nope") == nil)
    }

    @Test func aRepeatedKeyReadsAsItsFirstHereAndItsLastInTheTree() throws {
        let message = ServerMessage(#"{"type":"ack","seq":1,"seq":2}"#)
        #expect(message.int("seq") == 1)
        #expect(try message.object()["seq"] == 2)
    }

    @Test func brokenMessagesReadAsNothingAndFailTheStrictParse() {
        let whole = ServerMessages.frame(trip: "T\"1", seq: 42, WireFixtures.frame)
        for length in 0..<whole.count {
            let message = ServerMessage(Array(whole[..<length]))
            // Any prefix: no crash, and a member is found only when its key made it before the cut.
            let prefix = String(decoding: message.bytes, as: UTF8.self)
            _ = (message.re, message.value("status"), message.string("trip"), message.bool("jump"), message.double("lon"))
            #expect(message.type == (prefix.contains(#""type":"frame""#) ? .frame : nil), "prefix of \(length) bytes")
            #expect(message.contains("status") == prefix.contains(#""status":""#), "prefix of \(length) bytes")
            let t = WireFixtures.frame.t
            #expect(message.int("t") == (prefix.contains(#""t":\#(t),"#) ? t : nil), "a number cut short is no number (\(length) bytes)")
            #expect(throws: ProtocolError.self) { try message.object() }
        }
        for text in ["", "[]", "\"frame\"", "{", "{\"type\"", "{\"type\":", "{\"type\":\"frame", "{\"type\" \"frame\"}", "{type:\"frame\"}"] {
            #expect(ServerMessage(text).type == nil, "\(text)")
        }
        #expect(throws: ProtocolError.self) { try ServerMessage("[1]").object() }
    }

    /// Random objects, nested values reusing the same keys: every accessor agrees with the
    /// strict parse on every key, present or not.
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func randomObjectsReadAsTheirTree(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let keys: [StaticString] = ["type", "t", "seq", "trip", "items", "re", "name"]
        for _ in 0..<300 {
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0...6, using: &rng) {
                object[keys[Int.random(in: 0..<keys.count, using: &rng)].description] = Self.randomValue(&rng, keys: keys, depth: 0)
            }
            var writer = JSONWriter()
            writer.value(.object(object))
            let message = ServerMessage(writer.finish())
            let tree = try message.object()
            for (first, second) in zip(keys, keys.dropFirst() + keys.prefix(1)) {
                let (a, b) = message.members(first, second)
                #expect(a?.json == tree[first.description] && b?.json == tree[second.description], "\(first), \(second)")
            }
            for key in keys {
                let value = tree[key.description]
                #expect(message.contains(key) == (value != nil))
                #expect(message.value(key) == value)
                #expect(message.string(key) == value?.stringValue)
                #expect(message.double(key) == value?.doubleValue.flatMap { $0.isFinite ? $0 : nil })
                #expect(message.int(key) == value?.numberValue?.int64Value)
                #expect(message.bool(key) == value?.boolValue)
                #expect(message.isNull(key) == (value?.isNull ?? false))
            }
        }
    }

    private static func randomValue(_ rng: inout SplitMix64, keys: [StaticString], depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth < 3 ? 8 : 6), using: &rng) {
        case 0: return .null
        case 1: return .bool(rng.next() % 2 == 0)
        case 2: return .number(JSONNumber(Int64.random(in: -1_000_000_000_000_000...1_000_000_000_000_000, using: &rng)))
        case 3: return .number(JSONNumber(rng.uniform(-1e6...1e6)))
        case 4:
            // Quotes, backslashes, braces and key-like text inside strings must not confuse the walk.
            let pieces = ["a", "\"", "\\", "{", "}", "[", "]", ",", ":", "\"t\":1", "é", "\u{1}", "🚲", " "]
            return .string((0..<Int.random(in: 0...6, using: &rng)).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &rng)] }.joined())
        case 5: return .string(keys[Int.random(in: 0..<keys.count, using: &rng)].description)
        case 6: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in randomValue(&rng, keys: keys, depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                object[keys[Int.random(in: 0..<keys.count, using: &rng)].description] = randomValue(&rng, keys: keys, depth: depth + 1)
            }
            return .object(object)
        }
    }
}
