import Foundation
import Testing
import TrackHubTesting

/// `withTestHub`, which most of the wire tests stand on: it hands back what the body returns,
/// passes on what it throws, and stops the hub either way.
@Suite struct WithTestHubTests {
    struct Planned: Error {}

    @Test func theBodysResultComesBackAndTheHubIsGoneAfter() throws {
        let (port, status) = try withTestHub { hub, _ in try (hub.port, hub.http("GET", "/healthz").status) }
        #expect(status == 200)
        #expect(throws: TestFailure.self, "nothing listens on the port any more") { _ = try Loopback.connect(port: port) }
    }

    @Test func aBodyThatThrowsStillStopsTheHubAndItsClients() throws {
        var port = 0
        #expect(throws: Planned.self) {
            try withTestHub(configure: { $0.tickHz = 20 }) { hub, clients in
                #expect(hub.hub.config.tickHz == 20, "the configuration is the hub's")
                port = hub.port
                let connection = try clients.connect()
                #expect(try connection.request(["op": "ping"], id: 1)["type"] as? String == "pong")
                throw Planned()
            }
        }
        #expect(port != 0)
        #expect(throws: TestFailure.self, "nothing listens on the port any more") { _ = try Loopback.connect(port: port) }
    }
}
