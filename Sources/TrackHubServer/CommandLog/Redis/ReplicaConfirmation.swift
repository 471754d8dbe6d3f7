import TrackHubRedis

/// With `--cluster-replicas N` (PROTOCOL 15, "What an ack survives"): no node applies or
/// shows an entry before N replicas have confirmed it, so a promoted replica never takes
/// back what a subscriber saw.
///
/// The confirmed position of each partition is a key beside its stream,
/// `trackhub:{p<n>}:confirmed`, holding a stream id. A writer raises it after its `WAIT`
/// succeeds, to the last entry its pipeline appended to that partition: replication is in
/// the master's order, so every entry before that one (any node's) is on those replicas
/// too. Readers read the key in the same pipeline, just before the `XREAD`, and hold back
/// every entry past it: the partition is then read only up to the first held entry's ms
/// (as a full `COUNT` is), so the grid does not tick past it either.
///
/// An entry whose `WAIT` fell short (its client was answered `unavailable`) or whose writer
/// died before raising the key would hold its partition back for good; so the partition's
/// owner, seeing entries held for `rescueAfterMs`, confirms them itself: a write on its own
/// connection (`INCR` of `probeKey`), `WAIT`, then the raise (`ClusterLogWriter.confirm`).
///
/// Cost: one `EVAL` per partition and one more round trip per pipeline for the writer, one
/// `GET` per partition per read round for the reader (in the round's pipeline). Without
/// `--cluster-replicas` none of it runs.
enum ReplicaConfirmation {
    /// Entries held this long make the partition's owner confirm them itself.
    static let rescueAfterMs: Int64 = 1000

    static func confirmedKey(_ partition: Int) -> String { "trackhub:{p\(partition)}:confirmed" }
    static func probeKey(_ partition: Int) -> String { "trackhub:{p\(partition)}:confirm-probe" }

    /// Sets KEYS[1] to the stream id ARGV[1] unless it already holds that id or a later one.
    /// Lua numbers are doubles: exact for ms and sequence numbers below 2^53.
    static let raiseScript = """
        local c = redis.call('GET', KEYS[1])
        if c then
          local cm, cs = string.match(c, '^(%d+)-(%d+)$')
          local nm, ns = string.match(ARGV[1], '^(%d+)-(%d+)$')
          cm, cs, nm, ns = tonumber(cm), tonumber(cs), tonumber(nm), tonumber(ns)
          if cm and nm and (cm > nm or (cm == nm and cs >= ns)) then return 0 end
        end
        redis.call('SET', KEYS[1], ARGV[1])
        return 1
        """

    /// The command raising a partition's confirmed position to `id`.
    static func raise(_ partition: Int, to id: StreamID) -> [[UInt8]] {
        [Array(redis: "EVAL"), Array(redis: raiseScript), Array(redis: "1"), Array(redis: confirmedKey(partition)), Array(redis: id.description)]
    }

    /// The confirmed position in a `GET` reply: nothing confirmed yet is `StreamID.zero`.
    static func position(in reply: RedisValue) -> StreamID {
        reply.text.flatMap(StreamID.init) ?? .zero
    }

    /// Holds back the entries of `batch` past each partition's confirmed position: they are
    /// dropped (read again next round), the partition counts as read only up to the first
    /// held entry's ms, its last id read stops at the confirmed position (never behind
    /// `after`, where the reader already is), and `held` names the last id held back.
    static func holdUnconfirmed(_ batch: inout ClusterReadBatch, confirmed: [Int: StreamID], after: [StreamID]) {
        var firstHeld: [Int: StreamID] = [:]
        var kept: [ClusterReadBatch.Entry] = []
        kept.reserveCapacity(batch.entries.count)
        for entry in batch.entries {
            if entry.id <= confirmed[entry.partition, default: .zero] {
                kept.append(entry)
            } else {
                if firstHeld[entry.partition] == nil { firstHeld[entry.partition] = entry.id }
                batch.held[entry.partition] = entry.id
            }
        }
        batch.entries = kept
        for (p, first) in firstHeld {
            let upTo = first.ms - 1
            batch.full[p] = min(batch.full[p] ?? upTo, upTo)
            batch.watermark = min(batch.watermark, upTo)
            let last = min(batch.lastIDs[p] ?? .zero, confirmed[p, default: .zero])
            batch.lastIDs[p] = after.indices.contains(p) && last > after[p] ? last : nil
        }
    }
}
