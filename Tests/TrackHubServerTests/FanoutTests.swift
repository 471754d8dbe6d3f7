import Foundation
import Testing
import TrackHubLWS
import TrackHubProtocol
import TrackHubTesting
@testable import TrackHubServer

/// `Fanout` alone, on a `FakeServerHost`: no hub, no sockets. The host's service loop runs on
/// a thread of its own; this delegate is the whole of "the hub" (it opens a session per
/// upgrade and hands the host the next queued message).
final class FanoutOnlyDelegate: ServerHostDelegate, @unchecked Sendable {
    var fanout: Fanout!

    func upgradeRequested(_ request: UpgradeRequest) -> UpgradeDecision { .accept }
    func connectionOpened(_ id: ConnectionID, request: UpgradeRequest) {
        fanout.open(Session(id: id, peerAddress: request.peerAddress, now: 0, fixRate: 1000, grants: .everything))
    }
    func connectionReceived(_ id: ConnectionID, message: [UInt8]) {}
    func connectionClosed(_ id: ConnectionID, close: WebSocketClose) { _ = fanout.remove(id) }
    func connectionAnsweredPing(_ id: ConnectionID) { fanout.answeredPing(id) }
    func nextMessage(for id: ConnectionID) -> (message: OutboundMessage, hasMore: Bool)? { fanout.nextMessage(for: id) }
    func httpRequest(_ request: HTTPRequest) {}
    func httpRefusalBeforeBody(_ request: HTTPRequest, declaredLength: Int) -> ProtocolError? { nil }
    func httpRefused(_ request: HTTPRequest, reason: HTTPRefusalReason) {}
    func httpCompleted(request: HTTPRequest, status: Int, durationSeconds: Double) {}
    func responseHeaders(for request: HTTPRequest) -> [(name: String, value: String)] { [] }
    func serviceWoke() {}
    func timerFired() {}
}

@Suite struct FanoutTests {
    /// A fake host running its loop, with a `Fanout` over it.
    final class Rig: @unchecked Sendable {
        let host = FakeServerHost()
        let delegate = FanoutOnlyDelegate()
        let fanout: Fanout
        let thread: Thread

        init(maxUnsentBytes: Int = 1 << 20) {
            let policy = SessionPolicy(maxUnsentBytes: maxUnsentBytes, maxUnsentDurationMs: 2000, pingIntervalMs: 30_000, authTimeoutMs: 0, isSecured: false)
            fanout = Fanout(host: host, policy: policy, clock: .system)
            delegate.fanout = fanout
            host.delegate = delegate
            thread = Thread { [host] in host.run() }
            thread.start()
        }

        func stop() { host.requestStop() }

        /// Runs `body` on the service thread (where the fan-out lives) and waits.
        func onService<T: Sendable>(_ body: @escaping @Sendable (Fanout) -> T) -> T {
            // The fan-out is the service thread's alone; it is only touched inside this call.
            nonisolated(unsafe) let fanout = self.fanout
            return host.onServiceThreadAndWait { _ in body(fanout) }
        }

        func written(to id: ConnectionID) -> [String] {
            host.writeLog.filter { $0.id == id }.map(\.text)
        }
    }

    static func frame(_ n: Int, slot: Int = 7) -> OutboundMessage {
        OutboundMessage(payload: Array(#"{"type":"frame","n":\#(n)}"#.utf8), kind: .frame(tripSlot: slot))
    }

    @Test func aBroadcastReachesEveryFollowerOfTheTripAndNoOneElse() throws {
        let rig = Rig()
        defer { rig.stop() }
        let a = try #require(rig.host.openAndWait()), b = try #require(rig.host.openAndWait()), other = try #require(rig.host.openAndWait())
        let delivered = rig.onService { fanout in
            fanout.subscribe(a, to: "t", mode: .frames)
            fanout.subscribe(b, to: "t", mode: .segments)
            fanout.subscribe(other, to: "u", mode: .frames)
            return fanout.broadcast(OutboundMessage(payload: Array(#"{"type":"event"}"#.utf8)), trip: "t")
                + fanout.broadcast(Self.frame(1), trip: "t", mode: .frames)
        }
        #expect(delivered == 3)
        #expect(rig.written(to: a) == [#"{"type":"event"}"#, #"{"type":"frame","n":1}"#])
        #expect(rig.written(to: b) == [#"{"type":"event"}"#])
        #expect(rig.written(to: other).isEmpty)
        #expect(rig.onService { $0.counters.messagesOut } == 3)
    }

    @Test func aSlowReaderGetsTheLatestFrameOnlyAndEveryReliableMessage() throws {
        let rig = Rig()
        defer { rig.stop() }
        let slow = try #require(rig.host.openAndWait())
        rig.host.setReading(slow, false)
        rig.onService { fanout in
            fanout.subscribe(slow, to: "t", mode: .frames)
            for n in 1...5 { _ = fanout.broadcast(Self.frame(n), trip: "t") }
            fanout.enqueue(payload: Array(#"{"type":"ack"}"#.utf8), to: slow)
        }
        #expect(rig.onService { $0.counters.framesDropped } >= 3, "frames waiting for a slow reader replace each other")
        rig.host.setReading(slow, true)
        try waitUntil("the slow reader's queue written") { rig.written(to: slow).count >= 2 }
        let seen = rig.written(to: slow)
        #expect(seen.last == #"{"type":"ack"}"# || seen.contains(#"{"type":"ack"}"#))
        #expect(seen.contains(#"{"type":"frame","n":5}"#), "the latest frame is the one written: \(seen)")
        #expect(!seen.contains(#"{"type":"frame","n":3}"#))
    }

    @Test func unsentDataOverFourTimesTheLimitClosesTheConnectionAtOnce() throws {
        let rig = Rig(maxUnsentBytes: 1000)
        defer { rig.stop() }
        let slow = try #require(rig.host.openAndWait()), fine = try #require(rig.host.openAndWait())
        rig.host.setReading(slow, false)
        let big = Array(repeating: UInt8(ascii: "x"), count: 600)
        rig.onService { fanout in
            for _ in 0..<10 { fanout.enqueue(payload: big, to: slow) }  // reliable: never replaced
            fanout.enqueue(payload: Array(#"{"type":"pong"}"#.utf8), to: fine)
        }
        #expect(rig.host.connection(slow)?.closedWith?.code == CloseCode.policyViolation.rawValue)
        #expect(rig.onService { ($0.counters.unsentCapCloses, $0.counters.slowConsumerCloses) } == (1, 1))
        #expect(rig.written(to: fine) == [#"{"type":"pong"}"#], "another connection carries on")
    }

    @Test func aClosedConnectionLeavesNoSessionNorSubscription() throws {
        let rig = Rig()
        defer { rig.stop() }
        let a = try #require(rig.host.openAndWait())
        rig.onService { fanout in
            fanout.subscribe(a, to: "t", mode: .frames)
            fanout.subscribe(a, to: "u", mode: .segments)
        }
        #expect(rig.onService { $0.subscriptions.count } == 2)
        rig.host.peerClose(a)
        try waitUntil("the session gone") { rig.onService { $0.count } == 0 }
        #expect(rig.onService { ($0.count, $0.subscriptions.count, $0.subscriptions.followers(of: "t") == nil) } == (0, 0, true))
        #expect(rig.onService { ($0.counters.connectionsOpened, $0.counters.connectionsOpen) } == (1, 0))
    }
}
