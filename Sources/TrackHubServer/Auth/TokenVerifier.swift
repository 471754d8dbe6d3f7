import Foundation
import TrackHubLWS
import TrackHubProtocol

/// Checks tokens against the hub's secrets (two during a rotation, PROTOCOL 14). A value:
/// the WebSocket side and the HTTP gate share one.
struct TokenVerifier: Sendable {
    /// The HS256 secrets, newest first; empty: an open hub, every token ignored.
    var secrets: [String]
    /// The share links issued and revoked here (PROTOCOL 13): a revoked link's token is refused.
    let shares: ShareLinks

    init(secrets: [String], shares: ShareLinks = ShareLinks()) {
        self.secrets = secrets
        self.shares = shares
    }

    var isSecured: Bool { !secrets.isEmpty }

    /// The grants of `token`, or `unauthorized` naming what is wrong with it: a secret whose
    /// signature matched explains better (say, `expired`) than one that merely did not match.
    /// A refusal is logged (without the token).
    func verify(_ token: String, now: Int64) -> Result<Grants, ProtocolError> {
        guard isSecured else { return .success(.everything) }
        var verdict: TokenError?
        for secret in secrets {
            switch JWT.verify(token, secret: secret, nowMs: now) {
            case .success(let claims):
                if let refusal = shareRefusal(claims) {
                    HubLog.log(.info, "token refused", [("reason", .string(refusal.message))])
                    return .failure(refusal)
                }
                return .success(Grants(claims: claims))
            case .failure(let error):
                if verdict == nil || verdict == .badSignature { verdict = error }
            }
        }
        let refusal = ProtocolError.unauthorized(verdict?.message ?? "token is not valid")
        HubLog.log(.info, "token refused", [("reason", .string(refusal.message))])
        return .failure(refusal)
    }

    /// A share token is valid only with a `jti` (it is revoked by it) that was not revoked.
    private func shareRefusal(_ claims: TokenClaims) -> ProtocolError? {
        if let jti = claims.jti, shares.isRevoked(jti) {
            return .unauthorized("token was revoked (share link \(jti))")
        }
        if claims.scopes.contains(.share) && claims.jti == nil {
            return .unauthorized("token has scope share but no jti; share links come from POST /v1/trips/{id}/share")
        }
        return nil
    }

    /// The grants of an HTTP request's `Authorization: Bearer <token>`.
    func authenticate(_ request: HTTPRequest, now: Int64) throws(ProtocolError) -> Grants {
        guard let header = request.authorization?.trimmingCharacters(in: [" ", "\t"]), !header.isEmpty else {
            throw .unauthorized("Authorization: a Bearer token is required")
        }
        let scheme = header.prefix { $0 != " " }
        guard scheme.lowercased() == "bearer" else {
            throw .unauthorized("Authorization: scheme must be Bearer")
        }
        let token = header.dropFirst(scheme.count).trimmingCharacters(in: [" ", "\t"])
        return try verify(token, now: now).get()
    }
}
