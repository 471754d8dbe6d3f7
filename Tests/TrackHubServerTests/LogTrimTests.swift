import Testing
import TrackHubRedis
@testable import TrackHubServer
import TrackHubTesting

/// Trimming a partition's log below its snapshots, never by length (PROTOCOL 15, "Trimming"):
/// the floor rule without Redis, and `XTRIM … MINID` against a real `redis-server` (skipped
/// where Redis is not installed).
struct LogTrimTests {
    /// The trim floor is the lower of the replaced snapshot's position and the meta floor; without either, nothing is trimmed.
    @Test func theFloorIsTheLowerOfTheReplacedSnapshotAndTheMetaFloor() {
        let a = StreamID(ms: 100, sequence: 0), b = StreamID(ms: 200, sequence: 3)
        #expect(LogTrim.floor(partition: 1, replacedSnapshot: b, metaFloor: [.zero, a]) == a)
        #expect(LogTrim.floor(partition: 1, replacedSnapshot: a, metaFloor: [.zero, b]) == a)
        // No meta floor yet, one not covering the partition, or a start: nothing is trimmed.
        #expect(LogTrim.floor(partition: 1, replacedSnapshot: b, metaFloor: nil) == nil)
        #expect(LogTrim.floor(partition: 2, replacedSnapshot: b, metaFloor: [a, a]) == nil)
        #expect(LogTrim.floor(partition: 0, replacedSnapshot: .zero, metaFloor: [b]) == nil)
    }

    /// `XTRIM … MINID` removes only the entries below the floor, and the meta floor round-trips through its key.
    @Test func xtrimMinidKeepsTheFloorEntryAndEverythingAfter() throws {
        guard let redis = try RedisProcess.start() else { return }
        defer { redis.stop() }
        let client = try RedisClient(redis.address, timeoutMs: 2000)
        var ids: [StreamID] = []
        for i in 0..<10 {
            let reply = try client.command(["XADD", ClusterLog.streamKey(3), "*", "e", "\(i)"].map { Array(redis: $0) })
            ids.append(try #require(reply.text.flatMap(StreamID.init)))
        }
        _ = try client.command(LogTrim.command(partition: 3, below: ids[6]))
        #expect(try client.command(["XLEN", ClusterLog.streamKey(3)].map { Array(redis: $0) }).int == 4)
        let first = try client.command(["XRANGE", ClusterLog.streamKey(3), "-", "+", "COUNT", "1"].map { Array(redis: $0) })
        #expect(first.elements?.first?.elements?.first?.text == ids[6].description)
        // The floor round-trips through its key.
        _ = try client.command(LogTrim.writeMetaFloorCommand([ids[1], ids[2]]))
        #expect(try LogTrim.readMetaFloor(client) == [ids[1], ids[2]])
    }
}
