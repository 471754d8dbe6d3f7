import Foundation
import TrackHubLWS
import TrackHubProtocol
import TrackHubServer
import TrackHubStore

/// A hub with no socket and no real time: a `FakeServerHost` for its connections, a
/// `ManualClock` for its rules and a memory store. Its timer fires only on `tick()`, so a
/// test decides exactly when keep-alive, slow-reader, token and tick checks run.
public final class SocketlessHub: @unchecked Sendable {
    /// The hub, started by `init`; its service thread is the one `host.run` serves on.
    public let hub: Hub
    /// The hub's connections and HTTP requests: tests play the peers through it.
    public let host = FakeServerHost()
    /// The hub's time, wall and monotonic; it moves only when the test advances it.
    public let clock = ManualClock()
    /// The hub's store, in memory: tests read what was made durable, or make it fail.
    public let store = MemoryTripStore()

    /// Starts a hub; `configure` changes the defaults.
    public init(configure: (inout HubConfig) -> Void = { _ in }) throws {
        var config = HubConfig()
        config.webRoot = PackageRoot.webClient
        configure(&config)
        hub = Hub(config: config, backends: HubBackends(host: host, store: store), clock: clock.hubClock)
        try hub.start()
    }

    /// Stops the hub at once.
    public func stop() { hub.stopNow() }

    /// Fires the timer `subTicks` times (each one sub-tick: `tickHz × phases` per second).
    public func tick(subTicks: Int = 1) {
        for _ in 0..<subTicks { host.fireTimerAndWait() }
    }

    /// Lets `ms` pass as the service thread would see it: the clock moves in steps of
    /// `stepMs` (at most), the timer firing once after each (the hub's housekeeping, pings
    /// and slow-reader checks run on its own cadence within those ticks).
    public func run(forMs ms: Int64, stepMs: Int64 = 100) {
        var left = ms
        while left > 0 {
            let step = min(stepMs, left)
            clock.advance(ms: step)
            host.fireTimerAndWait()  // handled at this time, not at a later one
            left -= step
        }
    }

    /// A JSON request; the status and the body as a JSON object (empty when not one).
    public func http(_ method: HTTPMethod, _ path: String, json: Any? = nil) throws -> (status: Int, json: [String: Any]) {
        let body = try json.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) } ?? ""
        guard let response = host.requestAndWait(method, path, body: body) else {
            throw TestFailure(description: "\(method) \(path) was not answered")
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response.status, object)
    }

    /// A connection's received messages decoded as JSON objects.
    public func messages(_ id: ConnectionID) -> [[String: Any]] {
        (host.connection(id)?.received ?? []).compactMap { ServerMessage($0).foundationObject() }
    }

    /// Waits until a connection has received a message for which `matches` holds; returns it.
    @discardableResult
    public func waitForMessage(_ id: ConnectionID, _ what: String, timeout: Double = 10, matching matches: ([String: Any]) -> Bool) throws -> [String: Any] {
        var found: [String: Any]?
        try waitUntil(what, timeout: timeout) {
            found = messages(id).first(where: matches)
            return found != nil
        }
        return found ?? [:]
    }
}
