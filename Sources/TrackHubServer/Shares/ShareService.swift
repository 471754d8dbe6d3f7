import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// Share links (PROTOCOL 13): issuing and revoking them, what a share subscriber sees, and
/// the end of sharing once the trip is over for the customer. The links themselves are the
/// token checks' (`ShareLinks`, read by `TokenVerifier` on every request); this service
/// changes them through the command log and acts on the sessions that hold them.
///
/// Threads: the service thread only, like the hub that owns it (`links` is also read by the
/// token checks, under its own lock).
final class ShareService {
    /// Why an open hub issues no links: it ignores tokens, so a link could be neither limited
    /// to its trip nor revoked; a link signed with a key of its own would promise both and
    /// keep neither (every client there sees everything anyway).
    static let openHubShareRefusal = "share links need a secured hub (--jwt-secret): an open hub ignores tokens, so a link could be neither limited to its trip nor revoked"

    /// The links issued and revoked here; the token checks read the same object.
    let links: ShareLinks
    /// Where issues and revocations become durable. Weak: the hub owns the log and makes it
    /// only once the hub exists (the log needs the hub), so the hub sets this when it builds
    /// the log (`Hub.makeCommandLog`), before the service thread runs.
    weak var commandLog: (any CommandDurability)?

    /// The newest secret, which signs the links' tokens; nil on an open hub, which issues none.
    private let signingSecret: String?
    /// The trips links are issued for, and the slots of the subscriptions they end.
    private let trips: TripTable
    /// The sessions holding share tokens: their subscriptions end on a revocation or once
    /// the trip is over for the customer.
    private let fanout: Fanout
    /// Every answer to `POST /v1/trips/{id}/share` and `DELETE /v1/shares/{jti}`.
    private let replies: Replies
    /// The store the links are loaded from at start-up (a hub alone) and expired ones are
    /// forgotten in.
    private let storage: TripStorage
    /// The time the links loaded at start-up are checked for expiry against.
    private let clock: HubClock

    /// A service over `links` (the token checks' own), signing with the newest of `secrets`.
    init(links: ShareLinks, secrets: [String], trips: TripTable, fanout: Fanout, replies: Replies, storage: TripStorage, clock: HubClock) {
        self.links = links
        self.signingSecret = secrets.first
        self.trips = trips
        self.fanout = fanout
        self.replies = replies
        self.storage = storage
        self.clock = clock
    }

    /// A secured hub issues links; an open one refuses them (`openHubShareRefusal`).
    private var isSecured: Bool { signingSecret != nil }

    /// The command log, which the hub has set by the time any request arrives.
    private var commands: any CommandDurability {
        guard let commandLog else { preconditionFailure("ShareService: used before the hub built its command log") }
        return commandLog
    }

    /// Loads the stored links (start-up, before the port opens); expired ones are dropped.
    func restoreShares() throws {
        links.restore(try storage.store.loadShares())
        links.forgetExpired(nowMs: clock.wallMillis())
    }

    // MARK: - POST /v1/trips/{id}/share, DELETE /v1/shares/{jti} (admin)

    /// Issues a link: a `share` token for the trip with a fresh `jti`, answered once the
    /// command log holds it (`answerShareIssued`).
    func createShare(_ connection: ConnectionID, trip id: String, _ request: ShareRequest, now: Int64) throws(ProtocolError) {
        guard isSecured else { throw .conflict(Self.openHubShareRefusal) }
        guard trips[id] != nil else {
            // A trip created a moment ago through another hub of a cluster may not be applied here yet.
            return commands.afterApplying(upTo: now, reply: .http(connection)) { [self] in
                do throws(ProtocolError) {
                    guard trips[id] != nil else { throw .notFound("trip \(id) does not exist") }
                    try issueShare(connection, trip: id, request, now: now)
                } catch {
                    replies.respondError(connection, error)
                }
            }
        }
        try issueShare(connection, trip: id, request, now: now)
    }

    /// Submits the issue of a link for a trip this hub has applied; 409 once it has ended.
    private func issueShare(_ connection: ConnectionID, trip id: String, _ request: ShareRequest, now: Int64) throws(ProtocolError) {
        guard let entry = trips[id] else { throw .notFound("trip \(id) does not exist") }
        if entry.trip.status == .ended { throw .conflict("share: trip \(id) has ended; there is nothing left to follow") }
        let issuedAt = now / 1000
        if let stop = request.stop, !Self.tripHasStop(entry.trip, stop) {
            throw .badRequest("stop \(stop) is not a waypoint id of trip \(id) nor \"destination\"")
        }
        let share = StoredShare(jti: Self.makeShareID(), trip: id, expiresAt: (issuedAt + request.ttlSeconds) * 1000,
                                stop: request.stop, visibleWithinStops: request.visibleWithinStops)
        commands.submit(.issue(share, issuedAt: issuedAt), reply: .http(connection), now: now)
    }

