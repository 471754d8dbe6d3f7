import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// Share links (PROTOCOL 13): issuing and revoking them, what a share subscriber sees, and
/// the end of sharing once the trip is over for the customer.
extension Hub {
    /// The links issued and revoked here; the token checks read the same object.
    var shareLinks: ShareLinks { tokens.shares }

    /// Loads the stored links (start-up, before the port opens); expired ones are dropped.
    func restoreShares() throws {
        shareLinks.restore(try store.loadShares())
        shareLinks.forgetExpired(nowMs: clock.wallMillis())
    }

    /// Why an open hub issues no links: it ignores tokens, so a link could be neither limited
    /// to its trip nor revoked; a link signed with a key of its own would promise both and
    /// keep neither (every client there sees everything anyway).
    static let openHubShareRefusal = "share links need a secured hub (--jwt-secret): an open hub ignores tokens, so a link could be neither limited to its trip nor revoked"

    // MARK: - POST /v1/trips/{id}/share, DELETE /v1/shares/{jti} (admin)

    /// Issues a link: a `share` token for the trip with a fresh `jti`, answered once stored.
    func createShare(_ connection: ConnectionID, trip id: String, _ request: ShareRequest, now: Int64) throws(ProtocolError) {
        guard let secret = tokens.secrets.first else { throw .conflict(Self.openHubShareRefusal) }
        guard let entry = trips[id] else { throw .notFound("trip \(id) does not exist") }
        if entry.trip.status == .ended { throw .conflict("share: trip \(id) has ended; there is nothing left to follow") }
        let jti = Self.makeShareID()
        let issuedAt = now / 1000
        let expiresAt = issuedAt + request.ttlSeconds
        let claims = TokenClaims(subject: "share:\(id)", expiresAt: expiresAt, scopes: [.share], trips: [id], jti: jti)
        let token = JWT.mint(claims, secret: secret, issuedAt: issuedAt)
        let share = StoredShare(jti: jti, trip: id, expiresAt: expiresAt * 1000)
        persist([.share(share)]) { [self] result in
            switch result {
            case .success:
                shareLinks.record(share)
                respond(connection, HTTPResponse(
                    status: 201, headers: [("cache-control", "no-store")],
                    body: HTTPBodies.share(token: token, jti: jti, expiresAt: share.expiresAt)))
            case .failure(let error):
                respondError(connection, .unavailable("share: the store could not commit (\(error)); try again"))
            }
        }
    }

    /// Revokes a link at once (its token refused, its subscriptions ended) and answers once the
    /// revocation is stored, so it holds across restarts. Revoking it again answers the same.
    func revokeShare(_ connection: ConnectionID, jti: String, now: Int64) throws(ProtocolError) {
        guard isSecured else { throw .conflict(Self.openHubShareRefusal) }
        guard var share = shareLinks.link(jti), !ShareLinks.hasExpired(share, nowMs: now) else {
            throw .notFound("share link \(jti) is not known to this hub (never issued here, or expired)")
        }
        if share.revokedAt == nil { share.revokedAt = now }
        let revoked = share
        shareLinks.record(revoked)  // refused from this moment, before the store has it
        endSharing(jti: jti)
        persist([.share(revoked)]) { [self] result in
            switch result {
            case .success:
                respond(connection, status: 200, json: HTTPBodies.shareRevoked(jti: jti))
            case .failure(let error):
                respondError(connection, .unavailable("share link \(jti): revoked on this hub, but the store could not commit (\(error)); try again so it holds across a restart"))
            }
        }
    }

    /// The connections holding the revoked token: each subscription ends with `unsubscribed`
    /// `{reason: "revoked"}`; the connection stays open, and every op needing a token is then
    /// `unauthorized` until a `hello` brings another.
    func endSharing(jti: String) {
        for (id, session) in sessions where session.grants.shareID == jti {
            session.grants = session.grants.revoked()
            for trip in session.subscriptions.keys.sorted() {
                removeSubscriber(id, from: trip)
                enqueue(payload: ServerReplies.unsubscribed(re: nil, trip: trip, reason: "revoked"), to: id)
            }
        }
    }

    /// Housekeeping: about once a minute, links whose tokens expired are forgotten, here and
    /// in the store (an expired token is refused for its `exp` alone).
    func forgetExpiredSharesIfDue(now: Int64) {
        guard shareLinks.sweepIfDue(nowMs: now) else { return }
        persist([.forgetShares(expiredBefore: ShareLinks.storeCutoff(nowMs: now))]) { _ in }
    }

    /// A fresh `jti`: 128 random bits, base64url (22 characters, a valid path segment).
    static func makeShareID() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Base64URL.encode(bytes)
    }

    // MARK: - What a share subscriber sees

    /// How `grants` sees `trip`: as a customer (a share link) or whole.
    func audience(of grants: Grants, trip: String) -> TripView.Audience {
        grants.seesAsCustomer(trip) ? .customer : .full
    }

    /// Once a trip is over for customers (arrived with the marker at the destination, or
    /// ended) and every event up to it went out (the `arrived` event among them), each share
    /// subscriber's subscription ends with `unsubscribed` `{reason: "arrived"}` (or `"ended"`).
    /// Queued frames are kept: the last one, at the destination, still goes out first.
    /// Called after events are sent, after a tick's frame of an arrived trip, and after a
    /// share subscriber's snapshot.
    func endCustomerSubscriptionsIfOver(trip id: String, now: Int64) {
        guard let entry = trips[id], entry.trip.isOverForCustomers(at: now),
              trips.lastEvent(of: id) >= entry.trip.lastEventNumber,
              let followers = subscriptions.followers(of: id) else { return }
        let reason = entry.trip.status == .arrived ? "arrived" : "ended"
        for connection in followers.keys where sessions[connection]?.grants.seesAsCustomer(id) == true {
            removeSubscriber(connection, from: id, keepingQueuedFrames: true)
            enqueue(payload: ServerReplies.unsubscribed(re: nil, trip: id, reason: reason), to: connection)
        }
    }
}
