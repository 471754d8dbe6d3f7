import Foundation
import TrackHubRedis

/// A Redis client (one server or a cluster, `RedisClient`) that is made again after it breaks, no more often than a backoff
/// allows (100 ms, doubling to 2 s): a Redis that is down costs one connect attempt per
/// backoff step, not one per command.
struct RedisReconnect {
    let seeds: [RedisAddress]
    let timeoutMs: Int
    private(set) var connection: RedisClient?
    private var backoffMs: Int64 = 0
    private var nextAttempt: Int64 = 0
    /// The last connection error, for logs and replies.
    private(set) var lastError: RedisError?

    init(seeds: [RedisAddress], timeoutMs: Int) {
        self.seeds = seeds
        self.timeoutMs = timeoutMs
    }

    /// The connection, connecting first when there is none and the backoff allows.
    mutating func get() throws(RedisError) -> RedisClient {
        if let connection { return connection }
        let now = systemMonotonicMicros() / 1000
        if now < nextAttempt, let lastError { throw lastError }
        do {
            let c = try RedisClient(seeds: seeds, timeoutMs: timeoutMs)
            connection = c
            backoffMs = 0
            lastError = nil
            return c
        } catch {
            noteFailure(error)
            throw error
        }
    }

    /// Drops a broken connection; the next `get` waits out the backoff.
    mutating func noteFailure(_ error: RedisError) {
        connection = nil
        lastError = error
        backoffMs = min(2000, max(100, backoffMs * 2))
        nextAttempt = systemMonotonicMicros() / 1000 + backoffMs
    }

    var isConnected: Bool { connection != nil }
}

