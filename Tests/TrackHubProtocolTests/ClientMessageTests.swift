import Testing
import TrackHubCore
@testable import TrackHubProtocol

struct MessageCase: Sendable, CustomTestStringConvertible {
    let rule: String
    let json: String
    let expected: ClientMessage?
    let outcome: Outcome
    var testDescription: String { rule }

    /// A case that must decode to `message`.
    init(_ rule: String, _ json: String, _ message: ClientMessage) {
        self.rule = rule
        self.json = json
        self.expected = message
        self.outcome = .ok
    }

    /// A case that must fail with `code`, the message containing `fragment`.
    init(_ rule: String, _ json: String, _ code: ErrorCode, _ fragment: String) {
        self.rule = rule
        self.json = json
        self.expected = nil
        self.outcome = .error(code, fragment)
    }
}

private let ts = "1699999990000"
private func fixJSON(_ extra: String) -> String {
    #"{"op":"fix","trip":"T1","lat":38.7158,"lon":-9.142,"ts":\#(ts)\#(extra)}"#
}
private func fix(_ change: (inout FixInput) -> Void = { _ in }) -> ClientMessage {
    var input = FixInput(lat: 38.7158, lon: -9.142, ts: 1_699_999_990_000)
    change(&input)
    return .fix(trip: "T1", fix: input)
}
private func viewport(_ west: Double, _ south: Double, _ east: Double, _ north: Double, zoom: Int) -> ClientMessage {
    .viewport(Viewport(west: west, south: south, east: east, north: north, zoom: zoom))
}

