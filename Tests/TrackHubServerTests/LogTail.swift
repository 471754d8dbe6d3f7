import TrackHubRedis
import TrackHubSync
@testable import TrackHubServer

/// A `ClusterLogReader` of every partition from the start, for the Redis tests: it keeps
/// the commands it read and the highest watermark, and hands each batch straight back.
final class LogTail: Sendable {
    private final class Collected: Sendable {
        let commands = HubMutex<[ClusterCommand]>([])
        let watermark = HubMutex<Int64>(.min)
        let reader = HubMutex<ClusterLogReader?>(nil)
    }
    private let collected = Collected()

    init(seeds: [RedisAddress], partitions: Int) {
        let collected = collected
        let reader = ClusterLogReader(
            seeds: seeds, partitions: partitions, after: Array(repeating: .zero, count: partitions),
            deliver: { batch in
                collected.commands.withLock { $0 += batch.entries.compactMap { ClusterCommand.decode($0.payload) } }
                collected.watermark.withLock { $0 = max($0, batch.watermark) }
                collected.reader.withLock { $0 }?.consumed()
            },
            connectionChanged: { _, _ in })
        collected.reader.withLock { $0 = reader }
        reader.start()
    }

    var commands: [ClusterCommand] { collected.commands.withLock { $0 } }
    var watermark: Int64 { collected.watermark.withLock { $0 } }

    func stop() {
        let reader = collected.reader.withLock { r in
            defer { r = nil }
            return r
        }
        reader?.stop()
    }
}
