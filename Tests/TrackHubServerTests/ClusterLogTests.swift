import Foundation
import Testing
import TrackHubCore
import TrackHubRedis
@testable import TrackHubServer

/// The cluster log's formats: commands, partitions, stream ids, and reading XREAD replies.
@Suite struct ClusterLogTests {
    @Test func commandsRoundTripExactly() throws {
        let fixes = [
            FixInput(lat: 60.170_123_456_789, lon: 24.941_234_567_891, ts: 1_796_000_000_123, seq: 7, durationMs: 1000.5, speedMps: 3.25, heading: 359.999, accuracyM: 4),
            FixInput(lat: -33.9, lon: 151.2, ts: 1_796_000_001_000),
        ]
        let commands = [
            ClusterCommand(kind: .fixes, trip: "t-1", origin: "node-a", request: 42, fixes: fixes),
            ClusterCommand(kind: .create, trip: "t-2", origin: "node-b", request: 1, body: #"{"route":[[24.9,60.1],[24.95,60.1]],"rider":{"name":"Åsa \"A\""}}"#),
            ClusterCommand(kind: .end, trip: "t-3"),
            ClusterCommand(kind: .fixes, trip: "t-1", fixes: [fixes[1]], device: "phone-1"),
            ClusterCommand(kind: .putDevice, trip: "t-1", origin: "node-a", request: 2, device: "phone-1", name: "Åsa"),
            ClusterCommand(kind: .putDevice, device: "phone-2"),
            ClusterCommand(kind: .deleteDevice, origin: "node-b", request: 3, device: "phone-1"),
            ClusterCommand(kind: .deviceSeen, fixes: [fixes[0]], device: "phone-2"),
        ]
        for command in commands {
            let decoded = try #require(ClusterCommand.decode(command.encoded()))
            #expect(decoded == command)
        }
    }

    @Test func deviceCommandsGoToTheirDevicesPartitionAndItsFixesToTheTrips() {
        let fix = FixInput(lat: 1, lon: 2, ts: 3)
        #expect(ClusterCommand(kind: .putDevice, trip: "t-9", device: "phone-1").partitionKey == "phone-1")
        #expect(ClusterCommand(kind: .deleteDevice, device: "phone-1").partitionKey == "phone-1")
        #expect(ClusterCommand(kind: .deviceSeen, fixes: [fix], device: "phone-1").partitionKey == "phone-1")
        #expect(ClusterCommand(kind: .fixes, trip: "t-9", fixes: [fix], device: "phone-1").partitionKey == "t-9")
    }

    @Test func garbageIsNotACommand() {
        #expect(ClusterCommand.decode(Array("hello".utf8)) == nil)
        #expect(ClusterCommand.decode(Array(#"{"k":"teleport","t":"x"}"#.utf8)) == nil)
    }

    @Test func partitionsAreStableAndSpread() {
        // FNV-1a: fixed values, so every node and every release agrees.
        #expect(ClusterLog.partition(of: "t1", partitions: 16) == ClusterLog.partition(of: "t1", partitions: 16))
        #expect(ClusterLog.partition(of: "", partitions: 16) == Int(UInt64(0xcbf2_9ce4_8422_2325) % 16))
        var counts = Array(repeating: 0, count: 16)
        for i in 0..<16_000 { counts[ClusterLog.partition(of: "trip-\(i)", partitions: 16)] += 1 }
        #expect(counts.allSatisfy { $0 > 800 && $0 < 1200 }, "uneven spread: \(counts)")
        #expect(ClusterLog.partition(of: "anything", partitions: 1) == 0)
    }

    @Test func streamIDsParseAndOrder() throws {
        let a = try #require(StreamID("1796000000123-0"))
        let b = try #require(StreamID("1796000000123-5"))
        let c = try #require(StreamID("1796000000124-0"))
        #expect(a < b && b < c)
        #expect(a.ms == 1_796_000_000_123 && b.sequence == 5)
        #expect(StreamID("12") == nil && StreamID("a-b") == nil)
        #expect(b.description == "1796000000123-5")
    }

    @Test func redisAddresses() {
        #expect(RedisAddress(url: "redis://10.0.0.5:6380") == RedisAddress(host: "10.0.0.5", port: 6380))
        #expect(RedisAddress(url: "redis://redis") == RedisAddress(host: "redis", port: 6379))
        #expect(RedisAddress(url: "redis://redis:6379/") == RedisAddress(host: "redis", port: 6379))
        for bad in ["http://x:1", "redis://", "redis://x:0", "redis://x:99999", "redis://user@x:1", "redis://x:1/2"] {
            #expect(RedisAddress(url: bad) == nil, "\(bad)")
        }
    }

    private func entry(_ id: String, _ payload: String) -> RedisValue {
        .array([.string(Array(id.utf8)), .array([.string(Array("e".utf8)), .string(Array(payload.utf8))])])
    }

    @Test func readRepliesGiveEntriesAndTheWatermark() throws {
        let time = RedisValue.array([.string(Array("1796000001".utf8)), .string(Array("250999".utf8))])
        let read = RedisValue.array([
            .array([.string(Array("trackhub:{p3}:log".utf8)), .array([entry("1796000000100-0", "a"), entry("1796000000200-1", "b")])]),
            .array([.string(Array("trackhub:{p0}:log".utf8)), .array([
                .array([.string(Array("1796000000150-0".utf8)), .array([.string(Array("other".utf8)), .string(Array("x".utf8))])]),
            ])]),
        ])
        let batch = try ClusterLogReader.parse(time: time, read: read, partitions: 4)
        #expect(batch.entries.map { String(decoding: $0.payload, as: UTF8.self) } == ["a", "b"])
        #expect(batch.entries.map(\.partition) == [3, 3])
        // The entry without our field is skipped but still read past.
        #expect(batch.lastIDs[0] == StreamID("1796000000150-0"))
        #expect(batch.lastIDs[3] == StreamID("1796000000200-1"))
        // TIME was 1796000001.250999 s: everything before its ms (minus one) has been read.
        #expect(batch.watermark == 1_796_000_001_250 - 1)
    }

    @Test func aFullReadHoldsTheWatermarkAtItsLastEntry() throws {
        let time = RedisValue.array([.string(Array("1796000009".utf8)), .string(Array("0".utf8))])
        let items = (0..<ClusterLogReader.entriesPerRead).map { entry("\(1_796_000_000_000 + Int64($0))-0", "x") }
        let read = RedisValue.array([.array([.string(Array("trackhub:{p1}:log".utf8)), .array(items)])])
        let batch = try ClusterLogReader.parse(time: time, read: read, partitions: 2)
        let lastMs = 1_796_000_000_000 + Int64(ClusterLogReader.entriesPerRead - 1)
        #expect(batch.watermark == lastMs - 1, "more entries may wait in that partition")
    }

    @Test func aQuietReadStillMovesTheWatermark() throws {
        let time = RedisValue.array([.string(Array("1796000002".utf8)), .string(Array("5000".utf8))])
        let batch = try ClusterLogReader.parse(time: time, read: .null, partitions: 16)
        #expect(batch.entries.isEmpty)
        #expect(batch.watermark == 1_796_000_002_005 - 1)
    }

    @Test func malformedRepliesAreErrors() {
        #expect(throws: RedisError.self) { try ClusterLogReader.parse(time: .null, read: .null, partitions: 1) }
        let time = RedisValue.array([.string(Array("1".utf8)), .string(Array("0".utf8))])
        #expect(throws: RedisError.self) { try ClusterLogReader.parse(time: time, read: .error("WRONGTYPE"), partitions: 1) }
        #expect(throws: RedisError.self) {
            try ClusterLogReader.parse(time: time, read: .array([.array([.string(Array("trackhub:{p9}:log".utf8)), .array([])])]), partitions: 2)
        }
    }

    @Test func theGridStartsAtTheNextSubTick() {
        let state = ClusterState(nodeID: "n", partitions: 1, writer: ClusterLogWriter(seeds: [RedisAddress(host: "127.0.0.1", port: 1)]), applied: [.zero], tickHz: 10, phases: 20)
        #expect(state.periodMs == 100 && state.subTickMs == 5)
        #expect(state.firstTick(after: 1000) == 1005)
        #expect(state.firstTick(after: 1004) == 1005)
        #expect(state.firstTick(after: 1005) == 1010)
    }
}
