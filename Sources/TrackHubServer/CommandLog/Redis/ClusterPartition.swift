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
    /// How long a request waits for its partition to be loaded and caught up with the log up
    /// to its arrival (PROTOCOL 15, "Late joiners see the present": within 2 s, else
    /// `unavailable`; the loading goes on, so the client's retry finds it further along).
    static let loadTimeoutMs: Int64 = 2000

    /// A request about one of the partition's trips, run once the partition is applied and a
    /// read round begun after the request (`afterRound`) has read it to its end.
    struct Awaiting {
        /// `ClusterLogReader.roundsStarted` when the request arrived.
        var afterRound: Int
        /// When it arrived (this node's clock), for the timeout.
        var since: Int64
        /// Answered `unavailable` if the wait times out.
        var reply: Reply
        /// The request's work, run once the partition has caught up with it.
        var then: () -> Void
    }

    var phase = Phase.idle
    /// Bumped whenever the partition starts or stops being applied: entries the reader read
    /// in an older epoch are not applied as trip commands.
    var epoch = 0
    /// The last entry applied as a trip command (what a snapshot of it taken now covers).
    var tripApplied = StreamID.zero
    /// The position of the latest snapshot of it this node knows (loaded or written): the
    /// next snapshot this node writes replaces it, and the log is trimmed below it (`LogTrim`).
    var snapshotPosition = StreamID.zero
    /// Every trip entry of this partition stamped below this is applied (`.min`: none yet).
    var watermark = Int64.min
    /// When a client of this node last used one of its trips.
    var lastUsed = Int64.min
    /// This node holds its lease (`PartitionLeases`).
    var owned = false
    /// Requests about its trips waiting for it to be applied up to their arrival.
    var waiting: [Awaiting] = []
    /// The latest read round (`ClusterReadBatch.round`) that read this partition to its end
    /// in the current epoch: everything appended before that round began is applied.
    var drainedRound = 0
    /// The read round under way when the partition started being applied (its snapshot
    /// installed): until a later round drains it, what it shows is the snapshot's past.
    var installedRound = 0
    /// How many times this node has started applying the partition (installed its snapshot):
    /// `trackhub_cluster_partition_loads_total`; one that keeps rising means churning leases.
    var loads = 0

    /// Applied and read to the end at least once since it was installed, so it shows the
    /// present rather than its snapshot's past (a request about a trip it knows need not wait).
    var isPresent: Bool { phase == .applied && drainedRound > installedRound }

    /// Whether a request that arrived when `roundsStarted` was `round` may be answered: every
    /// entry appended before it is applied.
    func hasApplied(arrivedAtRound round: Int) -> Bool { phase == .applied && drainedRound > round }

    func isCaughtUp(now: Int64) -> Bool {
        phase == .applied && watermark != .min && now - watermark <= ClusterState.caughtUpWithinMs
    }
}
