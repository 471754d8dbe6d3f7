import Testing
import TrackHubCore
@testable import TrackHubProtocol

@Suite struct ServerRepliesTests {
    @Test func errorCodesMatchTheWireAndHTTP() {
        let expected: [(ErrorCode, String, Int)] = [
            (.badRequest, "bad_request", 400), (.unauthorized, "unauthorized", 401), (.forbidden, "forbidden", 403),
            (.notFound, "not_found", 404), (.conflict, "conflict", 409), (.tooLarge, "too_large", 413),
            (.rateLimited, "rate_limited", 429), (.unavailable, "unavailable", 503),
        ]
        for (code, wire, status) in expected {
            #expect(code.rawValue == wire)
            #expect(code.httpStatus == status)
            #expect(ProtocolError(code, "m").httpStatus == status)
        }
        #expect(ErrorCode.allCases.count == 8)
        let order = ErrorCode.allCases.sorted { $0.precedence < $1.precedence }.prefix(6).map(\.rawValue)
        #expect(order == ["unauthorized", "bad_request", "too_large", "forbidden", "not_found", "conflict"])
    }

    @Test func replies() {
        #expect(text(ServerReplies.pong(re: nil, t: 1_700_000_000_000)) == #"{"type":"pong","t":1700000000000}"#)
        #expect(text(ServerReplies.pong(re: .number("7"), t: 1)) == #"{"type":"pong","re":7,"t":1}"#)
        #expect(text(ServerReplies.error(re: .string("a"), .notFound("trip T1 does not exist")))
            == #"{"type":"error","re":"a","code":"not_found","message":"trip T1 does not exist"}"#)
        #expect(text(ServerReplies.unsubscribed(re: nil, trip: "T1", reason: "forbidden"))
            == #"{"type":"unsubscribed","trip":"T1","reason":"forbidden"}"#)
        #expect(text(ServerReplies.unsubscribed(re: .number("2"), trip: "T1"))
            == #"{"type":"unsubscribed","re":2,"trip":"T1"}"#)
        #expect(text(ServerReplies.ack(re: .number("3"), trip: "T1", seq: 9, verdict: .applied))
            == #"{"type":"ack","re":3,"trip":"T1","seq":9,"applied":true}"#)
        #expect(text(ServerReplies.ack(re: nil, trip: "T1", seq: nil, verdict: .refused(.outOfOrder)))
            == #"{"type":"ack","trip":"T1","applied":false,"reason":"out_of_order"}"#)
        #expect(text(ServerReplies.welcome(re: .string("h"), session: "s1", server: "trackhub/0.1", tickHz: 10, fleetHz: 0.5))
            == #"{"type":"welcome","re":"h","session":"s1","server":"trackhub/0.1","protocol":1,"tick_hz":10,"fleet_hz":0.5}"#)
        #expect(text(HTTPBodies.error(.conflict("trip T1 is moving, not holding")))
            == #"{"error":{"code":"conflict","message":"trip T1 is moving, not holding"}}"#)
        #expect(text(HTTPBodies.acks(
            trip: "T", fixes: [FixInput(lat: 0, lon: 0, ts: 0, seq: 1), FixInput(lat: 0, lon: 0, ts: 0)],
            verdicts: [.applied, .refused(.duplicate)]))
            == #"{"acks":[{"trip":"T","seq":1,"applied":true},{"trip":"T","applied":false,"reason":"duplicate"}]}"#)
    }

    @Test func repliesLeaveHeadroom() throws {
        let reply = ServerReplies.pong(re: nil, t: 5, headroom: 16)
        #expect(reply.prefix(16).allSatisfy { $0 == 0 })
        #expect(text(Array(reply.dropFirst(16))) == #"{"type":"pong","t":5}"#)
        let parsed = try JSONParser().parse(reply[16...])
        #expect(parsed["t"] == 5)
    }

    @Test func errorMessagesAreEscaped() throws {
        let reply = ServerReplies.error(re: nil, .badRequest("unknown op \"x\ny\""))
        let parsed = try JSONParser().parse(reply)
        #expect(parsed["message"] == "unknown op \"x\ny\"")
    }

    @Test func tripIDRules() {
        #expect(TripID.isValid("a"))
        #expect(TripID.isValid("..."))
        #expect(TripID.isValid(".a"))
        #expect(!TripID.isValid("."))
        #expect(!TripID.isValid(".."))
        #expect(!TripID.isValid(""))
        #expect(!TripID.isValid("a/b"))
        #expect(!TripID.isValid(String(repeating: "x", count: 65)))
    }
}
