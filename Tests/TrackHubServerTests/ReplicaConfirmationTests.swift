import Testing
import TrackHubRedis
@testable import TrackHubServer

/// `ReplicaConfirmation.holdUnconfirmed`: with `--cluster-replicas`, what a reader may apply.
@Suite struct ReplicaConfirmationTests {
    private func entry(_ p: Int, _ ms: Int64, _ n: Int64 = 0) -> ClusterReadBatch.Entry {
        .init(partition: p, id: StreamID(ms: ms, sequence: n), payload: [])
    }

    private func batch(_ entries: [ClusterReadBatch.Entry], time: Int64 = 5000) -> ClusterReadBatch {
        var lastIDs: [Int: StreamID] = [:]
        for e in entries { lastIDs[e.partition] = e.id }
        return ClusterReadBatch(entries: entries, lastIDs: lastIDs, watermark: time, time: time)
    }

    @Test func entriesPastTheConfirmedPositionAreHeldAndTheWatermarkStopsBeforeThem() {
        var b = batch([entry(0, 100), entry(0, 200), entry(0, 300), entry(1, 150)])
        ReplicaConfirmation.holdUnconfirmed(&b, confirmed: [0: StreamID(ms: 200, sequence: 0), 1: StreamID(ms: 150, sequence: 0)], after: [.zero, .zero])
        #expect(b.entries.map(\.id.ms) == [100, 200, 150])
        #expect(b.lastIDs[0] == StreamID(ms: 200, sequence: 0), "read again from just after the confirmed position")
        #expect(b.lastIDs[1] == StreamID(ms: 150, sequence: 0))
        #expect(b.full[0] == 299, "partition 0 counts as read up to the held entry's ms")
        #expect(b.full[1] == nil)
        #expect(b.watermark == 299, "the grid does not tick past a held entry")
        #expect(b.held == [0: StreamID(ms: 300, sequence: 0)])
    }

    @Test func nothingConfirmedHoldsEverythingAndTheReaderStaysWhereItWas() {
        var b = batch([entry(2, 400, 1), entry(2, 400, 2)])
        let after = [StreamID.zero, .zero, StreamID(ms: 390, sequence: 0)]
        ReplicaConfirmation.holdUnconfirmed(&b, confirmed: [2: StreamID(ms: 380, sequence: 0)], after: after)
        #expect(b.entries.isEmpty)
        #expect(b.lastIDs[2] == nil, "never behind where the reader already is")
        #expect(b.held[2] == StreamID(ms: 400, sequence: 2))
        #expect(b.watermark == 399)
    }

    @Test func aConfirmedPositionIsReadFromItsKeyAndMissingIsZero() {
        #expect(ReplicaConfirmation.position(in: .string(Array("1700000000000-7".utf8))) == StreamID(ms: 1_700_000_000_000, sequence: 7))
        #expect(ReplicaConfirmation.position(in: .null) == .zero)
        #expect(ReplicaConfirmation.confirmedKey(3) == "trackhub:{p3}:confirmed", "in the slot of the partition's stream")
        #expect(RedisSlot.of(Array(ReplicaConfirmation.confirmedKey(3).utf8)) == RedisSlot.of(Array(ClusterLog.streamKey(3).utf8)))
    }
}
