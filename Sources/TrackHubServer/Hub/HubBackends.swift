import TrackHubLWS
import TrackHubRedis
import TrackHubRouting
import TrackHubStore

/// The parts of a hub that reach outside the process, chosen where the hub is built
/// (`trackhub serve`, or a test) and handed to `Hub.init`: the sockets, the store, where
/// commands become durable, the router and the webhooks' HTTP client. Each is behind a
/// protocol or a value a test can replace (`FakeServerHost`, `MemoryTripStore`, a fake
/// transport); the hub never picks one itself.
public struct HubBackends {
    /// Where commands become durable (PROTOCOL 7 and 15).
    public enum CommandLogBackend: Sendable {
        /// A hub alone: the trip store is the log.
        case local
        /// A cluster: Redis streams (`--cluster`), at these seed addresses.
        case redis(seeds: [RedisAddress])
    }

    /// The sockets: libwebsockets (`LWSServerHost`), or a test's fake.
    public var host: any ServerHost
    /// The durable store (SQLite in `--data`, or memory).
    public var store: TripStore
    /// Where commands become durable.
    public var log: CommandLogBackend
    /// `--router` (PROTOCOL 16): where route searches run; nil: the hub finds no routes.
    public var router: RouterQueue?
    /// The HTTP client webhooks are posted with, made for at most this many connections
    /// (the dispatcher knows how many it needs); nil: libcurl's (`CurlMulti`).
    public var webhookTransport: (@Sendable (_ connections: Int) throws -> any WebhookTransport)?

    /// The backends as given.
    public init(
        host: any ServerHost, store: TripStore, log: CommandLogBackend = .local, router: RouterQueue? = nil,
        webhookTransport: (@Sendable (_ connections: Int) throws -> any WebhookTransport)? = nil
    ) {
        self.host = host
        self.store = store
        self.log = log
        self.router = router
        self.webhookTransport = webhookTransport
    }
}

extension ServerHostOptions {
    /// The listeners and limits of `config` (`--listen`, `--tls-*`, `--osmand-listen`, the
    /// message, body and connection limits), for an `LWSServerHost`.
    public init(config: HubConfig) {
        self.init(
            host: config.listenHost, port: config.listenPort, useLibev: config.useLibev,
            maxMessageBytes: config.maxMessageBytes, maxBodyBytes: config.maxBodyBytes,
            bodyTimeoutMicros: config.bodyTimeoutMs * 1000, maxConnectionsPerAddress: config.maxConnsPerIP,
            tlsCertPath: config.tlsCertPath, tlsKeyPath: config.tlsKeyPath, logs: .hubLog,
            secondHost: config.osmandListenHost, secondPort: config.osmandListenPort)
    }
}
