import Testing
import TrackHubLWS
import TrackHubProtocol
@testable import TrackHubServer

/// Keep-alive, slow readers and token lifetimes, decided on a session at a given time: no
/// socket, no hub, the clock passed in.
@Suite struct SessionPolicyTests {
    static let policy = SessionPolicy(maxUnsentBytes: 1000, maxUnsentDurationMs: 2000, pingIntervalMs: 30_000, authTimeoutMs: 10_000, isSecured: true)

    static func session(at now: Int64 = 0, grants: Grants = .everything) -> Session {
        Session(id: ConnectionID(raw: 7), peerAddress: "127.0.0.1", now: now, fixRate: 10, grants: grants)
    }

    static func reply(bytes: Int) -> OutboundMessage {
        OutboundMessage(payload: Array(repeating: UInt8(ascii: "x"), count: bytes))
    }

    @Test func aPingEveryIntervalAndADropAfterTwoUnanswered() {
        let session = Self.session()
        #expect(Self.policy.keepalive(session, now: 29_999) == .keep)
        #expect(Self.policy.keepalive(session, now: 30_000) == .ping)
        #expect(Self.policy.keepalive(session, now: 59_999) == .keep, "one ping per interval")
        #expect(Self.policy.keepalive(session, now: 60_000) == .ping)
        #expect(Self.policy.keepalive(session, now: 90_000) == .drop, "neither of the last two pings answered")
    }

    @Test func aPongResetsTheCount() {
        let session = Self.session()
        #expect(Self.policy.keepalive(session, now: 30_000) == .ping)
        #expect(Self.policy.keepalive(session, now: 60_000) == .ping)
        session.unansweredPings = 0  // what the hub does on a pong
        #expect(Self.policy.keepalive(session, now: 90_000) == .ping)
    }

    @Test func aSlowReaderIsClosedAfterTheDurationOverTheLimit() {
        let session = Self.session()
        _ = session.queue.push(Self.reply(bytes: 600))
        #expect(Self.policy.afterQueueing(session, now: 100) == .keep)
        #expect(session.overLimitSince == nil, "under the limit")
        _ = session.queue.push(Self.reply(bytes: 600))
        #expect(Self.policy.afterQueueing(session, now: 200) == .keep)
        #expect(session.overLimitSince == 200)
        #expect(Self.policy.slowReader(session, now: 2199) == .keep)
        #expect(Self.policy.slowReader(session, now: 2200) == .close(.policyViolation, reason: "unsent data over the limit"))
    }

    @Test func readingBelowTheLimitStopsTheClock() {
        let session = Self.session()
        _ = session.queue.push(Self.reply(bytes: 600))
        _ = session.queue.push(Self.reply(bytes: 600))
        _ = Self.policy.afterQueueing(session, now: 0)
        _ = session.queue.pop()
        Self.policy.afterWriting(session)
        #expect(session.overLimitSince == nil)
        #expect(Self.policy.slowReader(session, now: 10_000) == .keep)
    }

    @Test func overFourTimesTheLimitClosesAtOnce() {
        let session = Self.session()
        _ = session.queue.push(Self.reply(bytes: 4001))
        #expect(Self.policy.afterQueueing(session, now: 0) == .close(.policyViolation, reason: "unsent data over 4 x the limit"))
    }

    @Test func tokensExpireAndTheAuthTimeoutCloses() {
        let nowMs: Int64 = 1_800_000_000_000
        let expired = Grants(scopes: [.viewer], trips: nil, expiresAt: nowMs / 1000 - 3600, isAuthenticated: true)
        #expect(Self.policy.tokenLifetime(Self.session(at: nowMs, grants: expired), now: nowMs) == .close(.policyViolation, reason: "token expired"))
        let valid = Grants(scopes: [.viewer], trips: nil, expiresAt: nowMs / 1000 + 3600, isAuthenticated: true)
        #expect(Self.policy.tokenLifetime(Self.session(at: nowMs, grants: valid), now: nowMs) == .keep)
        let anonymous = Self.session(at: nowMs, grants: .nothing)
        #expect(Self.policy.tokenLifetime(anonymous, now: nowMs + 9_999) == .keep)
        #expect(Self.policy.tokenLifetime(anonymous, now: nowMs + 10_000) == .close(.policyViolation, reason: "no valid token within the auth timeout"))
        var open = Self.policy
        open.isSecured = false
        #expect(open.tokenLifetime(anonymous, now: nowMs + 10_000) == .keep, "an open hub checks no token")
    }
}
