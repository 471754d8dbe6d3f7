import TrackHubStore
import TrackHubSync

/// The share links issued and the ones revoked (PROTOCOL 13), as the command log holds
/// them. Token checks read it on every request (`TokenVerifier`), so it is a `Mutex`-guarded
/// reference the verifier value carries: the HTTP gate and the WebSocket side see one set.
///
/// Bounded: a link whose token has expired (its `exp` plus the leeway) is refused for its
/// expiry anyway, so `forgetExpired` drops it, revoked or not; what is kept is at most the
/// links issued in the last 30 days (the longest `ttl_s`).
///
/// Filled by the command log (`CommandLog.submit(_: ShareCommand, …)`): on a hub alone from
/// its store; in cluster mode (`--cluster`) every node applies the shared log's issues and
/// revocations (and loads the snapshot's links at start), so a link issued on one node is
/// known to all and a revocation on any is honoured by every node, a restarted one too
/// (docs/share-links.md, docs/cluster.md). The same bound holds there: each node forgets
/// expired links, and a snapshot holds only links not yet expired.
final class ShareLinks: Sendable {
    private let links = HubMutex<[String: StoredShare]>([:])
    /// When expired links were last forgotten (ms), so the sweep runs about once a minute.
    private let lastSweep = HubMutex<Int64>(0)

    init() {}

    /// Replaces what is held by what the store loaded (start-up).
    func restore(_ stored: [StoredShare]) {
        links.withLock { links in
            links = [:]
            for share in stored { links[share.jti] = share }
        }
    }

    /// Every link held (for a cluster snapshot).
    var all: [StoredShare] {
        links.withLock { $0.values.sorted { $0.jti < $1.jti } }
    }

    /// The link with this `jti`, if it was issued and is not forgotten.
    func link(_ jti: String) -> StoredShare? {
        links.withLock { $0[jti] }
    }

    /// True when the token with this `jti` was revoked.
    func isRevoked(_ jti: String) -> Bool {
        links.withLock { $0[jti]?.revokedAt != nil }
    }

    /// Records a link once the command log holds it (issued, or revoked).
    func record(_ share: StoredShare) {
        links.withLock { $0[share.jti] = share }
    }

    /// Drops the links whose tokens expired before `nowMs` (with the leeway); returns how many.
    @discardableResult
    func forgetExpired(nowMs: Int64) -> Int {
        links.withLock { links in
            let before = links.count
            links = links.filter { !Self.hasExpired($0.value, nowMs: nowMs) }
            return before - links.count
        }
    }

    /// Forgets expired links if a minute has passed since the last sweep; returns whether any
    /// were forgotten (the store is then told to forget them too).
    func sweepIfDue(nowMs: Int64) -> Bool {
        let due = lastSweep.withLock { last -> Bool in
            guard nowMs - last >= 60_000 else { return false }
            last = nowMs
            return true
        }
        return due && forgetExpired(nowMs: nowMs) > 0
    }

    /// The cutoff for the store's `forgetShares(expiredBefore:)` at `nowMs`: tokens whose `exp`
    /// (ms) is before it are past their leeway, refused whatever the store says.
    static func storeCutoff(nowMs: Int64) -> Int64 {
        nowMs - (JWT.leewaySeconds + 1) * 1000
    }

    /// The number of links held (for `/metrics` and tests).
    var count: Int { links.withLock { $0.count } }

    /// Whether a link's token can no longer be presented: past its `exp` and the leeway.
    static func hasExpired(_ share: StoredShare, nowMs: Int64) -> Bool {
        JWT.isExpired(expiresAt: share.expiresAt / 1000, nowMs: nowMs)
    }
}
