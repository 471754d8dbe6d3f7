import Foundation
import Testing
import TrackHubCLI
import TrackHubRedis
import TrackHubSync
@testable import TrackHubServer
import TrackHubTesting

/// The Redis layer against a real `redis-server` (skipped where it is not installed).
@Suite(.serialized) struct ClusterRedisTests {
    @Test func writerAndReaderCarryEveryEntryInOrder() throws {
        guard let redis = try RedisProcess.start() else { return }
        defer { redis.stop() }
        let writer = ClusterLogWriter(seeds: [redis.address])
        writer.start()
        defer { writer.stop() }
        let acked = HubMutex<[StreamID]>([])
        for i in 0..<500 {
            let command = ClusterCommand(kind: .end, trip: "trip-\(i % 7)", origin: "test", request: Int64(i))
            writer.append(partition: ClusterLog.partition(of: command.partitionKey, partitions: 4), payload: command.encoded()) { result in
                if case .success(let id) = result { acked.withLock { $0.append(id) } }
            }
        }
        try waitUntil("500 appends acked") { acked.withLock { $0.count } == 500 }

        let tail = LogTail(seeds: [redis.address], partitions: 4)
        defer { tail.stop() }
        let lastAck = try #require(acked.withLock { $0.max() })
        try waitUntil("every entry read and the watermark past the last") {
            return tail.commands.count == 500 && tail.watermark >= lastAck.ms
        }
        // Per trip (one partition each) the entries come back in the order they were appended.
        let requests = tail.commands
        for trip in 0..<7 {
            let mine = requests.filter { $0.trip == "trip-\(trip)" }.compactMap(\.request)
            #expect(mine == mine.sorted(), "trip-\(trip) out of order")
            #expect(mine.count == (0..<500).filter { $0 % 7 == trip }.count)
        }
    }

    @Test func appendsFailWhileRedisIsDownAndRecover() throws {
        guard let redis = try RedisProcess.start() else { return }
        defer { redis.stop() }
        let writer = ClusterLogWriter(seeds: [redis.address])
        writer.start()
        defer { writer.stop() }
        func append() throws -> Result<StreamID, RedisError> {
            let outcome = HubMutex<Result<StreamID, RedisError>?>(nil)
            writer.append(partition: 0, payload: Array("{}".utf8)) { result in outcome.withLock { $0 = result } }
            var result: Result<StreamID, RedisError>?
            try waitUntil("append answered") {
                result = outcome.withLock { $0 }
                return result != nil
            }
            return result!
        }
        guard case .success = try append() else { Issue.record("first append failed"); return }
        redis.stop()
        guard case .failure = try append() else { Issue.record("an append succeeded with Redis down"); return }
        try redis.restart()
        writer.reconnectBeforeNextSend()
        var recovered = false
        try waitUntil("appends succeed again") {
            if case .success = try append() { recovered = true }
            return recovered
        }
    }

    @Test func streamsNamedBeforeTheHashTagsAreRenamedWhenANodeStarts() throws {
        guard let redis = try RedisProcess.start() else { return }
        defer { redis.stop() }
        let c = try RedisConnection(redis.address, timeoutMs: 2000)
        let old = ClusterCommand(kind: .end, trip: "old-trip", origin: "an-older-hub", request: nil).encoded()
        _ = try c.command([Array(redis: "XADD"), Array(redis: "trackhub:log:2"), Array(redis: "*"), Array(redis: "e"), old])
        try withTestHub(configure: {
            $0.clusterSeeds = [redis.address]
            $0.clusterPartitions = 4
        }) { _, _ in
            #expect(try c.command(["EXISTS", "trackhub:log:2"].map { Array(redis: $0) }).int == 0)
            let kept = try c.command(["XRANGE", ClusterLog.streamKey(2), "-", "+"].map { Array(redis: $0) }).elements ?? []
            #expect(kept.count == 1 && kept.first?.elements?[1].elements?[1].bytes == old, "the old entry under its new key")
        }
    }
}
