import TrackHubProtocol

/// The write policy and the lifetime rules of a WebSocket session (PROTOCOL 1, 2 and 7), as
/// decisions: each check looks at one session at a time `now` (the clock is passed in) and
/// says what to do; the hub carries it out through the host. So keep-alive, slow readers and
/// token lifetimes are tested without sockets (SessionPolicyTests).
struct SessionPolicy: Sendable {
    /// Unsent bytes a connection may hold for `maxUnsentDurationMs` (`--max-unsent`).
    var maxUnsentBytes: Int
    /// How long a connection may stay over `maxUnsentBytes`, in ms.
    var maxUnsentDurationMs: Int64
    /// A WebSocket ping every this many ms (`--ping-interval`).
    var pingIntervalMs: Int64
    /// How long a connection to a secured hub may go without a valid token, in ms (0: no limit).
    var authTimeoutMs: Int64
    /// Whether tokens are checked at all (a hub with a secret).
    var isSecured: Bool

    /// Past this, a connection is closed at once, not at the next check: 4 × the limit.
    var hardCapBytes: Int { maxUnsentBytes * 4 }

    /// What to do with a connection.
    enum Verdict: Equatable, Sendable {
        case keep
        case ping
        /// Gone without a close handshake (it answered none of the last two pings).
        case drop
        case close(CloseCode, reason: String)
    }

    /// After a message was queued: the hard cap (PROTOCOL 7: no client, reading or not, makes
    /// the hub hold more than 4 × the limit for it). Notes when the session went over the limit.
    /// (`now` is read only when the session goes over the limit: this runs per message.)
    func afterQueueing(_ session: Session, now: @autoclosure () -> Int64) -> Verdict {
        let unsent = session.queue.unsentBytes
        if unsent > hardCapBytes { return .close(.policyViolation, reason: "unsent data over 4 x the limit") }
        if unsent > maxUnsentBytes, session.overLimitSince == nil { session.overLimitSince = now() }
        return .keep
    }

    /// After a message was written: back under the limit, the clock of a slow reader stops.
    func afterWriting(_ session: Session) {
        if session.queue.unsentBytes <= maxUnsentBytes { session.overLimitSince = nil }
    }

    /// The periodic check of a slow reader: over the limit for `maxUnsentDurationMs` closes.
    func slowReader(_ session: Session, now: Int64) -> Verdict {
        guard let since = session.overLimitSince, !session.isClosing else { return .keep }
        if session.queue.unsentBytes <= maxUnsentBytes {
            session.overLimitSince = nil
            return .keep
        }
        return now - since >= maxUnsentDurationMs ? .close(.policyViolation, reason: "unsent data over the limit") : .keep
    }

    /// Keep-alive: a ping every interval; a connection that answered neither of the last two
    /// is dropped. Counts the ping it asks for.
    func keepalive(_ session: Session, now: Int64) -> Verdict {
        guard !session.isClosing, now - session.lastPingAt >= pingIntervalMs else { return .keep }
        if session.unansweredPings >= 2 { return .drop }
        session.lastPingAt = now
        session.unansweredPings += 1
        return .ping
    }

    /// A token's life on a live connection: an expired token, or none within the auth timeout,
    /// closes with 1008.
    func tokenLifetime(_ session: Session, now: Int64) -> Verdict {
        guard isSecured, !session.isClosing else { return .keep }
        if session.grants.isAuthenticated {
            return session.grants.isExpired(nowMs: now) ? .close(.policyViolation, reason: "token expired") : .keep
        }
        if authTimeoutMs > 0 && now - session.openedAt >= authTimeoutMs {
            return .close(.policyViolation, reason: "no valid token within the auth timeout")
        }
        return .keep
    }
}
