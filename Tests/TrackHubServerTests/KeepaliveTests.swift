import Foundation
import Testing
@testable import TrackHubServer
import TrackHubTesting

/// PROTOCOL 1: a ping every interval; a connection that answered neither of the last two is dropped.
@Suite struct KeepaliveTests {
    @Test func aClientThatNeverAnswersPingsIsDroppedAndOneThatAnswersStays() throws {
        try withTestHub(configure: { $0.pingIntervalMs = 200 }) { hub, clients in
            // libwebsockets' client answers pings by itself.
            let answering = try clients.connect()
            // A raw socket that never reads, so never answers.
            let silent = try RawWebSocket(port: hub.port)
            silent.setReadTimeout(seconds: 10)
            _ = try silent.readUntilClosed()  // ends once the hub drops it (EOF or reset)
            #expect(try answering.request(["op": "ping"], id: 1)["type"] as? String == "pong")
            #expect(answering.closeInfo == nil)
        }
    }
}
