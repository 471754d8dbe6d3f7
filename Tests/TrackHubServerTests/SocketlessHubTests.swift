import Foundation
import Testing
import TrackHubLWS
import TrackHubProtocol
@testable import TrackHubServer
import TrackHubTesting

/// The hub's time rules run on a fake host and a manual clock: nothing here waits for real
/// time to pass, so each rule is checked at the exact millisecond it should act (PROTOCOL 1
/// keep-alive, 7 slow readers, 9 drain, 6.3 the tick).
@Suite struct SocketlessHubTests {
    @Test func aPeerThatAnswersNoPingIsPingedTwiceThenDropped() throws {
        let hub = try SocketlessHub()
        defer { hub.stop() }
        let silent = try #require(hub.host.openAndWait())
        let answering = try #require(hub.host.openAndWait())
        hub.host.setAnswersPings(silent, false)
        let interval = hub.hub.config.pingIntervalMs

        // Housekeeping runs every 500 ms: each rule acts within 500 ms of its moment.
        hub.run(forMs: interval - 500)
        #expect(hub.host.connection(silent)?.pings == 0)
        hub.run(forMs: 1000)
        #expect(hub.host.connection(silent)?.pings == 1)
        hub.run(forMs: interval)
        #expect(hub.host.connection(silent)?.pings == 2)
        #expect(hub.host.connection(silent)?.wasDropped == false)
        hub.run(forMs: interval)
        try waitUntil("the silent peer is dropped") { hub.host.connection(silent)?.isClosed == true }
        #expect(hub.host.connection(silent)?.wasDropped == true)
        #expect(hub.host.connection(answering)?.pings == 3)
        #expect(hub.host.connection(answering)?.isClosed == false)
    }

