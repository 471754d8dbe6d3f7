import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// Raw sockets, for what the test clients cannot send: binary frames, invalid UTF-8,
/// hand-made HTTP requests and upgrades.
enum RawWire {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func connect(port: Int, timeoutSeconds: Int = 10) throws -> Int32 {
        try Loopback.connect(port: port, readTimeoutSeconds: timeoutSeconds)
    }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { throw Failure(description: "send failed") }
            sent += n
        }
    }

    /// Reads until `done` says the bytes so far are enough, the peer closes, or the timeout.
    static func receive(_ fd: Int32, until done: ([UInt8]) -> Bool = { _ in false }) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !done(received) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received.append(contentsOf: buffer[0..<n])
        }
        return received
    }

    /// Sends raw request bytes and returns the status of the HTTP answer (0: none).
    static func httpStatus(port: Int, request: [UInt8]) throws -> Int {
        let fd = try connect(port: port)
        defer { close(fd) }
        try? sendAll(fd, request)
        let answer = receive(fd) { $0.count >= 12 && $0.contains(10) }
        let line = String(decoding: answer.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        let parts = line.split(separator: " ")
        return parts.count >= 2 ? Int(parts[1]) ?? 0 : 0
    }

    static func upgradeRequest(port: Int, path: String, extra: String = "") -> [UInt8] {
        Array(("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\(extra)\r\n").utf8)
    }

    /// The HTTP status a WebSocket upgrade gets (101 when accepted).
    static func upgradeStatus(port: Int, path: String) throws -> Int {
        try httpStatus(port: port, request: upgradeRequest(port: port, path: path))
    }

    /// Opens a WebSocket, sends one frame (opcode, payload; masked, as a client must) and
    /// returns the code of the close frame the hub answers with (nil: none).
    static func closeCode(port: Int, opcode: UInt8, payload: [UInt8]) throws -> UInt16? {
        let fd = try connect(port: port)
        defer { close(fd) }
        try sendAll(fd, upgradeRequest(port: port, path: "/v1/ws"))
        let head = receive(fd) { $0.count >= 4 && $0.suffix(4) == [13, 10, 13, 10] }
        guard String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else { throw Failure(description: "no 101") }
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: payload.count >> shift)) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try? sendAll(fd, frame)
        // Server frames are unmasked: walk them until a close frame (opcode 8).
        var bytes = receive(fd) { bytes in closeFrameCode(bytes) != nil }
        if bytes.isEmpty { bytes = [] }
        return closeFrameCode(bytes) ?? nil
    }

    /// The code of the first close frame in `bytes` (.some(nil) for a close without a code).
    private static func closeFrameCode(_ bytes: [UInt8]) -> UInt16?? {
        var offset = 0
        while offset + 2 <= bytes.count {
            let opcode = bytes[offset] & 0x0F
            var length = Int(bytes[offset + 1] & 0x7F)
            var header = 2
            if length == 126 {
                guard offset + 4 <= bytes.count else { return nil }
                length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                header = 4
            } else if length == 127 {
                guard offset + 10 <= bytes.count else { return nil }
                length = (2..<10).reduce(0) { $0 << 8 | Int(bytes[offset + $1]) }
                header = 10
            }
            guard offset + header + length <= bytes.count else { return nil }
            if opcode == 8 {
                if length < 2 { return .some(nil) }
                return .some(UInt16(bytes[offset + header]) << 8 | UInt16(bytes[offset + header + 1]))
            }
            offset += header + length
        }
        return nil
    }
}

/// The bad-input catalogue: each bad input gets its expected error (or close code), the
/// connection (where it stays open) still works afterwards, and a second client watching a
/// trip sees nothing change.
@Suite struct BadInputCatalogueTests {
    struct Case: CustomStringConvertible {
        var name: String
        var text: String
        var code: String
        /// A word the error message must contain (the field's name).
        var field: String?
        var description: String { name }
    }

    static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    static func fix(_ extra: String, trip: String = "T1") -> String {
        #"{"op":"fix","trip":"\#(trip)",\#(extra)}"#
    }

    static var now: Int64 { nowMillis() }

