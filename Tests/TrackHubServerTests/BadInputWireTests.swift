import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// Bad input on the WebSocket (PROTOCOL sections 1 and 3): each gets `bad_request` with a
/// message naming the field, and the connection keeps working; an oversized message
/// closes with 1009 and a binary frame with 1003.
@Suite struct BadInputWireTests {
    /// A message (as text), and what its error message must contain.
    static let cases: [(String, String)] = [
        (#"{"op":"ping""#, "JSON"),
        (#"[1,2,3]"#, "object"),
        (#""ping""#, "object"),
        (#"{"id":1}"#, "op"),
        (#"{"op":7}"#, "op"),
        (#"{"op":"fly","trip":"t"}"#, "fly"),
        (#"{"op":"fix","trip":"wire","lat":"38.7","lon":-9.14,"ts":TS}"#, "lat"),
        (#"{"op":"fix","trip":"wire","lat":91,"lon":-9.14,"ts":TS}"#, "lat"),
        (#"{"op":"fix","trip":"wire","lat":38.7,"lon":181,"ts":TS}"#, "lon"),
        (#"{"op":"fix","trip":"wire","lat":38.7,"lon":-9.14,"ts":1.5}"#, "ts"),
        (#"{"op":"fix","trip":"wire","lat":38.7,"lon":-9.14,"ts":TS.5}"#, "ts"),
        (#"{"op":"fix","trip":"wire","lat":38.7,"lon":-9.14,"ts":"TS"}"#, "ts"),
        (#"{"op":"fix","trip":"wire","lat":38.7,"lon":-9.14}"#, "ts"),
        (#"{"op":"fix","trip":"wire","lat":38.7,"lon":-9.14,"ts":900000000000}"#, "ts"),
        (#"{"op":"fix","trip":"wire","lat":38.7,"lon":-9.14,"ts":FUTURE}"#, "ts"),
        (#"{"op":"fix","trip":"wire","lat":38.7,"lon":-9.14,"ts":TS,"seq":2.5}"#, "seq"),
        (#"{"op":"fix","trip":"wire","lat":38.7,"lon":-9.14,"ts":TS,"seq":-1}"#, "seq"),
        (#"{"op":"fix","trip":"wire","lat":38.7,"lon":-9.14,"ts":TS,"speed_mps":-1}"#, "speed_mps"),
        (#"{"op":"fix","trip":"wire","lat":38.7,"lon":-9.14,"ts":TS,"accuracy_m":"good"}"#, "accuracy_m"),
        (#"{"op":"fix","trip":"wire","lat":1e999,"lon":-9.14,"ts":TS}"#, "lat"),
        (#"{"op":"fix","lat":38.7,"lon":-9.14,"ts":TS}"#, "trip"),
        (#"{"op":"subscribe"}"#, "trip"),
        (#"{"op":"subscribe","trip":42}"#, "trip"),
        (#"{"op":"subscribe","trip":"a/b"}"#, "trip"),
        (#"{"op":"subscribe","trip":"wire","mode":"pixels"}"#, "mode"),
        (#"{"op":"subscribe","trip":"wire","since_event":-1}"#, "since_event"),
        (#"{"op":"subscribe","trip":"wire","since_event":1.5}"#, "since_event"),
        (#"{"op":"unsubscribe"}"#, "trip"),
        (#"{"op":"proceed","trip":""}"#, "trip"),
        (#"{"op":"hello","token":5}"#, "token"),
        (#"{"op":"viewport","bbox":[-9.2,38.8,-9.0,38.6],"zoom":12}"#, "bbox"),
        (#"{"op":"viewport","bbox":[-9.2,38.6,-9.0,38.8],"zoom":23}"#, "zoom"),
    ]

    @Test(arguments: cases)
    func badMessageGetsBadRequestNamingTheFieldAndTheConnectionCarriesOn(text: String, field: String) throws {
        try withTestHub { hub, clients in
            try hub.createLisbonTrip("wire")
            let connection = try clients.connect()
            let ts = nowMillis() - 1000
            connection.sendText(text.replacingOccurrences(of: "FUTURE", with: String(ts + 10 * 60 * 1000))
                .replacingOccurrences(of: "TS", with: String(ts)))
            let error = try connection.next(type: "error")
            #expect(error["code"] as? String == "bad_request")
            let message = try #require(error["message"] as? String)
            #expect(message.contains(field), "\(message) should name \(field)")
            #expect(try connection.request(["op": "ping"], id: 99).type == "pong")
            #expect(connection.closeInfo == nil)
        }
    }

    @Test func theErrorCarriesTheIDOfAnInvalidMessage() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            connection.sendText(#"{"op":"fix","id":"f-1","trip":"x","lat":"38.7","lon":-9.14,"ts":1}"#)
            let error = try connection.next(type: "error")
            #expect(error["re"] as? String == "f-1")
            #expect(error["code"] as? String == "bad_request")
        }
    }

    @Test func nestingDeeperThan32LevelsIsBadRequest() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            connection.sendText(#"{"op":"ping","x":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}")
            #expect(try connection.next(type: "error")["code"] as? String == "bad_request")
            #expect(try connection.request(["op": "ping"], id: 1).type == "pong")
        }
    }

    @Test func unknownFieldsAreIgnored() throws {
        try withTestHub { hub, clients in
            let connection = try clients.connect()
            let pong = try connection.request(["op": "ping", "colour": "blue", "extra": ["a": 1]], id: 3)
            #expect(pong.type == "pong")
        }
    }

    @Test func aMessageOverMaxMessageClosesWith1009AndOthersCarryOn() throws {
        try withTestHub(configure: { $0.maxMessageBytes = 512 }) { hub, clients in
            let bystander = try clients.connect()
            let connection = try clients.connect()
            // Just under the limit is fine.
            let fits = #"{"op":"ping","id":1,"pad":""# + String(repeating: "x", count: 400) + #""}"#
            connection.sendText(fits)
            #expect(try connection.next(type: "pong").int("re") == 1)
            connection.sendText(#"{"op":"ping","pad":""# + String(repeating: "x", count: 600) + #""}"#)
            #expect(try connection.waitClosed() == 1009)
            #expect(try bystander.request(["op": "ping"], id: 2).type == "pong")
        }
    }

    @Test func aBinaryFrameClosesWith1003() throws {
        try withTestHub { hub, _ in
            let socket = try RawWebSocket(port: hub.port)
            try socket.sendText(#"{"op":"ping","id":1}"#)
            let pong = try socket.nextMessage()
            #expect(pong.type == "pong")
            try socket.sendFrame(opcode: 0x2, Array(#"{"op":"ping","id":2}"#.utf8))
            #expect(try socket.readUntilClosed() == 1003)
        }
    }

    @Test func invalidUTF8ClosesWith1007() throws {
        try withTestHub { hub, _ in
            let socket = try RawWebSocket(port: hub.port)
            try socket.sendFrame(opcode: 0x1, Array(#"{"op":"ping","x":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8))
            #expect(try socket.readUntilClosed() == 1007)
        }
    }
}
