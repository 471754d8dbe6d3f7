/// The partition of a trip in cluster mode (PROTOCOL 15): all of a trip's commands go to one
/// stream of the log, so they are totally ordered. Public so that a partition-aware router
/// (`trackhub-load --partition-url`, a load balancer) sends a trip's clients where the hub
/// would put it.
public enum TripPartition {
    /// FNV-1a 64 over the id's UTF-8 bytes, modulo `partitions`: the same on every node and
    /// every run (Swift's `Hasher` is seeded per process).
    public static func of(_ tripID: String, partitions: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in tripID.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int(hash % UInt64(max(1, partitions)))
    }
}