    @Test func aReaderOverTheLimitIsClosedWhenItsGraceRunsOut() throws {
        let hub = try SocketlessHub { $0.maxUnsentBytes = 1024 }
        defer { hub.stop() }
        let stalled = try #require(hub.host.openAndWait())
        let reading = try #require(hub.host.openAndWait())
        hub.host.setReading(stalled, false)
        // Error replies of about 100 bytes each: over 1 KiB, under the 4 KiB hard cap.
        for id in 1...15 {
            hub.host.send(stalled, #"{"op":"nonsense","id":\#(id)}"#)
            hub.host.send(reading, #"{"op":"nonsense","id":\#(id)}"#)
        }
        hub.tick()
        let unsent = hub.host.onServiceThreadAndWait { [hub] _ in hub.hub.services.fanout[stalled]?.queue.unsentBytes ?? 0 }
        #expect(unsent > 1024 && unsent < 4096)
        #expect(hub.messages(reading).count == 15)

        hub.run(forMs: hub.hub.config.maxUnsentDurationMs - 500)
        #expect(hub.host.connection(stalled)?.closedWith == nil)
        hub.run(forMs: 1000)
        #expect(hub.host.connection(stalled)?.closedWith?.code == CloseCode.policyViolation.rawValue)
        #expect(hub.host.connection(reading)?.closedWith == nil)
    }

    @Test func theDrainWaitsForAQueuedReplyThenClosesWith1001() throws {
        let hub = try SocketlessHub()
        let peer = try #require(hub.host.openAndWait())
        hub.host.setReading(peer, false)
        hub.host.send(peer, #"{"op":"nonsense","id":7}"#)
        hub.hub.beginShutdown()
        let (draining, queued) = hub.host.onServiceThreadAndWait { [hub] _ in
            (hub.hub.draining, hub.hub.services.fanout[peer]?.queue.isEmpty == false)
        }
        #expect(draining && queued)
        #expect(hub.host.connection(peer)?.closedWith == nil)  // the reply is still to be written

        hub.host.setReading(peer, true)
        hub.hub.waitUntilStopped()
        let seen = try #require(hub.host.connection(peer))
        #expect(seen.closedWith?.code == CloseCode.goingAway.rawValue)
        #expect(hub.messages(peer).contains { $0["type"] as? String == "error" && $0["re"] as? Int == 7 })
        hub.store.close()
    }

    @Test func theDrainGivesUpOnAReaderAtTheShutdownTimeout() throws {
        let hub = try SocketlessHub()
        let peer = try #require(hub.host.openAndWait())
        hub.host.setReading(peer, false)
        hub.host.send(peer, #"{"op":"nonsense","id":7}"#)
        hub.hub.beginShutdown()
        let draining = hub.host.onServiceThreadAndWait { [hub] _ in hub.hub.draining }
        #expect(draining)  // the drain started: its clock runs from now
        hub.clock.advance(ms: hub.hub.config.shutdownTimeoutMs)
        hub.hub.waitUntilStopped()
        #expect(hub.host.connection(peer)?.closedWith?.code == CloseCode.goingAway.rawValue)
        #expect(hub.messages(peer).isEmpty)
        hub.store.close()
    }

    @Test func aFixBecomesFramesOnlyAsTheClockMoves() throws {
        let hub = try SocketlessHub()
        defer { hub.stop() }
        let route = (0..<21).map { i in [-9.14, 38.70 + 0.02 * Double(i) / 20] }
        let created = try hub.http(.post, "/v1/trips", json: ["id": "t1", "route": route])
        #expect(created.status == 201)
        let viewer = try #require(hub.host.openAndWait())
        hub.host.send(viewer, #"{"op":"subscribe","trip":"t1","id":1}"#)
        try hub.waitForMessage(viewer, "the snapshot") { $0["type"] as? String == "snapshot" }

        let courier = try #require(hub.host.openAndWait())
        let fixes = [(38.701, hub.clock.now - 20_000), (38.705, hub.clock.now - 10_000)]
        for (n, (lat, ts)) in fixes.enumerated() {
            hub.host.send(courier, #"{"op":"fix","id":\#(n + 1),"trip":"t1","lat":\#(lat),"lon":-9.14,"ts":\#(ts),"seq":\#(n + 1),"duration_ms":1000}"#)
            try hub.waitForMessage(courier, "the ack of fix \(n + 1)") { $0["type"] as? String == "ack" && $0["re"] as? Int == n + 1 }
        }
        let phases = hub.hub.services.trips.animating.phases
        func frames() -> [[String: Any]] { hub.messages(viewer).filter { $0["type"] as? String == "frame" } }
        hub.tick(subTicks: phases)
        let framesWithTheClockStill = frames().count
        hub.tick(subTicks: phases * 3)
        #expect(frames().count == framesWithTheClockStill)  // no time passed: the marker did not move

        for _ in 0..<15 {
            hub.clock.advance(ms: 100)
            hub.tick(subTicks: phases)
        }
        let lats = frames().compactMap { $0["lat"] as? Double }
        #expect(lats.count > framesWithTheClockStill + 5)
        #expect(zip(lats, lats.dropFirst()).allSatisfy { $0 <= $1 })  // never backwards
        #expect(abs((lats.last ?? 0) - 38.705) < 1e-7)  // at the fix once its second has passed
    }

    @Test func aTokenThatExpiresOnAnOpenConnectionClosesItWith1008() throws {
        let hub = try SocketlessHub { $0.jwtSecret = "socketless-secret" }
        defer { hub.stop() }
        let expiresAt = hub.clock.now / 1000 + 60
        let token = JWT.mint(TokenClaims(subject: "s", expiresAt: expiresAt, scopes: [.viewer], trips: nil), secret: "socketless-secret")
        let peer = try #require(hub.host.openAndWait(query: [("token", token)]))
        let expiry = (60 + JWT.leewaySeconds) * 1000  // exp plus the clock-skew leeway
        hub.run(forMs: expiry - 500)
        #expect(hub.host.connection(peer)?.closedWith == nil)
        hub.run(forMs: 1000)
        #expect(hub.host.connection(peer)?.closedWith?.code == CloseCode.policyViolation.rawValue)
    }

    /// PROTOCOL 3 and 7 with the store slow: a subscribe's read does not stop the hub, and its
    /// snapshot still comes before everything sent to the trip after it.
    @Test func aSubscribeWaitingForTheStoreHoldsUpOnlyItsOwnAnswers() throws {
        let hub = try SocketlessHub()
        defer { hub.store.setReadsHeld(false); hub.stop() }
        let route = (0..<21).map { i in [-9.14, 38.70 + 0.02 * Double(i) / 20] }
        #expect(try hub.http(.post, "/v1/trips", json: ["id": "t1", "route": route]).status == 201)
        let courier = try #require(hub.host.openAndWait())
        func sendFix(_ n: Int, lat: Double) throws {
            hub.host.send(courier, #"{"op":"fix","id":\#(n),"trip":"t1","lat":\#(lat),"lon":-9.14,"ts":\#(hub.clock.now - 60_000 + Int64(n) * 10_000),"seq":\#(n)}"#)
            try hub.waitForMessage(courier, "the ack of fix \(n)") { $0["type"] as? String == "ack" && $0["re"] as? Int == n }
        }
        try sendFix(1, lat: 38.701)

        hub.store.setReadsHeld(true)
        let viewer = try #require(hub.host.openAndWait())
        hub.host.send(viewer, #"{"op":"subscribe","trip":"t1","id":5}"#)
        try waitUntil("the subscribe's read is at the store") { hub.store.heldReads == 1 }
        let other = try #require(hub.host.openAndWait())
        hub.host.send(other, #"{"op":"ping","id":9}"#)
        try hub.waitForMessage(other, "a pong while the read waits") { $0["type"] as? String == "pong" }
        try sendFix(2, lat: 38.703)  // judged, stored, acked and animated meanwhile
        hub.run(forMs: 300)
        #expect(hub.messages(viewer).isEmpty)  // its frames wait behind its snapshot

        hub.store.setReadsHeld(false)
        try hub.waitForMessage(viewer, "the snapshot") { $0["type"] as? String == "snapshot" }
        hub.run(forMs: 300)
        let types = hub.messages(viewer).map { $0["type"] as? String ?? "" }
        #expect(types.first == "snapshot")
        #expect(types.contains("frame"))
        let snapshot = hub.messages(viewer)[0]
        #expect(snapshot["re"] as? Int == 5)
        // The state is of the moment it subscribed; the trail is as read, so it may already hold
        // the fix stored meanwhile (the frames that follow take the marker there).
        #expect(((snapshot["trail"] as? [Any])?.count ?? 0) >= 1)
    }

    @Test func aSubscribeWhoseReadFailsIsAnsweredUnavailableAndNotSubscribed() throws {
        let hub = try SocketlessHub()
        defer { hub.stop() }
        let route = (0..<21).map { i in [-9.14, 38.70 + 0.02 * Double(i) / 20] }
        #expect(try hub.http(.post, "/v1/trips", json: ["id": "t1", "route": route]).status == 201)
        hub.store.setReadsFailing(true)
        let viewer = try #require(hub.host.openAndWait())
        hub.host.send(viewer, #"{"op":"subscribe","trip":"t1","id":5}"#)
        let error = try hub.waitForMessage(viewer, "the error") { $0["type"] as? String == "error" }
        #expect(error["re"] as? Int == 5 && error["code"] as? String == "unavailable")
        let followers = hub.host.onServiceThreadAndWait { [hub] _ in hub.hub.services.fanout.subscriptions.followers(of: "t1")?.count ?? 0 }
        #expect(followers == 0)
        #expect(!hub.messages(viewer).contains { $0["type"] as? String == "snapshot" })
    }
}
