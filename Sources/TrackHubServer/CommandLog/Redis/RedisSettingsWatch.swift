import Foundation
import Synchronization
import TrackHubRedis

/// Reads the log's Redis persistence and replication settings on its own thread and
/// connection, at start and every `periodMs` (PROTOCOL 15: "at least every 10 s"; a
/// reconnection is the next reading), and reports what an ack survives (`AckSurvival`)
/// every time; the log says it once per change. In a Redis Cluster every master is read and
/// the weakest counts. A master that refuses `CONFIG` (a managed Redis) is read as unknown.
final class RedisSettingsWatch: Sendable {
    /// How often the settings are read again.
    static let periodMs = 5000

    private let seeds: [RedisAddress]
    private let replicasRequired: Int
    private let report: @Sendable (AckSurvival) -> Void
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)

    /// `report` runs on the watch's thread after each reading.
    init(seeds: [RedisAddress], replicasRequired: Int, report: @escaping @Sendable (AckSurvival) -> Void) {
        self.seeds = seeds
        self.replicasRequired = replicasRequired
        self.report = report
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "trackhub-redis-settings"
        thread.start()
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        wake.signal()
        stopped.wait()
    }

    private func run() {
        var redis = RedisReconnect(seeds: seeds, timeoutMs: 2000)
        while !stopping.load(ordering: .acquiring) {
            report(AckSurvival(masters: read(&redis), replicasRequired: replicasRequired))
            _ = wake.wait(timeout: .now() + .milliseconds(Self.periodMs))  // the reading's pace; `stop` cuts it short
        }
        stopped.signal()
    }

    /// Every master's settings; none when Redis cannot be reached (an ack then survives a hub
    /// crash only, as far as this hub can tell).
    private func read(_ redis: inout RedisReconnect) -> [AckSurvival.MasterSettings] {
        do throws(RedisError) {
            let client = try redis.get()
            var settings: [AckSurvival.MasterSettings] = []
            for master in client.masters {
                let replies = try client.pipeline(
                    [["CONFIG", "GET", "appendonly"], ["CONFIG", "GET", "appendfsync"], ["INFO", "replication"]].map { $0.map { Array(redis: $0) } },
                    at: master)
                settings.append(Self.parse(replies))
            }
            return settings
        } catch {
            redis.noteFailure(error)
            return []
        }
    }

    /// The three replies of one master: `CONFIG GET appendonly`, `CONFIG GET appendfsync`
    /// (`[name, value]`, or an error reply when refused) and `INFO replication`.
    static func parse(_ replies: [RedisValue]) -> AckSurvival.MasterSettings {
        func configValue(_ reply: RedisValue?) -> String? {
            guard let pair = reply?.elements, pair.count == 2 else { return nil }
            return pair[1].text?.lowercased()
        }
        var settings = AckSurvival.MasterSettings()
        settings.appendOnly = configValue(replies.first).map { $0 == "yes" }
        settings.appendFsync = configValue(replies.count > 1 ? replies[1] : nil)
        if replies.count > 2, let info = replies[2].text {
            for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("connected_slaves:") {
                settings.connectedReplicas = Int(line.dropFirst("connected_slaves:".count).trimmingCharacters(in: .whitespaces))
            }
        }
        return settings
    }
}