@Suite struct ClientMessageTests {
    static let cases: [MessageCase] = [
        // frame shape and op
        MessageCase("invalid JSON is bad_request", #"{"op":"ping""#, .badRequest, "invalid JSON"),
        MessageCase("replacement character in a string is fine", "{\"op\":\"ping\",\"x\":\"\u{FFFD}\"}", .ping),
        MessageCase("frame not an object (array) is bad_request", "[1]", .badRequest, "JSON object"),
        MessageCase("frame not an object (string) is bad_request", "\"ping\"", .badRequest, "JSON object"),
        MessageCase("missing op is bad_request", #"{"trip":"T1"}"#, .badRequest, "op is required"),
        MessageCase("op not a string is bad_request", #"{"op":7}"#, .badRequest, "op must be a string"),
        MessageCase("unknown op is bad_request", #"{"op":"teleport"}"#, .badRequest, "unknown op \"teleport\""),
        MessageCase("op is case-sensitive", #"{"op":"PING"}"#, .badRequest, "unknown op"),
        MessageCase("unknown fields are ignored", #"{"op":"ping","extra":{"deep":[1,2]},"x":null}"#, .ping),
        MessageCase("id of the wrong type is bad_request", #"{"op":"ping","id":true}"#, .badRequest, "id must be"),
        MessageCase("non-finite id is bad_request", #"{"op":"ping","id":1e400}"#, .badRequest, "id must be"),
        // hello
        MessageCase("hello without token", #"{"op":"hello"}"#, .hello(token: nil)),
        MessageCase("hello with token", #"{"op":"hello","token":"abc.def.ghi"}"#, .hello(token: "abc.def.ghi")),
        MessageCase("hello token not a string is bad_request", #"{"op":"hello","token":5}"#, .badRequest, "token must be a string"),
        // trip ids
        MessageCase("missing trip is bad_request", #"{"op":"subscribe"}"#, .badRequest, "trip is required"),
        MessageCase("trip not a string is bad_request", #"{"op":"subscribe","trip":12}"#, .badRequest, "trip must be"),
        MessageCase("trip id \"..\" is bad_request", #"{"op":"subscribe","trip":".."}"#, .badRequest, "trip must be"),
        MessageCase("trip id \".\" is bad_request", #"{"op":"unsubscribe","trip":"."}"#, .badRequest, "trip must be"),
        MessageCase("trip id of 65 characters is bad_request", #"{"op":"proceed","trip":"\#(String(repeating: "a", count: 65))"}"#, .badRequest, "trip must be"),
        MessageCase("trip id of 64 characters is accepted", #"{"op":"proceed","trip":"\#(String(repeating: "a", count: 64))"}"#, .proceed(trip: String(repeating: "a", count: 64))),
        MessageCase("trip id with a space is bad_request", #"{"op":"subscribe","trip":"a b"}"#, .badRequest, "trip must be"),
        MessageCase("empty trip id is bad_request", #"{"op":"subscribe","trip":""}"#, .badRequest, "trip must be"),
        MessageCase("trip id with non-ASCII is bad_request", #"{"op":"subscribe","trip":"tr\u00e9s"}"#, .badRequest, "trip must be"),
        MessageCase("trip id with every allowed character", #"{"op":"unsubscribe","trip":"Az09._:-..."}"#, .unsubscribe(trip: "Az09._:-...")),
        // subscribe
        MessageCase("subscribe defaults to frames", #"{"op":"subscribe","trip":"T1"}"#, .subscribe(trip: "T1", mode: .frames, sinceEvent: nil)),
        MessageCase("subscribe in segments mode", #"{"op":"subscribe","trip":"T1","mode":"segments","since_event":0}"#, .subscribe(trip: "T1", mode: .segments, sinceEvent: 0)),
        MessageCase("subscribe unknown mode is bad_request", #"{"op":"subscribe","trip":"T1","mode":"video"}"#, .badRequest, "mode must be"),
        MessageCase("since_event negative is bad_request", #"{"op":"subscribe","trip":"T1","since_event":-1}"#, .badRequest, "since_event"),
        MessageCase("since_event fraction is bad_request", #"{"op":"subscribe","trip":"T1","since_event":1.5}"#, .badRequest, "since_event must be an integer"),
        MessageCase("since_event as a string is bad_request", #"{"op":"subscribe","trip":"T1","since_event":"3"}"#, .badRequest, "since_event must be an integer"),
        // fix: lat / lon
        MessageCase("fix with the required fields", fixJSON(""), fix()),
        MessageCase("fix with every field", fixJSON(#","seq":7,"duration_ms":1500,"speed_mps":4.5,"heading":90,"accuracy_m":5"#), fix { $0.seq = 7; $0.durationMs = 1500; $0.speedMps = 4.5; $0.heading = 90; $0.accuracyM = 5 }),
        MessageCase("lat 91 is bad_request", #"{"op":"fix","trip":"T1","lat":91,"lon":0,"ts":\#(ts)}"#, .badRequest, "lat must be a number within ±90"),
        MessageCase("lat -90 is accepted", #"{"op":"fix","trip":"T1","lat":-90,"lon":180,"ts":\#(ts)}"#, .fix(trip: "T1", fix: FixInput(lat: -90, lon: 180, ts: 1_699_999_990_000))),
        MessageCase("lon -181 is bad_request", #"{"op":"fix","trip":"T1","lat":0,"lon":-181,"ts":\#(ts)}"#, .badRequest, "lon must be a number within ±180"),
        MessageCase("lat as a string is bad_request", #"{"op":"fix","trip":"T1","lat":"38","lon":0,"ts":\#(ts)}"#, .badRequest, "lat must be a number"),
        MessageCase("missing lat is bad_request", #"{"op":"fix","trip":"T1","lon":0,"ts":\#(ts)}"#, .badRequest, "lat is required"),
        MessageCase("lat null is bad_request", #"{"op":"fix","trip":"T1","lat":null,"lon":0,"ts":\#(ts)}"#, .badRequest, "lat must be"),
        MessageCase("huge lat (1e400) is bad_request", #"{"op":"fix","trip":"T1","lat":1e400,"lon":0,"ts":\#(ts)}"#, .badRequest, "lat must be"),
        // fix: ts
        MessageCase("ts before 2000 is bad_request", #"{"op":"fix","trip":"T1","lat":0,"lon":0,"ts":946684799999}"#, .badRequest, "ts must not be before 2000"),
        MessageCase("ts exactly 2000-01-01 is accepted", #"{"op":"fix","trip":"T1","lat":0,"lon":0,"ts":946684800000}"#, .fix(trip: "T1", fix: FixInput(lat: 0, lon: 0, ts: 946_684_800_000))),
        MessageCase("ts more than the clock skew ahead is bad_request", #"{"op":"fix","trip":"T1","lat":0,"lon":0,"ts":1700000300001}"#, .badRequest, "ts is more than 300000 ms ahead"),
        MessageCase("ts exactly the clock skew ahead is accepted", #"{"op":"fix","trip":"T1","lat":0,"lon":0,"ts":1700000300000}"#, .fix(trip: "T1", fix: FixInput(lat: 0, lon: 0, ts: 1_700_000_300_000))),
        MessageCase("ts fraction is bad_request", #"{"op":"fix","trip":"T1","lat":0,"lon":0,"ts":1699999990000.5}"#, .badRequest, "ts must be an integer"),
        MessageCase("ts huge (1e400) is bad_request", #"{"op":"fix","trip":"T1","lat":0,"lon":0,"ts":1e400}"#, .badRequest, "ts must be a finite integer"),
        MessageCase("ts 1e30 is bad_request", #"{"op":"fix","trip":"T1","lat":0,"lon":0,"ts":1e30}"#, .badRequest, "ts is more than"),
        MessageCase("ts written with an exponent is accepted", #"{"op":"fix","trip":"T1","lat":0,"lon":0,"ts":1.69999999e12}"#, .fix(trip: "T1", fix: FixInput(lat: 0, lon: 0, ts: 1_699_999_990_000))),
        MessageCase("missing ts is bad_request", #"{"op":"fix","trip":"T1","lat":0,"lon":0}"#, .badRequest, "ts is required"),
        // fix: seq
        MessageCase("seq negative is bad_request", fixJSON(#","seq":-1"#), .badRequest, "seq must be an integer from 0 to 9007199254740991"),
        MessageCase("seq 2^53 is bad_request", fixJSON(#","seq":9007199254740992"#), .badRequest, "seq must be an integer from 0"),
        MessageCase("seq 2^53-1 is accepted", fixJSON(#","seq":9007199254740991"#), fix { $0.seq = 9_007_199_254_740_991 }),
        MessageCase("seq 1.5 is bad_request", fixJSON(#","seq":1.5"#), .badRequest, "seq must be an integer"),
        MessageCase("seq null counts as absent", fixJSON(#","seq":null"#), fix()),
        // fix: optional numbers
        MessageCase("speed_mps negative is bad_request", fixJSON(#","speed_mps":-0.1"#), .badRequest, "speed_mps must be a number ≥ 0"),
        MessageCase("accuracy_m negative is bad_request", fixJSON(#","accuracy_m":-3"#), .badRequest, "accuracy_m must be a number ≥ 0"),
        MessageCase("accuracy_m huge (1e400) is bad_request", fixJSON(#","accuracy_m":1e400"#), .badRequest, "accuracy_m"),
        // PROTOCOL 18: the phone's battery, a number 0–100.
        MessageCase("battery is kept", fixJSON(#","battery":42.5"#), fix { $0.batteryPercent = 42.5 }),
        MessageCase("battery 0 and 100 are within range", fixJSON(#","battery":100"#), fix { $0.batteryPercent = 100 }),
        MessageCase("battery above 100 is bad_request", fixJSON(#","battery":101"#), .badRequest, "battery"),
        MessageCase("battery negative is bad_request", fixJSON(#","battery":-1"#), .badRequest, "battery"),
        MessageCase("battery as a string is bad_request", fixJSON(#","battery":"50""#), .badRequest, "battery"),
        MessageCase("heading is normalised modulo 360", fixJSON(#","heading":-90"#), fix { $0.heading = 270 }),
        MessageCase("heading 720.5 is normalised to 0.5", fixJSON(#","heading":720.5"#), fix { $0.heading = 0.5 }),
        MessageCase("heading huge (1e400) is bad_request", fixJSON(#","heading":1e400"#), .badRequest, "heading must be a finite number"),
        MessageCase("duration_ms may be any finite number", fixJSON(#","duration_ms":-250.5"#), fix { $0.durationMs = -250.5 }),
        MessageCase("duration_ms huge (-1e400) is bad_request", fixJSON(#","duration_ms":-1e400"#), .badRequest, "duration_ms"),
        MessageCase("duration_ms as a string is bad_request", fixJSON(#","duration_ms":"5""#), .badRequest, "duration_ms"),
        MessageCase("fix without a trip is bad_request", #"{"op":"fix","lat":0,"lon":0,"ts":\#(ts)}"#, .badRequest, "trip is required"),
        // proceed / unsubscribe / ping
        MessageCase("proceed names its trip", #"{"op":"proceed","trip":"T-9"}"#, .proceed(trip: "T-9")),
        MessageCase("unsubscribe without trip is bad_request", #"{"op":"unsubscribe"}"#, .badRequest, "trip is required"),
        MessageCase("ping", #"{"op":"ping","id":1}"#, .ping),
        // viewport
        MessageCase("viewport plain box", #"{"op":"viewport","bbox":[-10,30,5,45],"zoom":5}"#, viewport(-10, 30, 5, 45, zoom: 5)),
        MessageCase("viewport null bbox stops clusters and ignores zoom", #"{"op":"viewport","bbox":null,"zoom":"x"}"#, .viewport(nil)),
        MessageCase("viewport missing bbox is bad_request", #"{"op":"viewport","zoom":3}"#, .badRequest, "bbox is required"),
        MessageCase("viewport west 190 wraps to -170", #"{"op":"viewport","bbox":[190,0,200,10],"zoom":3}"#, viewport(-170, 0, -160, 10, zoom: 3)),
        MessageCase("viewport crossing the antimeridian keeps west > east", #"{"op":"viewport","bbox":[170,-10,190,10],"zoom":3}"#, viewport(170, -10, -170, 10, zoom: 3)),
        MessageCase("viewport east 180 stays 180", #"{"op":"viewport","bbox":[0,0,180,10],"zoom":3}"#, viewport(0, 0, 180, 10, zoom: 3)),
        MessageCase("viewport 360 degrees wide is the world", #"{"op":"viewport","bbox":[-180,-90,180,90],"zoom":0}"#, .viewport(.world(zoom: 0))),
        MessageCase("viewport wider than 360 degrees is the world", #"{"op":"viewport","bbox":[-400,-10,100,10],"zoom":2}"#, .viewport(.world(zoom: 2))),
        MessageCase("viewport latitudes are clamped", #"{"op":"viewport","bbox":[-10,-89,10,89],"zoom":1}"#, viewport(-10, -85.05112878, 10, 85.05112878, zoom: 1)),
        MessageCase("viewport south > north is bad_request", #"{"op":"viewport","bbox":[0,20,10,10],"zoom":3}"#, .badRequest, "south"),
        MessageCase("viewport zoom 22.7 floors to 22", #"{"op":"viewport","bbox":[0,0,1,1],"zoom":22.7}"#, viewport(0, 0, 1, 1, zoom: 22)),
        MessageCase("viewport zoom 23 is bad_request", #"{"op":"viewport","bbox":[0,0,1,1],"zoom":23}"#, .badRequest, "zoom must be a number from 0 to 22"),
        MessageCase("viewport zoom -0.5 floors below 0 and is bad_request", #"{"op":"viewport","bbox":[0,0,1,1],"zoom":-0.5}"#, .badRequest, "zoom"),
        MessageCase("viewport missing zoom is bad_request", #"{"op":"viewport","bbox":[0,0,1,1]}"#, .badRequest, "zoom is required"),
        MessageCase("viewport bbox of 3 numbers is bad_request", #"{"op":"viewport","bbox":[0,0,1],"zoom":1}"#, .badRequest, "bbox must be"),
        MessageCase("viewport bbox with a huge number is bad_request", #"{"op":"viewport","bbox":[0,0,1e400,1],"zoom":1}"#, .badRequest, "bbox must be"),
        MessageCase("viewport bbox with a string is bad_request", #"{"op":"viewport","bbox":[0,"0",1,1],"zoom":1}"#, .badRequest, "bbox must be"),
    ]

    @Test(arguments: cases)
    func validation(_ testCase: MessageCase) {
        let (_, result) = ClientMessage.decode(bytes(testCase.json), now: testNow)
        switch result {
        case .success(let message):
            if let expected = testCase.expected {
                #expect(message == expected, "\(testCase.rule)")
            } else {
                expectError(nil, testCase.outcome, testCase.rule)
            }
        case .failure(let error):
            expectError(error, testCase.outcome, testCase.rule)
        }
    }

    @Test func invalidUTF8IsBadRequest() {
        let frame = bytes(#"{"op":"ping","id":"a"#) + [0xC3, 0x28] + bytes(#""}"#)
        let (id, result) = ClientMessage.decode(frame, now: testNow)
        #expect(id == nil)
        #expect(throws: ProtocolError.self) { try result.get() }
        if case .failure(let error) = result { #expect(error.message.contains("UTF-8")) }
    }

    @Test func nesting33DeepIsBadRequest() {
        let json = #"{"op":"ping","x":"# + String(repeating: "[", count: 32) + String(repeating: "]", count: 32) + "}"
        let (_, result) = ClientMessage.decode(bytes(json), now: testNow)
        guard case .failure(let error) = result else {
            Issue.record("decoded")
            return
        }
        #expect(error == ProtocolError(.badRequest, "JSON nesting deeper than 32 levels", byteOffset: 48))
        let ok = #"{"op":"ping","x":"# + String(repeating: "[", count: 31) + String(repeating: "]", count: 31) + "}"
        #expect((try? ClientMessage.decode(bytes(ok), now: testNow).result.get()) == .ping)
    }

    @Test func messageOverTheSizeLimitIsTooLarge() {
        let limits = ProtocolLimits(maxMessageBytes: 16)
        let (_, result) = ClientMessage.decode(bytes(#"{"op":"ping","pad":"xxxxxx"}"#), limits: limits, now: testNow)
        guard case .failure(let error) = result else {
            Issue.record("decoded")
            return
        }
        #expect(error.code == .tooLarge)
    }

    @Test func clockSkewComesFromLimits() {
        let limits = ProtocolLimits(maxClockSkewMs: 0)
        let ahead = #"{"op":"fix","trip":"T","lat":0,"lon":0,"ts":1700000000001}"#
        #expect(throws: ProtocolError.self) { try ClientMessage.decode(bytes(ahead), limits: limits, now: testNow).result.get() }
        let atNow = #"{"op":"fix","trip":"T","lat":0,"lon":0,"ts":1700000000000}"#
        #expect((try? ClientMessage.decode(bytes(atNow), limits: limits, now: testNow).result.get()) != nil)
    }

    struct IDCase: Sendable, CustomTestStringConvertible {
        let rule: String
        let json: String
        let id: MessageID?
        let valid: Bool
        var testDescription: String { rule }
    }

    static let idCases: [IDCase] = [
        IDCase(rule: "string id echoed", json: #"{"op":"ping","id":"abc"}"#, id: .string("abc"), valid: true),
        IDCase(rule: "number id echoed", json: #"{"op":"ping","id":42}"#, id: .number("42"), valid: true),
        IDCase(rule: "number id keeps its literal", json: #"{"op":"ping","id":1.50e0}"#, id: .number("1.50e0"), valid: true),
        IDCase(rule: "negative number id", json: #"{"id":-7,"op":"ping"}"#, id: .number("-7"), valid: true),
        IDCase(rule: "no id", json: #"{"op":"ping"}"#, id: nil, valid: true),
        IDCase(rule: "null id is no id", json: #"{"op":"ping","id":null}"#, id: nil, valid: true),
        IDCase(rule: "string id echoed on unknown op", json: #"{"op":"nope","id":"q1"}"#, id: .string("q1"), valid: false),
        IDCase(rule: "number id echoed on bad lat", json: #"{"op":"fix","id":9,"trip":"T","lat":91,"lon":0,"ts":1699999990000}"#, id: .number("9"), valid: false),
        IDCase(rule: "id echoed on missing op", json: #"{"id":"m"}"#, id: .string("m"), valid: false),
        IDCase(rule: "id echoed when op is not a string", json: #"{"id":3,"op":[]}"#, id: .number("3"), valid: false),
        IDCase(rule: "escaped string id decoded", json: #"{"op":"ping","id":"a\"b\u00e9"}"#, id: .string("a\"bé"), valid: true),
        IDCase(rule: "no id from invalid JSON", json: #"{"op":"ping","id":1"#, id: nil, valid: false),
        IDCase(rule: "duplicate id keys: last wins", json: #"{"op":"ping","id":1,"id":"two"}"#, id: .string("two"), valid: true),
    ]

    @Test(arguments: idCases)
    func idIsRecovered(_ testCase: IDCase) {
        let (id, result) = ClientMessage.decode(bytes(testCase.json), now: testNow)
        #expect(id == testCase.id, "\(testCase.rule)")
        switch result {
        case .success: #expect(testCase.valid, "\(testCase.rule)")
        case .failure: #expect(!testCase.valid, "\(testCase.rule)")
        }
    }

    @Test func numberIDIsEchoedVerbatimAsRe() throws {
        let (id, _) = ClientMessage.decode(bytes(#"{"op":"ping","id":1.50e0}"#), now: testNow)
        let reply = ServerReplies.pong(re: id, t: 5)
        #expect(text(reply) == #"{"type":"pong","re":1.50e0,"t":5}"#)
        let (stringID, _) = ClientMessage.decode(bytes(#"{"op":"nope","id":"x\ny"}"#), now: testNow)
        let error = ServerReplies.error(re: stringID, .badRequest("unknown op"))
        #expect(text(error) == #"{"type":"error","re":"x\ny","code":"bad_request","message":"unknown op"}"#)
    }

    @Test func decodesFromRawMemory() {
        let frame = bytes(#"{"op":"proceed","trip":"T1","id":"r"}"#)
        let (id, result) = frame.withUnsafeBytes { ClientMessage.decode($0, now: testNow) }
        #expect(id == .string("r"))
        #expect((try? result.get()) == .proceed(trip: "T1"))
        #expect((try? result.get())?.trip == "T1")
        #expect((try? result.get())?.op == "proceed")
    }
}
