import TrackHubLWS
/// Keep-alive (PROTOCOL 1): a WebSocket ping every 30 s; a connection that answered neither
/// of the last two is dropped. One sweep over the sessions every few seconds replaces
/// libwebsockets' per-connection validity timers, whose sorted list costs a walk over every
/// connection each time a timer is re-armed.
extension Hub {
    func connectionAnsweredPing(_ id: ConnectionID) {
        sessions[id]?.unansweredPings = 0
    }

    func sweepKeepalive(now: Int64) {
        for (id, session) in sessions {
            carryOut(sessionPolicy.keepalive(session, now: now), for: id)
        }
    }
}
