import TrackHubRedis

/// Cluster mode: the delivery positions in Redis (PROTOCOL 12: "kept in the shared engine"),
/// so the node that takes over the delivery after another's death starts where it stopped.
///
/// Keys: `trackhub:webhooks:targets` (hash: URL → when first configured, ms) and
/// `trackhub:webhooks:positions:<url>` (hash: trip → last event done). Blocking calls on
/// the webhook thread only, with the connection's timeout; a failure is a failed write
/// (retried with the next flush) or, at `load`, no delivery until it works.
final class RedisWebhookPositions: WebhookPositionKeeper {
    static let targetsKey = "trackhub:webhooks:targets"
    static func positionsKey(_ url: String) -> String { "trackhub:webhooks:positions:\(url)" }

    private var redis: RedisReconnect

    init(seeds: [RedisAddress]) {
        redis = RedisReconnect(seeds: seeds, timeoutMs: 2000)
    }

    func load(urls: [String], lastEvents: [String: Int], now: Int64) throws(WebhookError) -> [String: [String: Int]] {
        do {
            let connection = try redis.get()
            var result: [String: [String: Int]] = [:]
            for url in urls {
                let added = try connection.command(["HSETNX", Self.targetsKey, url, String(now)].map { Array(redis: $0) })
                if added.int == 1 {
                    // First configured now: start at every trip's last event.
                    try writeAll(connection, url: url, lastEvents)
                    result[url] = lastEvents
                    continue
                }
                let all = try connection.command(["HGETALL", Self.positionsKey(url)].map { Array(redis: $0) })
                var positions: [String: Int] = [:]
                let items = all.elements ?? []
                var index = 0
                while index + 1 < items.count {
                    if let trip = items[index].text, let n = items[index + 1].int { positions[trip] = Int(n) }
                    index += 2
                }
                result[url] = positions
            }
            return result
        } catch {
            redis.noteFailure(error)
            throw .store("cannot read the delivery positions from Redis: \(error)")
        }
    }

    func write(_ positions: [String: [String: Int]], failed: @escaping @Sendable () -> Void) {
        do {
            let connection = try redis.get()
            for (url, trips) in positions where !trips.isEmpty { try writeAll(connection, url: url, trips) }
        } catch {
            redis.noteFailure(error)
            failed()
        }
    }

    func forget(trips: [String], urls: [String]) {
        guard !trips.isEmpty, let connection = try? redis.get() else { return }
        for url in urls {
            _ = try? connection.command((["HDEL", Self.positionsKey(url)] + trips).map { Array(redis: $0) })
        }
    }

    private func writeAll(_ connection: RedisClient, url: String, _ positions: [String: Int]) throws(RedisError) {
        let pairs = Array(positions)
        var start = 0
        while start < pairs.count {
            let chunk = pairs[start..<min(pairs.count, start + 500)]
            var arguments = ["HSET", Self.positionsKey(url)].map { Array(redis: $0) }
            for (trip, n) in chunk {
                arguments.append(Array(redis: trip))
                arguments.append(Array(redis: String(n)))
            }
            let reply = try connection.command(arguments)
            if case .error(let why) = reply { throw .refused(why) }
            start += 500
        }
    }
}
