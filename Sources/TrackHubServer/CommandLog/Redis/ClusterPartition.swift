/// What a node knows and does about one partition of the log (PROTOCOL 15, docs/cluster.md
/// "Partitions, owners and tailing"). Owned by the service thread.
///
/// A node applies a partition's trip commands only while it is `applied`: it owns it, or one
/// of its own clients uses a trip in it. It starts from the owner's latest snapshot of the
/// partition and the log after it (`loading`, then `applied`), and forgets the partition's
/// trips when it stops (`idle`). Device and share link commands are applied from every
/// partition by every node (they are few, and every hub answers for every device and link).
struct ClusterPartition {
    enum Phase: Equatable {
        /// Not applied here: its trip entries are skipped.
        case idle
        /// Its snapshot is being read; requests about its trips wait.
        case loading
        /// Applied, from `tripApplied` on.
        case applied
    }

    /// How long a partition nobody here uses any more stays applied (PROTOCOL 15: "stops
    /// within 10 s after the last one leaves"; housekeeping runs every 500 ms).
    static let idleAfterMs: Int64 = 8000
    /// Requests that may wait for one partition to be loaded; past it: `unavailable`.
    static let maxWaiting = 10_000
    /// How long a request waits for its partition to be loaded and caught up.
    static let loadTimeoutMs: Int64 = 10_000

    var phase = Phase.idle
    /// Bumped whenever the partition starts or stops being applied: entries the reader read
    /// in an older epoch are not applied as trip commands.
    var epoch = 0
    /// The last entry applied as a trip command (what a snapshot of it taken now covers).
    var tripApplied = StreamID.zero
    /// Every trip entry of this partition stamped below this is applied (`.min`: none yet).
    var watermark = Int64.min
    /// When a client of this node last used one of its trips.
    var lastUsed = Int64.min
    /// This node holds its lease (`PartitionLeases`).
    var owned = false
    /// Requests about its trips waiting for it to be applied up to their arrival.
    var waiting: [ClusterState.AwaitingLog] = []

    func isCaughtUp(now: Int64) -> Bool {
        phase == .applied && watermark != .min && now - watermark <= ClusterState.caughtUpWithinMs
    }
}
