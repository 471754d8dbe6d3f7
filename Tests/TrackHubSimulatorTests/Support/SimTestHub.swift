import Foundation
import TrackHubServer
import TrackHubStore

/// A real hub on an ephemeral loopback port, on the poll loop (only one lws-owned libev loop
/// may exist per process, and tests run in parallel in one process).
final class SimTestHub: @unchecked Sendable {
    let hub: Hub
    var url: String { "ws://127.0.0.1:\(hub.port)" }

    init() throws {
        var config = HubConfig()
        config.listenHost = "127.0.0.1"
        config.listenPort = 0
        config.useLibev = false
        config.logLevel = "error"
        hub = Hub(config: config, store: MemoryTripStore())
        try hub.start()
    }

    func stop() { hub.stopNow() }
}

/// The package's root folder (for data/samples).
enum PackageRoot {
    static var path: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }
    static var samples: String { path + "/data/samples" }
}
