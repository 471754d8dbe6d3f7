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
        let redis = RedisProcess(port: try Loopback.freePort())
        try redis.restart()
        return redis
    }

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
