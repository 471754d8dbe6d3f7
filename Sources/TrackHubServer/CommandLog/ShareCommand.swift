import TrackHubStore

/// A change to the share links (PROTOCOL 13), checked as far as the request alone allows
/// (a secured hub, the trip exists here and has not ended): what an admin asks for, in one
/// form for both command logs.
enum ShareCommand: Sendable {
    /// Issues `share` (not revoked): its token has `exp` `share.expiresAt` and `iat`
    /// `issuedAt` (s), minted for the answer (`ShareService.answerShareIssued`).
    case issue(StoredShare, issuedAt: Int64)
    /// Revokes the link: its token refused, its subscriptions ended (`ShareService.revokeShareHere`).
    case revoke(jti: String)

    var jti: String {
        switch self {
        case .issue(let share, _): return share.jti
        case .revoke(let jti): return jti
        }
    }
}
