import TrackHubCore
import TrackHubProtocol
import TrackHubStore

/// Cluster mode's share links (PROTOCOL 13): an issue or a revocation is an entry of the
/// link's partition (by `jti`), answered by the node that appended it once it applies it, as
/// a device change is. Every node applies it into its `ShareLinks`, so a link issued through
/// one hub works on every hub, and a revocation through any is honoured by all: each ends
/// the link's subscribers it holds (`unsubscribed {reason: "revoked"}`). The snapshot holds
/// the links, so a node that starts (its own store is wiped) knows them too.
extension RedisCommandLog {
    func submit(_ command: ShareCommand, reply: Reply, now: Int64) {
        switch command {
        case .issue(let share, let issuedAt):
            var command = ClusterCommand(kind: .share, trip: share.trip, jti: share.jti, expiresAt: share.expiresAt, issuedAt: issuedAt)
            if let stop = share.stop {
                command.stop = stop
                command.visibleWithinStops = share.visibleWithinStops
            }
            appendToLog(command, reply: reply, now: now)
        case .revoke(let jti):
            appendToLog(ClusterCommand(kind: .revokeShare, jti: jti), reply: reply, now: now)
        }
    }

    func applyShareCommand(_ command: ClusterCommand, entry: ClusterReadBatch.Entry, request: Int64?) {
        guard let jti = command.jti else {
            return answer(request) { [self] reply in services.replies.answerFailure(reply, .badRequest("share: jti missing from the log entry")) }
        }
        let t = entry.id.ms
        switch command.kind {
        case .share:
            guard let trip = command.trip, let expiresAt = command.expiresAt, let issuedAt = command.issuedAt else {
                return answer(request) { [self] reply in services.replies.answerFailure(reply, .badRequest("share: trip or expiry missing from the log entry")) }
            }
            let share = services.shares.links.link(jti) ?? StoredShare(
                jti: jti, trip: trip, expiresAt: expiresAt, stop: command.stop, visibleWithinStops: command.visibleWithinStops ?? 0)
            // Bounded as on a hub alone: a link already past its expiry (a node replaying an
            // old log) is not kept; its token is refused for its `exp` anyway.
            if !ShareLinks.hasExpired(share, nowMs: services.clock.wallMillis()) { services.shares.links.record(share) }
            answer(request) { [self] reply in services.shares.answerShareIssued(reply, share, issuedAt: issuedAt) }
        case .revokeShare:
            guard let known = services.shares.links.link(jti), !ShareLinks.hasExpired(known, nowMs: t) else {
                return answer(request) { [self] reply in services.replies.answerFailure(reply, .notFound(ShareService.unknownShareMessage(jti))) }
            }
            services.shares.revokeShareHere(known, at: t)
            answer(request) { [self] reply in services.shares.answerShareRevoked(reply, jti: jti) }
        case .create, .route, .proceed, .end, .fixes, .signalLost, .putDevice, .deleteDevice, .deviceSeen:
            break
        }
    }
}
