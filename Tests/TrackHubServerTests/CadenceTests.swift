import Foundation
import Testing
import TrackHubLWS
import TrackHubProtocol
@testable import TrackHubServer
import TrackHubTesting

/// Cadence (PROTOCOL 18): who watches a trip decides how often its courier is asked for
/// fixes. On the fake host and manual clock, so every rule is checked without waiting: a
/// `cadence` is written in the same turn as the ack or the subscription change that causes it.
@Suite struct CadenceTests {
    /// A hub with trip T1 and a courier connection that sends its fixes.
    final class Scene: @unchecked Sendable {
        let hub: SocketlessHub
        let courier: ConnectionID
        /// The courier's last `seq` (touched by the test's thread only).
        private var seq = 0

        init(configure: (inout HubConfig) -> Void = { _ in }) throws {
            hub = try SocketlessHub(configure: configure)
            let route = (0..<11).map { i in [-9.14, 38.70 + 0.002 * Double(i)] }
            #expect(try hub.http(.post, "/v1/trips", json: ["id": "T1", "route": route]).status == 201)
            courier = try #require(hub.host.openAndWait())
        }

        /// Sends the courier's next fix and waits for its ack.
        func fix() throws {
            seq += 1
            let acks = count("ack", on: courier)
            let lat = 38.70 + 0.0001 * Double(seq)
            hub.host.send(courier, #"{"op":"fix","id":\#(seq),"trip":"T1","lat":\#(lat),"lon":-9.14,"ts":\#(hub.clock.now - 1000),"seq":\#(seq)}"#)
            let courier = courier
            try waitUntil("fix \(seq) acked") { [hub] in
                hub.messages(courier).filter { $0["type"] as? String == "ack" }.count == acks + 1
            }
        }

        /// A new connection following T1 (its subscribe handled once this returns).
        func viewer() throws -> ConnectionID {
            let viewer = try #require(hub.host.openAndWait())
            subscribe(viewer)
            return viewer
        }

        /// `id` subscribes to T1; returns once its snapshot came.
        func subscribe(_ id: ConnectionID) {
            hub.host.send(id, #"{"op":"subscribe","trip":"T1","id":"s"}"#)
            _ = try? hub.waitForMessage(id, "the snapshot") { $0["type"] as? String == "snapshot" }
        }

        /// The `cadence` messages a connection received, in order.
        func cadences(on id: ConnectionID) -> [[String: Any]] {
            hub.messages(id).filter { $0["type"] as? String == "cadence" }
        }

        func count(_ type: String, on id: ConnectionID) -> Int {
            hub.messages(id).filter { $0["type"] as? String == type }.count
        }

        /// The last `cadence` on the courier, as (interval_ms, watched).
        func lastCadence() -> (Int64, Bool)? {
            cadences(on: courier).last.map { (($0["interval_ms"] as? NSNumber)?.int64Value ?? -1, $0["watched"] as? Bool ?? false) }
        }

        /// Runs `body` on the service thread (the cadence service's state lives there).
        func onService<T: Sendable>(_ body: @escaping @Sendable (HubServices) -> T) -> T {
            hub.host.onServiceThreadAndWait { [hub] _ in body(hub.hub.services) }
        }
    }

    @Test func theFirstAckIsFollowedByTheIdleCadenceAndLaterOnesByNothingNew() throws {
        let scene = try Scene()
        defer { scene.hub.stop() }
        try scene.fix()
        let messages = scene.hub.messages(scene.courier)
        let ack = try #require(messages.firstIndex { $0["type"] as? String == "ack" })
        let cadence = try #require(messages.firstIndex { $0["type"] as? String == "cadence" })
        #expect(ack < cadence)  // after the ack
        let sent = messages[cadence]
        #expect(sent["trip"] as? String == "T1")
        #expect((sent["interval_ms"] as? NSNumber)?.int64Value == 30_000)
        #expect(sent["watched"] as? Bool == false)
        #expect(sent["re"] == nil)  // not a reply
        for _ in 0..<3 { try scene.fix() }
        #expect(scene.cadences(on: scene.courier).count == 1)  // the interval did not change
    }

    @Test func theFirstSubscriberAndTheLastOneLeavingAreToldAtOnce() throws {
        let scene = try Scene()
        defer { scene.hub.stop() }
        try scene.fix()
        let viewer = try scene.viewer()
        #expect(scene.lastCadence()! == (2000, true))  // no timer fired, no fix sent meanwhile
        let second = try scene.viewer()
        #expect(scene.cadences(on: scene.courier).count == 2)  // still watched: nothing new
        try scene.fix()
        #expect(scene.cadences(on: scene.courier).count == 2)

        scene.hub.host.send(viewer, #"{"op":"unsubscribe","trip":"T1"}"#)
        _ = try scene.hub.waitForMessage(viewer, "unsubscribed") { $0["type"] as? String == "unsubscribed" }
        #expect(scene.cadences(on: scene.courier).count == 2)
        scene.hub.host.peerClose(second)  // the last one leaves by closing
        try waitUntil("the courier is told its trip is unwatched") { scene.cadences(on: scene.courier).count == 3 }
        #expect(scene.lastCadence()! == (30_000, false))
        #expect(scene.cadences(on: viewer).isEmpty)  // only the courier is told
    }

    @Test func aCourierFollowingItsOwnTripDoesNotMakeItWatched() throws {
        let scene = try Scene()
        defer { scene.hub.stop() }
        scene.subscribe(scene.courier)  // before its first fix: it is not known as the courier yet
        try scene.fix()
        #expect(scene.lastCadence()! == (30_000, false))
        for _ in 0..<2 { try scene.fix() }
        scene.hub.host.send(scene.courier, #"{"op":"unsubscribe","trip":"T1"}"#)
        scene.subscribe(scene.courier)  // and after it
        try scene.fix()
        #expect(scene.cadences(on: scene.courier).count == 1)
        #expect(scene.onService { !$0.cadence.isWatched("T1") })
        _ = try scene.viewer()  // someone else does
        #expect(scene.lastCadence()! == (2000, true))
    }

    @Test func theCourierIsToldOnlyWhileItsConnectionIsOpen() throws {
        let scene = try Scene()
        defer { scene.hub.stop() }
        try scene.fix()
        scene.hub.host.peerClose(scene.courier)
        try waitUntil("the courier's session is gone") { scene.onService { $0.fanout[scene.courier] == nil } }
        let viewer = try scene.viewer()
        #expect(scene.onService { $0.cadence.isWatched("T1") })
        #expect(scene.onService { $0.metrics.cadenceMessages } == 1)  // nobody to tell the change
        #expect(scene.cadences(on: viewer).isEmpty)
    }

    @Test func withCadenceIdleZeroNothingIsSentOrAsked() throws {
        let scene = try Scene { $0.cadenceIdleMs = 0 }
        defer { scene.hub.stop() }
        try scene.fix()
        _ = try scene.viewer()
        try scene.fix()
        #expect(scene.cadences(on: scene.courier).isEmpty)
        let now = scene.hub.clock.now
        #expect(scene.onService { ($0.metrics.cadenceMessages, $0.cadence.longestAskedIntervalMs(trip: "T1", now: now)) } == (0, 0))
    }

    @Test func theCounterCountsEveryCadenceSent() throws {
        let scene = try Scene { $0.cadenceWatchedMs = 1000; $0.cadenceIdleMs = 20_000 }
        defer { scene.hub.stop() }
        try scene.fix()
        let viewer = try scene.viewer()
        scene.hub.host.peerClose(viewer)
        try waitUntil("unwatched again") { scene.cadences(on: scene.courier).count == 3 }
        #expect(scene.cadences(on: scene.courier).map { ($0["interval_ms"] as? NSNumber)?.int64Value } == [20_000, 1000, 20_000])
        #expect(scene.onService { $0.metrics.cadenceMessages } == 3)
        let metrics = try #require(scene.hub.host.requestAndWait(.get, "/metrics"))
        #expect(String(decoding: metrics.body, as: UTF8.self).contains("trackhub_cadence_messages_total 3\n"))
    }

    @Test func theLongestIntervalAskedCountsForTwoMinutesAfterItWasLastInForce() throws {
        let scene = try Scene()
        defer { scene.hub.stop() }
        let longest = { (now: Int64) in scene.onService { $0.cadence.longestAskedIntervalMs(trip: "T1", now: now) } }
        #expect(longest(scene.hub.clock.now) == 0)  // nothing asked yet
        try scene.fix()  // asked 30 s
        #expect(longest(scene.hub.clock.now) == 30_000)
        scene.hub.clock.advance(ms: 60_000)
        let replacedAt = scene.hub.clock.now
        _ = try scene.viewer()  // asked 2 s: the 30 s request was in force until now
        for _ in 0..<12 {
            scene.hub.run(forMs: 10_000, stepMs: 500)
            try scene.fix()  // each fix: the 2 s request still in force
        }
        #expect(scene.hub.clock.now == replacedAt + AskedIntervals.windowMs)
        #expect(longest(scene.hub.clock.now) == 30_000)  // 2 minutes after it was replaced
        scene.hub.run(forMs: 1000, stepMs: 500)
        try scene.fix()
        #expect(longest(scene.hub.clock.now) == 2000)
        scene.hub.run(forMs: 130_000, stepMs: 500)  // nothing acked or asked since: aged out
        #expect(longest(scene.hub.clock.now) == 0)
        #expect(scene.onService { $0.cadence.askedTripCount } == 0)  // and pruned
    }

    @Test func aTripWatchedOnAnotherHubIsWatchedHereAtTheNextExchange() throws {
        let scene = try Scene()
        defer { scene.hub.stop() }
        try scene.fix()
        // Stands in for the cluster's exchange (ClusterWatchers): another hub's subscriber.
        let remote = SharedBox(CadenceService.Elsewhere(trips: ["T1"], version: 1))
        scene.onService { services in
            services.cadence.exchangeWatched = { _, _, _ in remote.value }
        }
        scene.hub.run(forMs: 600)  // one housekeeping
        #expect(scene.lastCadence()! == (2000, true))
        let viewer = try scene.viewer()  // watched here too: nothing new
        scene.hub.host.peerClose(viewer)
        try waitUntil("the viewer is gone") { scene.onService { $0.fanout[viewer] == nil } }
        #expect(scene.cadences(on: scene.courier).count == 2)  // still watched elsewhere
        remote.value = CadenceService.Elsewhere(trips: [], version: 2)
        scene.hub.run(forMs: 600)
        #expect(scene.lastCadence()! == (30_000, false))
    }

    /// PROTOCOL 18: a link for one stop watches the trip only while the courier is shown to
    /// it (section 17). Here the link follows the destination and is shown from 0 stops
    /// before it: hidden while waypoint w1 is still ahead, shown once a new route drops w1,
    /// hidden again once another adds it back. Each change reaches the courier as a
    /// subscriber's coming and going does, and what this hub hands the cluster's exchange
    /// (the trips watched here) follows it, so a hidden link counts on no other hub either.
    @Test func aStopLinkWatchesOnlyWhileTheCourierIsShownToIt() throws {
        let secret = "cadence-stop-link-secret"
        let hub = try SocketlessHub { $0.jwtSecret = secret }
        defer { hub.stop() }
        let expiresAt = hub.clock.now / 1000 + 3600
        let admin = JWT.mint(TokenClaims(subject: "admin", expiresAt: expiresAt, scopes: [.admin], trips: nil), secret: secret)
        let route = (0..<11).map { i in [-9.14, 38.70 + 0.002 * Double(i)] }
        let w1: [String: Any] = ["lat": 38.716, "lon": -9.14, "id": "w1"]
        func send(_ method: HTTPMethod, _ path: String, _ body: [String: Any], expect status: Int) throws {
            let text = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
            let answer = try #require(hub.host.requestAndWait(method, path, body: text, authorization: "Bearer \(admin)"))
            #expect(answer.status == status, "\(method) \(path): \(String(decoding: answer.body, as: UTF8.self))")
        }
        try send(.post, "/v1/trips", ["id": "T1", "route": route, "waypoints": [w1]], expect: 201)
        let here = SharedBox<Set<String>>([])
        hub.host.onServiceThreadAndWait { _ in
            hub.hub.services.cadence.exchangeWatched = { trips, _, _ in
                here.value = trips
                return nil  // a hub alone otherwise
            }
        }

        let linkToken = JWT.mint(TokenClaims(subject: "share:T1", expiresAt: expiresAt, scopes: [.share], trips: ["T1"], jti: "J1",
                                             stop: "destination", visibleWithinStops: 0), secret: secret)
        let link = try #require(hub.host.openAndWait(query: [("token", linkToken)]))
        hub.host.send(link, #"{"op":"subscribe","trip":"T1","id":"s"}"#)
        let stops = { hub.messages(link).filter { $0["type"] as? String == "stop" } }
        try waitUntil("the link's first stop message") { stops().count == 1 }
        #expect(stops()[0]["visible"] as? Bool == false)

        let courier = try #require(hub.host.openAndWait(query: [("token", admin)]))
        let cadences = { hub.messages(courier).filter { $0["type"] as? String == "cadence" } }
        let last = { cadences().last.map { (($0["interval_ms"] as? NSNumber)?.int64Value ?? -1, $0["watched"] as? Bool ?? false) } }
        hub.host.send(courier, #"{"op":"fix","id":1,"trip":"T1","lat":38.7001,"lon":-9.14,"ts":\#(hub.clock.now - 1000),"seq":1}"#)
        try waitUntil("the first fix acked") { hub.messages(courier).contains { $0["type"] as? String == "ack" } }
        try waitUntil("the courier's first cadence") { !cadences().isEmpty }
        hub.run(forMs: 1000)  // ticks and sweeps: the link still sees w1 ahead of its stop
        #expect(stops().last?["stops_before"] as? Int == 1 && stops().last?["visible"] as? Bool == false, "\(stops())")
        #expect(cadences().count == 1)
        #expect(try #require(last()) == (30_000, false))  // the link alone does not watch
        #expect(!here.value.contains("T1"))

        try send(.put, "/v1/trips/T1/route", ["route": route, "waypoints": [] as [Any]], expect: 200)
        try waitUntil("the courier is shown to the link") { stops().last?["visible"] as? Bool == true }
        // The cadence follows the link's sight; waited for, since it is told on the service
        // thread after the sight changed (a slower build, ASan's, reads the messages earlier).
        try waitUntil("the courier told it is watched") { cadences().count == 2 }
        hub.run(forMs: 1000)
        #expect(try #require(last()) == (2000, true))
        #expect(here.value.contains("T1"))

        try send(.put, "/v1/trips/T1/route", ["route": route, "waypoints": [w1]], expect: 200)
        try waitUntil("the courier is hidden again") { stops().last?["visible"] as? Bool == false }
        try waitUntil("the courier told it is no longer watched") { cadences().count == 3 }
        hub.run(forMs: 1000)
        #expect(try #require(last()) == (30_000, false))
        #expect(cadences().count == 3)
        #expect(!here.value.contains("T1"))
    }

    @Test func anOwnTracksPhoneIsToldItsIntervalOnceThenEmptyUntilItChanges() throws {
        let scene = try Scene()
        defer { scene.hub.stop() }
        let phone = "phone-0123456789abcdef"
        #expect(try scene.hub.http(.put, "/v1/devices/\(phone)", json: ["trip": "T1"]).status == 200)
        var tst = scene.hub.clock.now / 1000 - 60
        func post() throws -> JSONValue {
            tst += 1
            let body = #"{"_type":"location","lat":38.7001,"lon":-9.14,"tst":\#(tst)}"#
            let answer = try #require(scene.hub.host.requestAndWait(.post, "/v1/owntracks/\(phone)", body: body))
            #expect(answer.status == 200)
            return try JSONParser().parse(answer.body)
        }
        let first = try post()
        let command = try #require(first.arrayValue?.first)
        #expect(first.arrayValue?.count == 1)
        #expect(command["_type"]?.stringValue == "cmd" && command["action"]?.stringValue == "setConfiguration")
        let configuration = try #require(command["configuration"])
        #expect(configuration["_type"]?.stringValue == "configuration")
        #expect(configuration["monitoring"]?.doubleValue == 2)  // move mode: the one on a timer
        #expect(configuration["locatorInterval"]?.doubleValue == 30)
        #expect(configuration["moveModeLocatorInterval"]?.doubleValue == 30)
        #expect(try post().arrayValue?.isEmpty == true)
        #expect(try post().arrayValue?.isEmpty == true)
        _ = try scene.viewer()
        let watched = try post()
        #expect(watched.arrayValue?.first?["configuration"]?["locatorInterval"]?.doubleValue == 2)
        #expect(try post().arrayValue?.isEmpty == true)
        #expect(scene.onService { $0.metrics.cadenceMessages } == 2)
    }

    @Test func anOwnTracksPhoneIsToldNothingWithCadenceOff() throws {
        let scene = try Scene { $0.cadenceIdleMs = 0 }
        defer { scene.hub.stop() }
        let phone = "phone-0123456789abcdef"
        #expect(try scene.hub.http(.put, "/v1/devices/\(phone)", json: ["trip": "T1"]).status == 200)
        let body = #"{"_type":"location","lat":38.7001,"lon":-9.14,"tst":\#(scene.hub.clock.now / 1000 - 5)}"#
        let answer = try #require(scene.hub.host.requestAndWait(.post, "/v1/owntracks/\(phone)", body: body))
        #expect(answer.status == 200 && answer.body == Array("[]".utf8))
    }
}

/// A value shared between a test and a closure the hub calls on its service thread.
final class SharedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}
