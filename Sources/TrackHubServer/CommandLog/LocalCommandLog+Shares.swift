import TrackHubCore
import TrackHubProtocol
import TrackHubStore

/// One hub alone: a share link, issued or revoked, is written to the store (SQLite) and
/// answered after the commit (PROTOCOL 13: a revocation holds across restarts).
extension LocalCommandLog {
    func submit(_ command: ShareCommand, reply: Reply, now: Int64) {
        switch command {
        case .issue(let share, let issuedAt):
            hub.storage.persist([.share(share)]) { [self] result in
                switch result {
                case .success:
                    hub.shares.links.record(share)
                    hub.shares.answerShareIssued(reply, share, issuedAt: issuedAt)
                case .failure(let error):
                    hub.replies.answerFailure(reply, .unavailable("share: the store could not commit (\(error)); try again"))
                }
            }
        case .revoke(let jti):
            guard let known = hub.shares.links.link(jti), !ShareLinks.hasExpired(known, nowMs: now) else {
                return hub.replies.answerFailure(reply, .notFound(ShareService.unknownShareMessage(jti)))
            }
            let revoked = hub.shares.revokeShareHere(known, at: now)  // refused from this moment, before the store has it
            hub.storage.persist([.share(revoked)]) { [self] result in
                switch result {
                case .success:
                    hub.shares.answerShareRevoked(reply, jti: jti)
                case .failure(let error):
                    hub.replies.answerFailure(reply, .unavailable("share link \(jti): revoked on this hub, but the store could not commit (\(error)); try again so it holds across a restart"))
                }
            }
        }
    }
}
