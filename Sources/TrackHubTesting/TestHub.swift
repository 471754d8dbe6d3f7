import Foundation
import TrackHubLWS
import TrackHubRouting
import TrackHubServer
import TrackHubStore

/// A real hub on an ephemeral loopback port, on the poll loop so that many tests can run
/// one each in this process (only one lws-owned libev loop may exist per process), with a
/// memory store and the package's web client as its web root.
public final class TestHub: @unchecked Sendable {
    /// The hub, started and listening by the end of `init`; `stop` stops it.
    public let hub: Hub
    /// The hub's store, in memory: tests read what was made durable, or make it fail.
    public let store: MemoryTripStore
    /// The port the hub bound.
    public var port: Int { hub.port }
    /// `ws://127.0.0.1:PORT`, the URL clients such as the simulator take.
    public var webSocketURL: String { "ws://127.0.0.1:\(hub.port)" }

    /// Starts a hub; `configure` changes the test defaults (loopback, port 0, poll loop);
    /// `router`: route searches on it (PROTOCOL 16).
    public init(router: RouterQueue? = nil, configure: (inout HubConfig) -> Void = { _ in }) throws {
        var config = HubConfig()
        config.listenHost = "127.0.0.1"
        config.listenPort = 0
        config.useLibev = false
        config.webRoot = PackageRoot.webClient
        configure(&config)
        store = MemoryTripStore()
        let log: HubBackends.CommandLogBackend = config.clusterSeeds.map { .redis(seeds: $0) } ?? .local
        let host = LWSServerHost(options: ServerHostOptions(config: config))
        hub = Hub(config: config, backends: HubBackends(host: host, store: store, log: log, router: router))
        try hub.start()
    }

    /// Stops the hub at once (connections dropped, no drain).
    public func stop() { hub.stopNow() }

    /// An HTTP request to the hub; returns status and body.
    public func http(_ method: String, _ path: String, json: Any? = nil, body: Data? = nil, headers: [String: String] = [:]) throws -> (status: Int, body: Data) {
        try HTTPTestClient.request(port: port, method: method, path: path, json: json, body: body, headers: headers)
    }

    /// Same, decoding the body as a JSON object (empty when it is not one).
    public func httpJSON(_ method: String, _ path: String, json: Any? = nil, headers: [String: String] = [:]) throws -> (status: Int, json: [String: Any]) {
        let (status, data) = try http(method, path, json: json, headers: headers)
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return (status, object)
    }
}
