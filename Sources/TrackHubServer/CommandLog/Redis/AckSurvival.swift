/// What an acked command survives in cluster mode (PROTOCOL 15 "What an ack survives"), from
/// the log's Redis settings and `--cluster-replicas`. Pure: `RedisSettingsWatch` reads the
/// settings, this decides, the log line and `/metrics` say it the same way.
struct AckSurvival: Equatable, Sendable {
    /// The failures the table names, in its order.
    enum Failure: String, CaseIterable, Sendable {
        case hubCrash = "hub_crash"
        case redisCrash = "redis_crash"
        case powerLoss = "power_loss"
        case redisMachineLoss = "redis_machine_loss"
    }

    /// One Redis master's settings as read; nil where it could not be read (a managed Redis
    /// that refuses `CONFIG`), which counts as the weakest.
    struct MasterSettings: Equatable, Sendable {
        /// `appendonly`.
        var appendOnly: Bool?
        /// `appendfsync`: `always`, `everysec` or `no`.
        var appendFsync: String?
        /// `connected_slaves` of `INFO replication`.
        var connectedReplicas: Int?
    }

    /// The failures an ack survives.
    let survives: Set<Failure>
    /// The settings it was decided from (the weakest master's words go in the log line).
    let masters: [MasterSettings]
    /// `--cluster-replicas`.
    let replicasRequired: Int

    /// Decides from every master's settings (the weakest counts) and `--cluster-replicas`.
    init(masters: [MasterSettings], replicasRequired: Int) {
        self.masters = masters
        self.replicasRequired = replicasRequired
        var survives = Set(Failure.allCases)
        if masters.isEmpty { survives = [.hubCrash] }
        for master in masters { survives.formIntersection(Self.survives(master, replicasRequired: replicasRequired)) }
        self.survives = survives
    }

    /// One master's row of the table. An entry reaches the append-only file before Redis
    /// answers only with `appendfsync always` (`everysec` may answer up to 2 s before the
    /// write); `--cluster-replicas N` counts only while N replicas are connected.
    static func survives(_ master: MasterSettings, replicasRequired: Int) -> Set<Failure> {
        let fsyncsEachWrite = master.appendOnly == true && master.appendFsync == "always"
        let replicated = replicasRequired >= 1 && (master.connectedReplicas ?? 0) >= replicasRequired
        var survives: Set<Failure> = [.hubCrash]
        if fsyncsEachWrite { survives.formUnion([.redisCrash, .powerLoss]) }
        if replicated { survives.formUnion([.powerLoss, .redisMachineLoss]) }
        return survives
    }

    /// The one line the hub logs at start and whenever it changes, e.g. "cluster: an ack
    /// survives hub_crash, power_loss; not redis_crash, redis_machine_loss (appendonly no,
    /// appendfsync everysec, 1 of 1 replicas connected on the weakest master)".
    var logLine: String {
        let yes = Failure.allCases.filter { survives.contains($0) }.map(\.rawValue)
        let no = Failure.allCases.filter { !survives.contains($0) }.map(\.rawValue)
        var line = "cluster: an ack survives \(yes.joined(separator: ", "))"
        if !no.isEmpty { line += "; not \(no.joined(separator: ", "))" }
        return line + " (\(settingsSummary))"
    }

    /// The weakest master's settings in words.
    private var settingsSummary: String {
        guard let weakest = masters.min(by: { Self.survives($0, replicasRequired: replicasRequired).count < Self.survives($1, replicasRequired: replicasRequired).count })
        else { return "no Redis master answered" }
        let aof = weakest.appendOnly.map { $0 ? "appendonly yes" : "appendonly no" } ?? "appendonly unknown (CONFIG refused)"
        let fsync = weakest.appendFsync.map { "appendfsync \($0)" } ?? "appendfsync unknown"
        let replicas = weakest.connectedReplicas.map(String.init) ?? "unknown"
        return "\(aof), \(fsync), \(replicas) replicas connected, --cluster-replicas \(replicasRequired), on the weakest of \(masters.count) masters"
    }

    /// Why `--sync full` refuses commands under these settings, or nil when an ack survives
    /// a power cut (PROTOCOL 15: it names what would fix it).
    var syncFullRefusal: String? {
        guard !survives.contains(.powerLoss) else { return nil }
        return "--sync full: an ack would not survive a power loss with these Redis settings; set appendonly yes with appendfsync always on every master, or run replicas and --cluster-replicas 1 or more"
    }

    /// `trackhub_cluster_ack_survives{event}`: 1 or 0 per failure.
    var metrics: [(event: String, value: Double)] {
        Failure.allCases.map { ($0.rawValue, survives.contains($0) ? 1 : 0) }
    }
}
