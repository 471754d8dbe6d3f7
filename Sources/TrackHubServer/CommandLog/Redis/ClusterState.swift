import Foundation
import TrackHubCore
import TrackHubLWS

/// What cluster mode adds to the hub's state. Owned by the service thread like the rest.
final class ClusterState {
    /// Commands waiting for their own log entry to come back, past which new ones get `unavailable`.
    static let maxPending = 100_000
    /// How long a command whose append succeeded may wait to be applied before its client is
    /// told `unavailable` (the command may still be applied later; a resend is a duplicate).
    static let pendingTimeoutMs: Int64 = 10_000
    /// The node is caught up when its watermark is this close to its clock.
    static let caughtUpWithinMs: Int64 = 1000
    /// How long a request naming a trip or device this node does not know waits for the log
    /// to be applied up to its arrival (`RedisCommandLog.afterApplying`) before it is
    /// answered `unavailable`.
    static let awaitLogTimeoutMs: Int64 = 2000

    /// A command this node appended and answers once it applies it.
    struct Pending {
        var reply: Reply
        var appendedAt: Int64
        /// Set once there is an answer; run when every earlier command of the same
        /// connection has been answered (acks keep the order fixes arrived in).
        var answer: (() -> Void)?
        /// True once the entry is on as many replicas as `--cluster-replicas` asks (at once
        /// with 0): an answer that comes earlier (this node applied its entry) waits for it.
        var confirmed = true
    }

    /// A request waiting for the watermark to reach `upTo` (`RedisCommandLog.afterApplying`).
    struct AwaitingLog {
        var upTo: Int64
        var since: Int64
        var reply: Reply
        var then: () -> Void
    }

    let nodeID: String
    let partitions: Int
    let writer: ClusterLogWriter
    var reader: ClusterLogReader?
    /// Every log entry whose id's ms is below this has been read, and applied if it is a
    /// device or share command or a trip command of an applied partition whose own
    /// watermark is past it (`ClusterPartition.watermark`).
    var watermark: Int64 = .min
    /// The latest `TIME` of a read: the grid runs up to it (each trip up to its partition's watermark).
    var readTime: Int64 = .min
    /// Per partition, the last entry read whose device and share commands are applied (what
    /// the devices and links of a snapshot taken now cover).
    var applied: [StreamID]
    /// The positions of the meta snapshot this node loaded at start or last wrote: what its
    /// next meta snapshot replaces, so the floor below which no partition is trimmed (`LogTrim`).
    var metaPositions: [StreamID]
    /// Per partition, its stream's length as last read (`XLEN`; -1: not read yet), for
    /// `trackhub_cluster_log_entries` and the warning past `ClusterLog.warnEntriesPerPartition`.
    var logEntries: [Int64]
    /// When the lengths were last asked for (`RedisCommandLog.readLogLengthsIfDue`).
    var lengthsReadAt: Int64 = .min
    /// A read of the lengths is under way (one at a time).
    var lengthsInFlight = false
    /// Per partition: applied here or not, owned or not (PROTOCOL 15).
    var parts: [ClusterPartition]
    /// The lease keeper (nil until the threads start).
    var leases: PartitionLeases?
    /// True once the first lease round has been reported (what this node owns is known).
    var ownershipKnown = false
    /// Monotonic ms after which the ownership of the last lease report lapses unless a later
    /// report moves it (`RedisCommandLog.fenceLapsedLeases`); `.max`: nothing to fence.
    var leaseFence = Int64.max
    /// True once the node has been caught up on what it owns (`/healthz` 200 from then on
    /// while its log reader keeps up).
    var startedUp = false
    /// Requests whose partition has caught up, run once the store has what was applied before them.
    var readyAfterStore: [() -> Void] = []
    /// Which partitions' webhooks this node delivers (owned and applied), read by the dispatcher.
    let webhookScope: WebhookScope
    /// Fleet positions published by the partitions' owners (PROTOCOL 15).
    var fleet: ClusterFleet?
    /// The trips watched on each hub (PROTOCOL 18's cadence), exchanged through Redis.
    var watchers: ClusterWatchers?
    /// Reads the Redis settings that decide what an ack survives (PROTOCOL 15).
    var settingsWatch: RedisSettingsWatch?
    /// What an ack survives, from the last reading; nil before the first.
    var ackSurvival: AckSurvival?
    /// With `--cluster-replicas`: partitions whose reader holds back entries not yet confirmed
    /// by the replicas, since when and up to which id (`ReplicaConfirmation`).
    var held: [Int: (since: Int64, upTo: StreamID)] = [:]
    var readerUp = false
    var readerError: String?
    var nextRequest: Int64 = 1
    var pending: [Int64: Pending] = [:]
    /// Per WebSocket connection, its pending requests in the order they arrived.
    var pendingOrder: [ConnectionID: [Int64]] = [:]
    /// Trips with a grid tick scheduled (`TripEntry.nextTickAt`).
    var schedule: TickSchedule
    /// The last sub-tick of log time the grid has run (`.min`: none yet).
    var lastGridTick: Int64 = .min
    /// Arrived trips this node asked the log to end (so it asks once).
    var endsRequested: Set<String> = []
    /// Requests waiting for this node to apply the log up to their arrival, oldest first.
    var awaitingLog: [AwaitingLog] = []
    /// The cluster's devices as this node has applied the log (PROTOCOL 11).
    var devices = ClusterDevices()
    var lastSnapshotAt: Int64 = 0
    var snapshotInFlight = false

    /// The tick grid: a trip's frames are `periodMs` apart, starting at the first sub-tick
    /// (`subTickMs`) after its last command's log time.
    let periodMs: Int64
    let subTickMs: Int64

    init(nodeID: String, partitions: Int, writer: ClusterLogWriter, applied: [StreamID], tickHz: Int, phases: Int) {
        schedule = TickSchedule(tickHz: tickHz)
        self.nodeID = nodeID
        self.partitions = partitions
        self.writer = writer
        self.applied = applied
        metaPositions = applied
        logEntries = Array(repeating: -1, count: partitions)
        parts = Array(repeating: ClusterPartition(), count: partitions)
        webhookScope = WebhookScope(partitions: partitions)
        periodMs = max(1, Int64(1000 / max(1, tickHz)))
        subTickMs = max(1, periodMs / Int64(max(1, phases)))
    }

    /// The phase (of `schedule`) of the sub-tick at log time `t`.
    func phase(at t: Int64) -> Int {
        Int((t / subTickMs) % Int64(schedule.phases))
    }

    /// The first sub-tick strictly after `t`.
    func firstTick(after t: Int64) -> Int64 {
        (t / subTickMs + 1) * subTickMs
    }

    func isCaughtUp(now: Int64) -> Bool {
        watermark != .min && now - watermark <= Self.caughtUpWithinMs
    }

    /// The partition of a trip (or device, or link) id.
    func partition(of id: String) -> Int { ClusterLog.partition(of: id, partitions: partitions) }

    /// Caught up on every partition it owns (what `/healthz` waits for at start).
    func isCaughtUpOnOwned(now: Int64) -> Bool {
        ownershipKnown && isCaughtUp(now: now) && parts.allSatisfy { !$0.owned || $0.isCaughtUp(now: now) }
    }

    /// Redis answers the log reader (the writer uses the same Redis; its failures are answered
    /// per command).
    var isHealthy: Bool { readerUp }

    static func makeNodeID() -> String {
        var generator = SystemRandomNumberGenerator()
        let host = ProcessInfo.processInfo.hostName
        return "\(host)-\(getpid())-\(String(generator.next() % 1_000_000_000, radix: 36))"
    }
}
