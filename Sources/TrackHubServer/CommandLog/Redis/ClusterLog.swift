import TrackHubProtocol

/// Names and numbers of the cluster log in Redis (docs/cluster.md).
enum ClusterLog {
    static let partitionsKey = "trackhub:partitions"
    /// The one-key snapshot of every trip written before partitions had their own (read only).
    static let snapshotKey = "trackhub:snapshot"
    /// The devices and share links (`ClusterSnapshot` without trips), written by the owner
    /// of partition 0; each partition's trips are in `PartitionSnapshot.key(p)`.
    static let metaSnapshotKey = "trackhub:snapshot:meta"
    /// The positions (per partition, JSON strings of stream ids) of the meta snapshot that the
    /// latest one replaced: a node may still be reading devices and links from there, so no
    /// partition is trimmed below them (`LogTrim`).
    static let metaFloorKey = "trackhub:snapshot:meta:floor"
    /// A partition whose stream holds more entries than this has had no snapshot for too long
    /// (its log is trimmed only below its snapshots): a warning, and `/healthz` `degraded`
    /// (PROTOCOL 15, "Trimming").
    static let warnEntriesPerPartition = 2_000_000
    /// The field of a stream entry holding the command.
    static let entryField = "e"

    /// A partition's stream. The hash tag `{p<n>}` puts the stream, its snapshot, its lease
    /// and its fleet positions in one slot of a Redis Cluster (on one master).
    static func streamKey(_ partition: Int) -> String { "trackhub:{p\(partition)}:log" }

    /// The stream key of partitions before they were hash-tagged (`trackhub:log:<n>`), renamed
    /// on a single Redis when a node starts (`RedisCommandLog.join`).
    static func legacyStreamKey(_ partition: Int) -> String { "trackhub:log:\(partition)" }

    /// The partition a stream key names, if it is one of `partitions`.
    static func partition(ofStreamKey key: String, partitions: Int) -> Int? {
        guard key.hasPrefix("trackhub:{p"), key.hasSuffix("}:log"),
            let p = Int(key.dropFirst("trackhub:{p".count).dropLast("}:log".count)), (0..<partitions).contains(p)
        else { return nil }
        return p
    }

    /// The partition of a trip: all its commands go to one stream, so they are totally ordered
    /// (`TripPartition`, shared with partition-aware routers).
    static func partition(of tripID: String, partitions: Int) -> Int {
        TripPartition.of(tripID, partitions: partitions)
    }
}

/// A Redis stream entry id, `<ms>-<n>`: the ms is Redis's clock when the entry was added,
/// and the entry's time for every node that applies it.
struct StreamID: Comparable, Sendable, Codable, CustomStringConvertible {
    var ms: Int64
    var sequence: Int64

    static let zero = StreamID(ms: 0, sequence: 0)

    init(ms: Int64, sequence: Int64) {
        self.ms = ms
        self.sequence = sequence
    }

    init?(_ text: String) {
        guard let dash = text.firstIndex(of: "-"), let ms = Int64(text[..<dash]),
            let n = Int64(text[text.index(after: dash)...])
        else { return nil }
        self.ms = ms
        self.sequence = n
    }

    var description: String { "\(ms)-\(sequence)" }

    static func < (a: StreamID, b: StreamID) -> Bool {
        (a.ms, a.sequence) < (b.ms, b.sequence)
    }

    init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = StreamID(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a stream id: \(text)"))
        }
        self = id
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
