import TrackHubProtocol
import TrackHubRedis
import TrackHubRouting

/// Everything `trackhub serve` can be told (PROTOCOL section 9), with its defaults.
public struct HubConfig: Sendable {
    /// The numeric address to bind (a `--listen` name is resolved to one at start).
    public var listenHost = "127.0.0.1"
    /// The host part of `--listen` as written (`localhost`), for the Host check; nil: `listenHost`.
    public var listenName: String?
    public var listenPort = 8080
    /// `--osmand-listen`: a second address serving only the OsmAnd protocol at `/` (PROTOCOL
    /// 11; Traccar Client's default port is 5055). Numeric host; nil: none.
    public var osmandListenHost: String?
    public var osmandListenPort = 0
    public var dataDirectory = "./trackhub-data"
    /// `--jwt-secret` (or `--jwt-secret-file`): tokens signed with any of these verify; the
    /// first signs (`trackhub token`), a second is the one being rotated out. Empty: open mode.
    public var jwtSecrets: [String] = []
    public var tickHz = 10
    public var fleetHz = 1.0
    public var webRoot: String?
    public var leafletRoot = "/usr/share/javascript/leaflet"
    public var tlsCertPath: String?
    public var tlsKeyPath: String?
    public var allowOrigins: [String] = []
    public var endAfterMs: Int64 = 30 * 60 * 1000
    public var shutdownTimeoutMs: Int64 = 10_000
    public var maxItems = 2000
    public var maxMessageBytes = 64 * 1024
    public var maxBodyBytes = 4 * 1024 * 1024
    public var maxRoutePoints = 10_000
    public var maxWaypoints = 1000
    public var maxSubscriptions = 256
    public var maxFixRate = 1000
    /// Most TCP connections from one address, HTTP and WebSocket alike (0: no limit).
    public var maxConnsPerIP = 0
    /// Refusals of one address for a bad credential (a 401; a 404 for an unknown device on
    /// the phone endpoints) per second before its credentialed requests are answered 429
    /// unchecked until the rate falls (`--max-refusal-rate`; 0: no limit, the default).
    public var maxRefusalRate = 0
    /// How long an HTTP body may take to arrive after its headers, in ms (`--body-timeout`;
    /// past it: 408 and close; 0: no limit).
    public var bodyTimeoutMs: Int64 = 10_000
    /// Most trips not `ended` at once (`--max-trips`; past it `POST /v1/trips` is `too_large`).
    public var maxTrips = 100_000
    /// Host names an open hub answers besides its listen address, `localhost` and loopback
    /// addresses (`--allow-host`; PROTOCOL 1: against DNS rebinding).
    public var allowHosts: [String] = []
    public var authTimeoutMs: Int64 = 10_000
    /// Unsent bytes a connection may hold for `maxUnsentDurationMs` (`--max-unsent`); 4 × this
    /// at any moment closes it at once (PROTOCOL 7).
    public var maxUnsentBytes = 1024 * 1024
    /// How long a connection may stay over `maxUnsentBytes` before it is closed (PROTOCOL 7).
    public var maxUnsentDurationMs: Int64 = 2000
    public var maxClockSkewMs: Int64 = 5 * 60 * 1000
    /// WebSocket ping interval (PROTOCOL 1: 30 s; tests shorten it).
    public var pingIntervalMs: Int64 = 30_000
    public var retainDays = 30
    public var syncFull = false
    public var logLevel = "info"
    /// `--log-format`: text or json (PROTOCOL 14).
    public var logFormat = "text"
    /// libev (epoll) in production; tests run several hubs in one process on the poll loop.
    public var useLibev = true
    /// Cluster mode (docs/cluster.md): the Redis holding the shared log (one server, or the
    /// seeds of a Redis Cluster, any of which answers); nil for one hub alone.
    public var clusterSeeds: [RedisAddress]?
    /// Streams the log is split into; every node of a cluster must use the same number.
    public var clusterPartitions = 16
    /// How often a node writes a state snapshot to Redis (one node per interval).
    public var clusterSnapshotIntervalMs: Int64 = 30_000
    /// `--cluster-lease` (PROTOCOL 15): how long a partition's owner holds it without renewing;
    /// a dead hub's partitions are taken over within it.
    public var clusterLeaseMs: Int64 = 5000
    /// `--webhook`, `--webhook-secret`, `--webhook-events` (PROTOCOL 12): none by default.
    public var webhooks = WebhookSettings()
    /// `--router routino:DIR` (PROTOCOL 16): where searches run; nil: the hub finds no routes.
    public var router: RouterQueue?

    public init() {}

    /// The signing secret, nil in open mode; setting it makes it the only one.
    public var jwtSecret: String? {
        get { jwtSecrets.first }
        set { jwtSecrets = newValue.map { [$0] } ?? [] }
    }

    /// The limits the protocol decoder enforces.
    public var protocolLimits: ProtocolLimits {
        var limits = ProtocolLimits()
        limits.maxMessageBytes = maxMessageBytes
        limits.maxRoutePoints = maxRoutePoints
        limits.maxWaypoints = maxWaypoints
        limits.maxClockSkewMs = maxClockSkewMs
        return limits
    }
}
