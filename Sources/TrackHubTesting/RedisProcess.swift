import Foundation
import TrackHubCLI
import TrackHubRedis

/// A `redis-server` on a free loopback port, in a temporary directory removed when this is
/// released. Tests that need Redis skip themselves where it is not installed (`start` gives nil).
public final class RedisProcess {
    /// Where it listens.
    public let address: RedisAddress
    private let directory: String
    private var process: ChildProcess?

    /// Starts one and waits until it answers PING; nil (and a line on stdout) when
    /// `/usr/bin/redis-server` is not installed.
    public static func start() throws -> RedisProcess? {
        let binary = "/usr/bin/redis-server"
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            print("redis-server not installed: skipping (scripts/install-deps.sh --test installs it)")
            return nil
        }
        // A port free a moment ago may be taken by another test's Redis before ours binds
        // it: ours then exits, and the PING would be answered by the other one.
        for attempt in 1...5 {
            let redis = RedisProcess(port: try Loopback.freePort())
            do {
                try redis.restart()
                return redis
            } catch is PortTaken where attempt < 5 {
                continue
            }
        }
        throw TestFailure(description: "no port for redis-server")
    }

    /// Our redis-server did not get the port: another process answers there.
    struct PortTaken: Error {}

    private init(port: Int) {
        address = RedisAddress(host: "127.0.0.1", port: port)
        directory = NSTemporaryDirectory() + "trackhub-redis-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Starts it (again, after `stop`) on the same port and directory; waits until it answers PING.
    public func restart() throws {
        process = try ChildProcess.spawn(
            "/usr/bin/redis-server",
            ["--port", String(address.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--dir", directory],
            quietOutput: true, quietErrors: true)
        try waitUntil("redis-server answers PING") {
            (try? RedisConnection(address, timeoutMs: 500).command([Array(redis: "PING")])) == .status("PONG")
        }
        guard let child = process, try Self.answers(address, as: child) else {
            stop()
            throw PortTaken()
        }
    }

    /// Whether the Redis answering at `address` is `child` (its `INFO server` process_id).
    static func answers(_ address: RedisAddress, as child: ChildProcess) throws -> Bool {
        let info = try RedisConnection(address, timeoutMs: 2000).command([Array(redis: "INFO"), Array(redis: "server")]).text ?? ""
        return info.contains("process_id:\(child.pid)\r\n")
    }

    /// Stops Redis at once (SIGKILL: these tests do not need its data kept).
    public func stop() {
        guard let p = process else { return }
        p.signal(SIGKILL)
        p.wait()
        process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
