import Foundation
import Testing
import TrackHubRedis
import TrackHubSync
@testable import TrackHubServer
import TrackHubTesting

/// `RedisClient` and the cluster log on a real three-master Redis Cluster made on loopback
/// (`RedisClusterProcess`; skipped where redis-server or redis-cli is not installed).
@Suite(.serialized) struct RedisClusterTests {
    @Test func slotsFollowTheClusterSpec() {
        // CRC-16/XMODEM's check value, and the spec's hash-tag examples.
        #expect(RedisSlot.crc16(Array("123456789".utf8)[...]) == 0x31C3)
        #expect(RedisSlot.of("{user1000}.following") == RedisSlot.of("{user1000}.followers"))
        #expect(RedisSlot.of("foo{}{bar}") == RedisSlot.of("foo{}{bar}"))
        #expect(RedisSlot.of("foo{{bar}}zap") == RedisSlot.of("{bar"))
        #expect(RedisSlot.of("foo{bar}{zap}") == RedisSlot.of("bar"))
        for p in 0..<16 {
            #expect(RedisSlot.of(ClusterLog.streamKey(p)) == RedisSlot.of(PartitionLeases.leaseKey(p)))
            #expect(RedisSlot.of(ClusterLog.streamKey(p)) == RedisSlot.of(PartitionSnapshot.key(p)))
        }
        #expect(RedisSlot.routingKey(of: ["EVAL", "script", "1", "k"].map { Array($0.utf8) }) == Array("k".utf8))
        #expect(RedisSlot.routingKey(of: ["XREAD", "COUNT", "5", "STREAMS", "s", "0-0"].map { Array($0.utf8) }) == Array("s".utf8))
        #expect(RedisSlot.routingKey(of: [Array("TIME".utf8)]) == nil)
    }

    @Test func slotsAgreeWithRedisAndAPipelineSpansEveryMasterInOrder() throws {
        guard let cluster = try RedisClusterProcess.start() else { return }
        defer { cluster.stop() }
        let client = try RedisClient(seeds: [cluster.masters[1]], timeoutMs: 2000)
        #expect(client.isCluster && Set(client.masters) == Set(cluster.masters))
        let keys = (0..<300).map { "key-\($0)" } + (0..<16).map(ClusterLog.streamKey)
        let asked = try RedisConnection(cluster.masters[0], timeoutMs: 2000)
        for key in keys.prefix(40) + keys.suffix(16) {
            #expect(try asked.command(["CLUSTER", "KEYSLOT", key].map { Array($0.utf8) }).int == Int64(RedisSlot.of(key)), "\(key)")
        }
        let sets = try client.pipeline(keys.enumerated().map { ["SET", $0.element, "v\($0.offset)"].map { Array($0.utf8) } })
        #expect(sets.allSatisfy { $0 == .status("OK") })
        let gets = try client.pipeline(keys.map { ["GET", $0].map { Array($0.utf8) } })
        #expect(gets.map(\.text) == keys.indices.map { "v\($0)" })
        // The keys really are spread: every master holds some.
        for master in cluster.masters {
            #expect((try RedisConnection(master, timeoutMs: 2000).command([Array("DBSIZE".utf8)]).int ?? 0) > 0, "\(master) holds no key")
        }
    }

    @Test func aSlotMovedByAReshardIsFollowedByTheClientAndTheLog() throws {
        guard let cluster = try RedisClusterProcess.start() else { return }
        defer { cluster.stop() }
        let partitions = 8
        let writer = ClusterLogWriter(seeds: cluster.masters)
        writer.start()
        defer { writer.stop() }
        let acked = HubMutex<[StreamID]>([])
        func append(_ range: Range<Int>) throws {
            for i in range {
                let command = ClusterCommand(kind: .end, trip: "trip-\(i % 11)", origin: "test", request: Int64(i))
                writer.append(partition: ClusterLog.partition(of: command.partitionKey, partitions: partitions), payload: command.encoded()) { result in
                    if case .success(let id) = result { acked.withLock { $0.append(id) } }
                }
            }
            try waitUntil("\(range.upperBound) appends acked") { acked.withLock { $0.count } == range.upperBound }
        }
        try append(0..<200)

        let tail = LogTail(seeds: [cluster.masters[2]], partitions: partitions)
        defer { tail.stop() }
        try waitUntil("the first 200 read") {
            return tail.commands.count == 200
        }

        // A client that knew the old map is told MOVED and follows; so are the writer and reader.
        let client = try RedisClient(seeds: cluster.masters, timeoutMs: 2000)
        let movedPartition = ClusterLog.partition(of: "trip-3", partitions: partitions)
        let slot = RedisSlot.of(ClusterLog.streamKey(movedPartition))
        let before = try #require(client.slotMap?.master(ofSlot: slot))
        let target = try #require(cluster.masters.first { $0 != before })
        try cluster.moveSlot(slot, to: target)
        #expect(try client.command(["XLEN", ClusterLog.streamKey(movedPartition)].map { Array($0.utf8) }).int ?? 0 > 0)
        #expect(client.slotMap?.master(ofSlot: slot) == target)

        try append(200..<400)
        let lastAck = try #require(acked.withLock { $0.max() })
        try waitUntil("every entry read and the watermark past the last") {
            return tail.commands.count == 400 && tail.watermark >= lastAck.ms
        }
        let requests = tail.commands
        for trip in 0..<11 {
            let mine = requests.filter { $0.trip == "trip-\(trip)" }.compactMap(\.request)
            #expect(mine == (0..<400).filter { $0 % 11 == trip }.map(Int64.init), "trip-\(trip): out of order, lost or twice")
        }
    }
}
