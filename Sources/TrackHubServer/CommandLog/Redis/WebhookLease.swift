import TrackHubRedis

/// Cluster mode: which node delivers the webhooks (PROTOCOL 12: "each event delivered by one
/// node"). One lease key in Redis, taken with `SET NX PX` and renewed by its holder every
/// `renewEveryMs`; a holder that dies stops renewing and another node takes it within
/// `ttlMs`. Partition ownership (section 15) will replace it; until then one node delivers
/// every URL's events.
///
/// A holder that cannot renew (Redis unreachable, or another node holds the key) stops
/// delivering at once. Two nodes may both deliver for a moment around an expiry (a holder
/// paused longer than the TTL); receivers drop repeats by `webhook-id`.
struct WebhookLease {
    static let key = "trackhub:webhooks:lease"
    /// Renews only while the key is still ours.
    static let renewScript = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end"
    static let releaseScript = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end"

    let nodeID: String
    let ttlMs: Int64
    let renewEveryMs: Int64
    private var redis: RedisReconnect
    private(set) var isHeld = false
    private var nextCheck: Int64 = 0

    init(address: RedisAddress, nodeID: String, ttlMs: Int64 = 5000, renewEveryMs: Int64 = 1000) {
        self.nodeID = nodeID
        self.ttlMs = ttlMs
        self.renewEveryMs = renewEveryMs
        redis = RedisReconnect(address: address, timeoutMs: Int(min(ttlMs / 2, 2000)))
    }

    /// When `check` next has something to do.
    var nextDue: Int64 { nextCheck }

    /// Takes or renews the lease when due; returns whether this node holds it.
    mutating func check(now: Int64) -> Bool {
        guard now >= nextCheck else { return isHeld }
        nextCheck = now + renewEveryMs
        do {
            let connection = try redis.get()
            let reply: RedisValue
            if isHeld {
                reply = try connection.command(["EVAL", Self.renewScript, "1", Self.key, nodeID, String(ttlMs)].map { Array(redis: $0) })
                isHeld = reply.int == 1
            } else {
                reply = try connection.command(["SET", Self.key, nodeID, "NX", "PX", String(ttlMs)].map { Array(redis: $0) })
                isHeld = reply.text == "OK"
            }
        } catch {
            redis.noteFailure(error)
            isHeld = false
        }
        return isHeld
    }

    /// Gives the lease up (a clean stop), so another node takes over without waiting.
    mutating func release() {
        guard isHeld, let connection = try? redis.get() else { return }
        _ = try? connection.command(["EVAL", Self.releaseScript, "1", Self.key, nodeID].map { Array(redis: $0) })
        isHeld = false
    }
}