    /// WebSocket messages that get an `error` and leave the connection open.
    static var messageCases: [Case] {
        let ts = now
        let ok = #""lat":38.7158,"lon":-9.1420,"ts":\#(ts)"#
        return [
            Case(name: "invalid JSON", text: "{not json", code: "bad_request"),
            Case(name: "empty frame", text: "", code: "bad_request"),
            Case(name: "whitespace only", text: "   ", code: "bad_request"),
            Case(name: "JSON array", text: "[1,2]", code: "bad_request"),
            Case(name: "JSON string", text: #""ping""#, code: "bad_request"),
            Case(name: "JSON null", text: "null", code: "bad_request"),
            Case(name: "JSON number", text: "42", code: "bad_request"),
            Case(name: "trailing garbage", text: #"{"op":"ping"} x"#, code: "bad_request"),
            Case(name: "two objects", text: #"{"op":"ping"}{"op":"ping"}"#, code: "bad_request"),
            Case(name: "unterminated string", text: #"{"op":"ping"#, code: "bad_request"),
            Case(name: "bad escape", text: #"{"op":"p\xng"}"#, code: "bad_request"),
            Case(name: "lone surrogate escape", text: #"{"op":"subscribe","trip":"\ud800"}"#, code: "bad_request"),
            Case(name: "raw control character", text: "{\"op\":\"ping\u{01}\"}", code: "bad_request"),
            Case(name: "single quotes", text: "{'op':'ping'}", code: "bad_request"),
            Case(name: "NaN literal", text: fix(#""lat":NaN,"lon":1,"ts":\#(ts)"#), code: "bad_request"),
            Case(name: "Infinity literal", text: fix(#""lat":Infinity,"lon":1,"ts":\#(ts)"#), code: "bad_request"),
            Case(name: "no op", text: "{}", code: "bad_request", field: "op"),
            Case(name: "op not a string", text: #"{"op":5}"#, code: "bad_request", field: "op"),
            Case(name: "unknown op", text: #"{"op":"dance"}"#, code: "bad_request", field: "op"),
            Case(name: "op in capitals", text: #"{"op":"PING"}"#, code: "bad_request", field: "op"),
            Case(name: "id an object", text: #"{"op":"ping","id":{}}"#, code: "bad_request", field: "id"),
            Case(name: "subscribe without trip", text: #"{"op":"subscribe"}"#, code: "bad_request", field: "trip"),
            Case(name: "trip a number", text: #"{"op":"subscribe","trip":5}"#, code: "bad_request", field: "trip"),
            Case(name: "trip empty", text: #"{"op":"subscribe","trip":""}"#, code: "bad_request", field: "trip"),
            Case(name: "trip 65 characters", text: #"{"op":"subscribe","trip":"\#(String(repeating: "a", count: 65))"}"#, code: "bad_request", field: "trip"),
            Case(name: "trip ..", text: #"{"op":"subscribe","trip":".."}"#, code: "bad_request", field: "trip"),
            Case(name: "trip with a slash", text: #"{"op":"subscribe","trip":"a/b"}"#, code: "bad_request", field: "trip"),
            Case(name: "trip with a space", text: #"{"op":"unsubscribe","trip":"a b"}"#, code: "bad_request", field: "trip"),
            Case(name: "unknown mode", text: #"{"op":"subscribe","trip":"T1","mode":"video"}"#, code: "bad_request", field: "mode"),
            Case(name: "since_event negative", text: #"{"op":"subscribe","trip":"T1","since_event":-1}"#, code: "bad_request", field: "since_event"),
            Case(name: "since_event fraction", text: #"{"op":"subscribe","trip":"T1","since_event":1.5}"#, code: "bad_request", field: "since_event"),
            Case(name: "fix without lat", text: fix(#""lon":1,"ts":\#(ts)"#), code: "bad_request", field: "lat"),
            Case(name: "fix lat a string", text: fix(#""lat":"38.7","lon":1,"ts":\#(ts)"#), code: "bad_request", field: "lat"),
            Case(name: "lat over 90", text: fix(#""lat":90.0001,"lon":1,"ts":\#(ts)"#), code: "bad_request", field: "lat"),
            Case(name: "lon under -180", text: fix(#""lat":1,"lon":-180.5,"ts":\#(ts)"#), code: "bad_request", field: "lon"),
            Case(name: "lat too large to be finite", text: fix(#""lat":1e400,"lon":1,"ts":\#(ts)"#), code: "bad_request", field: "lat"),
            Case(name: "ts missing", text: fix(#""lat":1,"lon":1"#), code: "bad_request", field: "ts"),
            Case(name: "ts a fraction", text: fix(#""lat":1,"lon":1,"ts":\#(ts).5"#), code: "bad_request", field: "ts"),
            Case(name: "ts before 2000", text: fix(#""lat":1,"lon":1,"ts":946684799999"#), code: "bad_request", field: "ts"),
            Case(name: "ts an hour ahead", text: fix(#""lat":1,"lon":1,"ts":\#(ts + 3_600_000)"#), code: "bad_request", field: "ts"),
            Case(name: "ts enormous", text: fix(#""lat":1,"lon":1,"ts":1e300"#), code: "bad_request", field: "ts"),
            Case(name: "seq negative", text: fix(ok + #","seq":-1"#), code: "bad_request", field: "seq"),
            Case(name: "seq 2^53", text: fix(ok + #","seq":9007199254740992"#), code: "bad_request", field: "seq"),
            Case(name: "seq 20 digits", text: fix(ok + #","seq":99999999999999999999"#), code: "bad_request", field: "seq"),
            Case(name: "speed_mps negative", text: fix(ok + #","speed_mps":-1"#), code: "bad_request", field: "speed_mps"),
            Case(name: "accuracy_m negative", text: fix(ok + #","accuracy_m":-0.5"#), code: "bad_request", field: "accuracy_m"),
            Case(name: "heading a string", text: fix(ok + #","heading":"north""#), code: "bad_request", field: "heading"),
            Case(name: "duration_ms a string", text: fix(ok + #","duration_ms":"1s""#), code: "bad_request", field: "duration_ms"),
            Case(name: "duration_ms too large to be finite", text: fix(ok + #","duration_ms":1e999"#), code: "bad_request", field: "duration_ms"),
            Case(name: "fix for a trip that does not exist", text: fix(ok, trip: "T404"), code: "not_found", field: "T404"),
            Case(name: "proceed without trip", text: #"{"op":"proceed"}"#, code: "bad_request", field: "trip"),
            Case(name: "proceed while not holding", text: #"{"op":"proceed","trip":"T1"}"#, code: "conflict", field: "moving"),
            Case(name: "proceed on a trip that does not exist", text: #"{"op":"proceed","trip":"T404"}"#, code: "not_found", field: "T404"),
            Case(name: "viewport zoom 23", text: #"{"op":"viewport","bbox":[-10,30,10,50],"zoom":23}"#, code: "bad_request", field: "zoom"),
            Case(name: "viewport zoom negative", text: #"{"op":"viewport","bbox":[-10,30,10,50],"zoom":-1}"#, code: "bad_request", field: "zoom"),
            Case(name: "viewport zoom missing", text: #"{"op":"viewport","bbox":[-10,30,10,50]}"#, code: "bad_request", field: "zoom"),
            Case(name: "viewport zoom enormous", text: #"{"op":"viewport","bbox":[-10,30,10,50],"zoom":1e308}"#, code: "bad_request", field: "zoom"),
            Case(name: "viewport bbox of 3", text: #"{"op":"viewport","bbox":[1,2,3],"zoom":3}"#, code: "bad_request", field: "bbox"),
            Case(name: "viewport bbox a string", text: #"{"op":"viewport","bbox":"world","zoom":3}"#, code: "bad_request", field: "bbox"),
            Case(name: "viewport south above north", text: #"{"op":"viewport","bbox":[-10,50,10,30],"zoom":3}"#, code: "bad_request", field: "bbox"),
            Case(name: "viewport bbox with a string", text: #"{"op":"viewport","bbox":[-10,"30",10,50],"zoom":3}"#, code: "bad_request", field: "bbox"),
            Case(name: "hello token a number", text: #"{"op":"hello","token":5}"#, code: "bad_request", field: "token"),
            Case(name: "nesting 33 levels", text: #"{"op":"ping","x":\#(nested(32))}"#, code: "bad_request"),
            Case(name: "nesting 30 000 levels", text: nested(30_000), code: "bad_request"),
            Case(name: "object nesting 10 000 levels", text: String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000), code: "bad_request"),
        ]
    }

    @Test func everyBadMessageGetsItsErrorAndChangesNothing() throws {
        try withTestHub { hub, clients in
            try hub.createTrip(["id": "T1", "route": authTestRoute])
            let courier = try clients.connect()
            #expect(try courier.request(["op": "fix", "trip": "T1", "lat": 38.7158, "lon": -9.1420, "ts": nowMillis() - 1000, "seq": 1], id: 1)["applied"] as? Bool == true)
            // Let the first fix's frame go out (one tick of the hub's clock) before the observer comes.
            try hub.waitForHubTime(milliseconds: 200)
            let observer = try clients.connect()
            let before = try observer.request(["op": "subscribe", "trip": "T1"], id: 1)
            let stateBefore = try hub.httpJSON("GET", "/v1/trips/T1").json

            let attacker = try clients.connect()
            let cases = Self.messageCases
            #expect(cases.count >= 50)
            for (index, item) in cases.enumerated() {
                attacker.sendText(item.text)
                let error = try attacker.next("error for \(item)") { $0["type"] as? String == "error" }
                #expect(error["code"] as? String == item.code, "\(item): \(error)")
                let message = error["message"] as? String ?? ""
                #expect(!message.isEmpty, "\(item): error without a message")
                if let field = item.field {
                    #expect(message.contains(field), "\(item): message \"\(message)\" does not name \(field)")
                }
                #expect(try attacker.request(["op": "ping"], id: 10_000 + index)["type"] as? String == "pong", "\(item): connection no longer answers")
            }
            // The observer saw nothing; the trip is as it was.
            #expect(observer.drain().isEmpty)
            let after = try observer.request(["op": "subscribe", "trip": "T1"], id: 2)
            for key in ["status", "position", "progress", "last_event", "trail", "waypoints", "route"] {
                #expect(NSDictionary(dictionary: ["v": before[key] ?? NSNull()]).isEqual(to: ["v": after[key] ?? NSNull()]), "\(key) changed")
            }
            #expect(NSDictionary(dictionary: stateBefore) == NSDictionary(dictionary: try hub.httpJSON("GET", "/v1/trips/T1").json))
            #expect(try hub.httpJSON("GET", "/v1/trips").json["trips"] as? [Any] != nil)
        }
    }

    @Test func framesThatCloseTheConnectionCloseOnlyIt() throws {
        try withTestHub(configure: { $0.maxMessageBytes = 4096 }) { hub, clients in
            let observer = try clients.connect()
            _ = try observer.request(["op": "subscribe", "trip": "T1"], id: 1)
            // Binary frame: 1003. Invalid UTF-8 text: 1007. Over --max-message: 1009.
            #expect(try RawWire.closeCode(port: hub.port, opcode: 2, payload: Array(#"{"op":"ping"}"#.utf8)) == 1003)
            #expect(try RawWire.closeCode(port: hub.port, opcode: 1, payload: [0x7B, 0xC3, 0x28, 0x7D]) == 1007)
            #expect(try RawWire.closeCode(port: hub.port, opcode: 1, payload: [0x22, 0xED, 0xA0, 0x80, 0x22]) == 1007)  // a UTF-8 surrogate
            #expect(try RawWire.closeCode(port: hub.port, opcode: 1, payload: [0xFF, 0xFE]) == 1007)
            #expect(try RawWire.closeCode(port: hub.port, opcode: 1, payload: [UInt8](repeating: 0x20, count: 4097)) == 1009)
            #expect(try RawWire.closeCode(port: hub.port, opcode: 3, payload: []) != nil)  // a reserved opcode
            let big = try clients.connect()
            big.sendText(#"{"op":"ping","pad":""# + String(repeating: "x", count: 5000) + #""}"#)
            #expect(try big.waitClosed() == 1009)
            // Exactly at the limit is fine.
            let exact = try clients.connect()
            let prefix = #"{"op":"ping","id":1,"pad":""#
            exact.sendText(prefix + String(repeating: "x", count: 4096 - prefix.utf8.count - 2) + #""}"#)
            #expect(try exact.next(type: "pong")["re"] as? Int == 1)
            #expect(observer.drain().isEmpty)
            #expect(try observer.request(["op": "ping"], id: 2)["type"] as? String == "pong")
        }
    }

    @Test func durationsAreClampedNotRefused() throws {
        try withTestHub { hub, clients in
            try hub.createTrip(["id": "D1", "route": authTestRoute])
            let watcher = try clients.connect()
            _ = try watcher.request(["op": "subscribe", "trip": "D1", "mode": "segments"], id: 1)
            let start = nowMillis() - 60_000
            let points: [(Double, Double)] = [(38.7158, -9.1420), (38.7165, -9.1400), (38.7172, -9.1380), (38.7180, -9.1360)]
            let durations: [Any] = [5, 1e12, -1e9, -0.4]
            // One batch: its fixes arrive in one millisecond, so the catch-up limit (PROTOCOL 6.2)
            // does not lengthen the zero durations and the clamped values show as they are.
            let fixes = points.enumerated().map { index, p -> [String: Any] in
                ["lat": p.0, "lon": p.1, "ts": start + Int64(index) * 10_000, "seq": index, "duration_ms": durations[index]]
            }
            let (status, body) = try hub.httpJSON("POST", "/v1/trips/D1/fixes", json: ["fixes": fixes])
            #expect(status == 200)
            let acks = body["acks"] as? [[String: Any]] ?? []
            #expect(acks.count == 4 && acks.allSatisfy { $0["applied"] as? Bool == true }, "\(acks)")
            var seen: [Double] = []
            for _ in points {
                let segment = try watcher.next(type: "segment")
                seen.append(segment["duration_ms"] as? Double ?? Double(segment["duration_ms"] as? Int ?? -1))
            }
            // First fix places the marker at once; 1e12 is clamped to 60 000; negatives to 0.
            #expect(seen == [0, 60_000, 0, 0], "\(seen)")
        }
    }

    @Test func badHTTPRequestsGetTheirErrors() throws {
        try withTestHub(configure: { $0.maxBodyBytes = 4 * 1024 * 1024 }) { hub, clients in
            try hub.createTrip(["id": "T1", "route": authTestRoute])
            let observer = try clients.connect()
            _ = try observer.request(["op": "subscribe", "trip": "T1"], id: 1)
            let stateBefore = try hub.httpJSON("GET", "/v1/trips/T1").json

            let million = "{\"route\":[" + Array(repeating: "[-9.1,38.7]", count: 1_000_000).joined(separator: ",") + "]}"
            let overPoints = (0..<10_001).map { [-9.0 - Double($0) * 0.00001, 38.7] }
            let manyWaypoints = (0..<1001).map { _ in ["lat": 38.7158, "lon": -9.1420] }
            let cases: [(String, String, Data?, Int, String?)] = [
                ("POST", "/v1/trips", Data("{oops".utf8), 400, nil),
                ("POST", "/v1/trips", Data("[]".utf8), 400, nil),
                ("POST", "/v1/trips", Data([0xFF, 0xFE, 0x7B, 0x7D]), 400, nil),
                ("POST", "/v1/trips", Data(#"{"route":[[0,0]]}"#.utf8), 400, "route"),
                ("POST", "/v1/trips", Data(#"{"route":[[1,1],[1,1]]}"#.utf8), 400, "route"),
                ("POST", "/v1/trips", Data(#"{"route":[[1,1],[1,91]]}"#.utf8), 400, "route"),
                ("POST", "/v1/trips", Data(#"{"route":[[1,1],[2,2]],"route_polyline":"??"}"#.utf8), 400, "route"),
                ("POST", "/v1/trips", Data(#"{"route_polyline":"\u0001"}"#.utf8), 400, "route_polyline"),
                ("POST", "/v1/trips", Data(#"{"id":"T1","route":[[1,1],[2,2]]}"#.utf8), 409, "T1"),
                ("POST", "/v1/trips", Data(#"{"id":"../x","route":[[1,1],[2,2]]}"#.utf8), 400, "id"),
                ("POST", "/v1/trips", Data(#"{"route":[[1,1],[2,2]],"config":{"arrival_buffer_m":0}}"#.utf8), 400, "arrival_buffer_m"),
                ("POST", "/v1/trips", Data(#"{"route":[[1,1],[2,2]],"config":{"wait_at_waypoints":"yes"}}"#.utf8), 400, "wait_at_waypoints"),
                ("POST", "/v1/trips", Data(#"{"route":[[1,1],[2,2]],"destination":{"lat":"x","lon":1}}"#.utf8), 400, "destination"),
                ("POST", "/v1/trips", try JSONSerialization.data(withJSONObject: ["route": overPoints]), 413, "route"),
                ("POST", "/v1/trips", try JSONSerialization.data(withJSONObject: ["waypoints": manyWaypoints]), 413, "waypoints"),
                ("POST", "/v1/trips", Data(million.utf8), 413, nil),
                ("POST", "/v1/trips/T1/fixes", Data(#"{"fixes":[{"lat":1,"lon":1,"ts":1}]}"#.utf8), 400, "fixes[0].ts"),
                ("POST", "/v1/trips/T1/fixes", Data(#"{"fixes":{}}"#.utf8), 400, "fixes"),
                ("PUT", "/v1/trips/T1/route", Data(#"{}"#.utf8), 400, "route"),
                ("GET", "/v1/trips?limit=0", nil, 400, "limit"),
                ("GET", "/v1/trips?limit=abc", nil, 400, "limit"),
                ("GET", "/v1/trips?status=flying", nil, 400, "status"),
                ("GET", "/v1/trips/T1/trail?from=yesterday", nil, 400, "from"),
                ("GET", "/v1/fleet/clusters", nil, 400, "zoom"),
                ("GET", "/v1/fleet/clusters?zoom=3&bbox=1,2,3", nil, 400, "bbox"),
                ("GET", "/v1/trips/T404", nil, 404, "T404"),
                ("GET", "/v1/trips/a%20b", nil, 400, "id"),
                ("GET", "/v1/trips/T1/elsewhere", nil, 404, nil),
                ("GET", "/v1/nothing", nil, 404, nil),
                ("DELETE", "/v1/trips", nil, 405, "DELETE"),  // PROTOCOL 14: a known path, a method it does not take
            ]
            for (method, path, body, status, field) in cases {
                let (got, data) = try hub.http(method, path, body: body, headers: body == nil ? [:] : ["Content-Type": "application/json"])
                let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
                let error = json?["error"] as? [String: Any]
                #expect(got == status, "\(method) \(path.prefix(60)) answered \(got): \(String(decoding: data.prefix(300), as: UTF8.self))")
                if let field {
                    let message = error?["message"] as? String ?? ""
                    #expect(message.contains(field), "\(method) \(path.prefix(60)): \"\(message)\" does not name \(field)")
                }
            }
            // Header and request-line tricks, over a raw socket: each gets an answer, none crashes the hub.
            let port = hub.port
            let raw: [(String, [UInt8], ClosedRange<Int>)] = [
                ("path with ..", Array("GET /v1/trips/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 400...404),
                ("encoded ..", Array("GET /v1/trips/%2e%2e HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 400...404),
                // lws decodes %2F before routing: the same route as /trail, authorized on the same decoded path.
                ("encoded slash", Array("GET /v1/trips/T1%2Ftrail HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 200...404),
                // lws drops a request whose path decodes to a NUL (0: no answer, connection closed).
                ("NUL in path", Array("GET /v1/trips/T1%00 HTTP/1.1\r\nHost: x\r\n\r\n".utf8), 0...404),
                ("foreign Origin", Array("GET /v1/trips HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://evil.example\r\n\r\n".utf8), 403...403),
                ("negative Content-Length", Array("POST /v1/trips/T404/fixes HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n".utf8), 400...413),
                ("Content-Length over the limit", Array("POST /v1/trips HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n".utf8), 400...413),
                ("16 KiB header", Array(("GET /v1/trips HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 16_384) + "\r\n\r\n").utf8), 0...500),
                ("not HTTP", Array("HELLO\r\n\r\n".utf8), 0...500),
                ("upgrade on another path", RawWire.upgradeRequest(port: port, path: "/v1/trips"), 400...404),
            ]
            for (name, request, expected) in raw {
                let status = try RawWire.httpStatus(port: port, request: request)
                if !expected.contains(status) { Issue.record("\(name): answered \(status), expected \(expected)") }
            }
            // The hub still answers, the observer saw nothing, T1 is as it was.
            #expect(try hub.http("GET", "/healthz").status == 200)
            #expect(observer.drain().isEmpty)
            #expect(NSDictionary(dictionary: stateBefore) == NSDictionary(dictionary: try hub.httpJSON("GET", "/v1/trips/T1").json))
            #expect(try hub.httpJSON("GET", "/v1/trips").json["trips"].map { ($0 as? [Any])?.count } == 1)
        }
    }
}
