import TrackHubCore
import TrackHubProtocol
import TrackHubStore

/// One hub alone: a share link, issued or revoked, is written to the store (SQLite) and
/// answered after the commit (PROTOCOL 13: a revocation holds across restarts).
extension LocalCommandLog {
    func submit(_ command: ShareCommand, reply: Reply, now: Int64) {
        switch command {
        case .issue(let share, let issuedAt):
            services.storage.persist([.share(share)]) { [self] result in
                switch result {
                case .success:
                    services.shares.links.record(share)
                    services.shares.answerShareIssued(reply, share, issuedAt: issuedAt)
                case .failure(let error):
                    services.replies.answerFailure(reply, .unavailable("share: the store could not commit (\(error)); try again"))
                }
            }
        case .revoke(let jti):
            guard let known = services.shares.links.link(jti), !ShareLinks.hasExpired(known, nowMs: now) else {
                return services.replies.answerFailure(reply, .notFound(ShareService.unknownShareMessage(jti)))
            }
            let revoked = services.shares.revokeShareHere(known, at: now)  // refused from this moment, before the store has it
            services.storage.persist([.share(revoked)]) { [self] result in
                switch result {
                case .success:
                    services.shares.answerShareRevoked(reply, jti: jti)
                case .failure(let error):
                    services.replies.answerFailure(reply, .unavailable("share link \(jti): revoked on this hub, but the store could not commit (\(error)); try again so it holds across a restart"))
                }
            }
        }
    }
}