    /// Revokes a link at once (its token refused, its subscriptions ended) and answers once the
    /// command log holds the revocation, so it holds across restarts. Revoking it again
    /// answers the same.
    func revokeShare(_ connection: ConnectionID, jti: String, now: Int64) throws(ProtocolError) {
        guard isSecured else { throw .conflict(Self.openHubShareRefusal) }
        if links.link(jti) != nil { return commands.submit(.revoke(jti: jti), reply: .http(connection), now: now) }
        // A link issued a moment ago through another hub of a cluster may not be applied here yet.
        commands.afterApplying(upTo: now, reply: .http(connection)) { [self] in
            guard links.link(jti) != nil else { return replies.respondError(connection, .notFound(Self.unknownShareMessage(jti))) }
            commands.submit(.revoke(jti: jti), reply: .http(connection), now: now)
        }
    }

    /// The 404 of a revocation of a link this hub does not hold.
    static func unknownShareMessage(_ jti: String) -> String {
        "share link \(jti) is not known to this hub (never issued, or expired)"
    }

    /// A link the command log holds: the answer to `POST /v1/trips/{id}/share`, its token
    /// minted here (the same token for the same claims, so the log never holds one).
    func answerShareIssued(_ reply: Reply, _ share: StoredShare, issuedAt: Int64) {
        guard case .http(let connection) = reply else { return }  // issued over HTTP only
        guard let secret = signingSecret else { return replies.respondError(connection, .conflict(Self.openHubShareRefusal)) }
        let claims = TokenClaims(subject: "share:\(share.trip)", expiresAt: share.expiresAt / 1000, scopes: [.share], trips: [share.trip], jti: share.jti,
                                 stop: share.stop, visibleWithinStops: share.visibleWithinStops)
        let token = JWT.mint(claims, secret: secret, issuedAt: issuedAt)
        replies.respond(connection, HTTPResponse(
            status: 201, headers: [("cache-control", "no-store")],
            body: HTTPBodies.share(token: token, jti: share.jti, expiresAt: share.expiresAt)))
    }

    /// The answer to `DELETE /v1/shares/{jti}`.
    func answerShareRevoked(_ reply: Reply, jti: String) {
        guard case .http(let connection) = reply else { return }
        replies.respond(connection, status: 200, json: HTTPBodies.shareRevoked(jti: jti))
    }

    /// Revokes `share` in this hub's table (at `t`, unless it already was) and ends its
    /// subscriptions; returns the link as now held.
    @discardableResult
    func revokeShareHere(_ share: StoredShare, at t: Int64) -> StoredShare {
        var revoked = share
        if revoked.revokedAt == nil { revoked.revokedAt = t }
        links.record(revoked)
        endSharing(jti: share.jti)
        return revoked
    }

    /// The connections holding the revoked token: each subscription ends with `unsubscribed`
    /// `{reason: "revoked"}`; the connection stays open, and every op needing a token is then
    /// `unauthorized` until a `hello` brings another.
    func endSharing(jti: String) {
        for (id, session) in fanout.sessions where session.grants.shareID == jti {
            session.grants = session.grants.revoked()
            for trip in session.subscriptions.keys.sorted() {
                fanout.unsubscribe(id, from: trip, slot: trips[trip]?.slot)
                fanout.enqueue(payload: ServerReplies.unsubscribed(re: nil, trip: trip, reason: "revoked"), to: id)
            }
        }
    }

    /// Housekeeping: about once a minute, links whose tokens expired are forgotten, here and
    /// in the store (an expired token is refused for its `exp` alone).
    func forgetExpiredSharesIfDue(now: Int64) {
        guard links.sweepIfDue(nowMs: now) else { return }
        storage.persist([.forgetShares(expiredBefore: ShareLinks.storeCutoff(nowMs: now))]) { _ in }
    }

    /// A fresh `jti`: 128 random bits, base64url (22 characters, a valid path segment).
    static func makeShareID() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Base64URL.encode(bytes)
    }

    // MARK: - What a share subscriber sees

    /// How `grants` sees `trip`: as a customer (a share link) or whole.
    static func audience(of grants: Grants, trip: String) -> TripView.Audience {
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
              let followers = fanout.subscriptions.followers(of: id) else { return }
        let reason = entry.trip.status == .arrived ? "arrived" : "ended"
        for connection in followers.keys where fanout[connection]?.grants.seesAsCustomer(id) == true {
            fanout.unsubscribe(connection, from: id, slot: trips[id]?.slot, keepingQueuedFrames: true)
            fanout.enqueue(payload: ServerReplies.unsubscribed(re: nil, trip: id, reason: reason), to: connection)
        }
    }
}
