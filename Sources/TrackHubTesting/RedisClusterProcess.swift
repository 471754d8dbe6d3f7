import Foundation
import TrackHubCLI
import TrackHubRedis

/// A Redis Cluster of three masters (no replicas) on loopback: three `redis-server
/// --cluster-enabled yes`, joined by `redis-cli --cluster create`, each in a temporary
/// directory removed when this is released. `start` gives nil (and a line on stdout) where
/// redis-server or redis-cli is not installed.
public final class RedisClusterProcess {
    /// The masters' addresses (each also listens on its port + 10 000 for the cluster bus).
    public let masters: [RedisAddress]
    private let directory: String
    private var processes: [RedisAddress: ChildProcess] = [:]

    /// Starts `count` masters on free loopback ports (each with its bus port free too) and waits
    /// until every one reports `cluster_state:ok` and knows them all; throws `TestFailure` past
    /// 10 s a wait. Nil (and a line on stdout) when redis-server or redis-cli is not installed.
    public static func start(masters count: Int = 3) throws -> RedisClusterProcess? {
        for binary in ["/usr/bin/redis-server", "/usr/bin/redis-cli"] where !FileManager.default.isExecutableFile(atPath: binary) {
            print("\(binary) not installed: skipping (scripts/install-deps.sh --test installs it)")
            return nil
        }
        var ports: [Int] = []
        while ports.count < count {
            let port = try Loopback.freePortWithBus()
            if !ports.contains(port) { ports.append(port) }
        }
        let cluster = RedisClusterProcess(ports: ports)
        try cluster.create()
        return cluster
    }

    private init(ports: [Int]) {
        masters = ports.map { RedisAddress(host: "127.0.0.1", port: $0) }
        directory = NSTemporaryDirectory() + "trackhub-redis-cluster-\(UUID().uuidString)"
        for port in ports {
            try? FileManager.default.createDirectory(atPath: "\(directory)/\(port)", withIntermediateDirectories: true)
        }
    }

    private func create() throws {
        for master in masters { try startNode(master) }
        let create = try ChildProcess.spawn(
            "/usr/bin/redis-cli",
            ["--cluster", "create"] + masters.map { "\($0.host):\($0.port)" } + ["--cluster-replicas", "0", "--cluster-yes"],
            quietOutput: true, quietErrors: true)
        let status = create.wait()
        guard status == 0 else { throw TestFailure(description: "redis-cli --cluster create exited with \(status)") }
        try waitUntil("every master says cluster_state:ok and knows all \(masters.count) masters") {
            masters.allSatisfy { master in
                guard let c = try? RedisConnection(master, timeoutMs: 500),
                    let info = try? c.command([Array(redis: "CLUSTER"), Array(redis: "INFO")]).text,
                    let slots = try? c.command([Array(redis: "CLUSTER"), Array(redis: "SLOTS")]).elements
                else { return false }
                return info.contains("cluster_state:ok") && Set(slots.compactMap { $0.elements?[2].elements?[1].int }).count == masters.count
            }
        }
    }

    private func startNode(_ master: RedisAddress) throws {
        let dir = "\(directory)/\(master.port)"
        processes[master] = try ChildProcess.spawn(
            "/usr/bin/redis-server",
            ["--port", String(master.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir,
             "--cluster-enabled", "yes", "--cluster-config-file", "\(dir)/nodes.conf", "--cluster-node-timeout", "2000"],
            quietOutput: true, quietErrors: true)
        try waitUntil("redis-server \(master) answers PING") {
            (try? RedisConnection(master, timeoutMs: 500).command([Array(redis: "PING")])) == .status("PONG")
        }
        guard let child = processes[master], try RedisProcess.answers(master, as: child) else {
            throw TestFailure(description: "another process answers on \(master) (its port was taken)")
        }
    }

    /// The cluster's node id of `master` (`CLUSTER MYID`).
    public func nodeID(_ master: RedisAddress) throws -> String {
        guard let id = try RedisConnection(master, timeoutMs: 2000).command([Array(redis: "CLUSTER"), Array(redis: "MYID")]).text else {
            throw TestFailure(description: "CLUSTER MYID gave no id")
        }
        return id
    }

    /// Moves `slot` and its keys from the master serving it to `target`, the way a reshard
    /// does (`SETSLOT IMPORTING/MIGRATING`, `MIGRATE`, `SETSLOT NODE` on every master).
    public func moveSlot(_ slot: Int, to target: RedisAddress) throws {
        let client = try RedisClient(seeds: masters, timeoutMs: 2000)
        guard let source = client.slotMap?.master(ofSlot: slot), source != target else { return }
        let sourceID = try nodeID(source), targetID = try nodeID(target)
        let onSource = try RedisConnection(source, timeoutMs: 2000), onTarget = try RedisConnection(target, timeoutMs: 2000)
        func run(_ c: RedisConnection, _ words: [String]) throws {
            let reply = try c.command(words.map { Array(redis: $0) })
            if case .error(let why) = reply { throw TestFailure(description: "\(words.joined(separator: " ")): \(why)") }
        }
        try run(onTarget, ["CLUSTER", "SETSLOT", String(slot), "IMPORTING", sourceID])
        try run(onSource, ["CLUSTER", "SETSLOT", String(slot), "MIGRATING", targetID])
        while true {
            let keys = try onSource.command(["CLUSTER", "GETKEYSINSLOT", String(slot), "100"].map { Array(redis: $0) }).elements ?? []
            if keys.isEmpty { break }
            var migrate = ["MIGRATE", target.host, String(target.port), "", "0", "5000", "KEYS"].map { Array(redis: $0) }
            migrate += keys.compactMap(\.bytes)
            let reply = try onSource.command(migrate)
            if case .error(let why) = reply { throw TestFailure(description: "MIGRATE: \(why)") }
        }
        for master in masters {
            try run(try RedisConnection(master, timeoutMs: 2000), ["CLUSTER", "SETSLOT", String(slot), "NODE", targetID])
        }
    }

    /// Stops every node at once (SIGKILL: these tests do not need the data kept).
    public func stop() {
        for (_, p) in processes {
            p.signal(SIGKILL)
            p.wait()
        }
        processes = [:]
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
