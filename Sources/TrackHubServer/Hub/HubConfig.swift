import TrackHubProtocol
import TrackHubRedis
import TrackHubRouting

/// Everything `trackhub serve` can be told (PROTOCOL section 9), with its defaults.
public struct HubConfig: Sendable {
    /// The host of `--listen HOST:PORT` as the numeric address to bind (a name is resolved to
    /// one at start); default `127.0.0.1`, loopback only.
    public var listenHost = "127.0.0.1"
    /// The host part of `--listen` as written (`localhost`), for the Host check; nil: `listenHost`.
    public var listenName: String?
    /// The port of `--listen`, serving WebSocket, HTTP API, metrics and web client alike;
    /// default 8080; 0 picks a free one (read it back from `Hub.port`).
    public var listenPort = 8080
    /// `--osmand-listen`: a second address serving only the OsmAnd protocol at `/` (PROTOCOL
    /// 11; Traccar Client's default port is 5055). Numeric host; nil: none, the default.
    public var osmandListenHost: String?
    /// The port of `--osmand-listen`; used only with `osmandListenHost`; 0 picks a free one.
    public var osmandListenPort = 0
    /// `--data DIR`: the SQLite store and its lock file, created 0750 if missing; one hub per
    /// directory. Default `./trackhub-data`; in cluster mode it holds the node's own copy.
    public var dataDirectory = "./trackhub-data"
    /// `--jwt-secret` (or `--jwt-secret-file`): tokens signed with any of these verify; the
    /// first signs (`trackhub token`), a second is the one being rotated out. Empty: open mode.
    public var jwtSecrets: [String] = []
    /// `--tick-hz`: frames per second sent for each moving trip, 1–60; default 10. A tick
    /// that takes near `1/tickHz` s means the service thread is saturated.
    public var tickHz = 10
    /// `--fleet-hz`: fleet cluster updates per second, 0.1–10; default 1.
    public var fleetHz = 1.0
    /// `--web-root DIR`: the web client's files; nil (the default): `./web-client`, else the
    /// `web-client/` found next to the binary.
    public var webRoot: String?
    /// Debian's `libjs-leaflet`, served as `/vendor/leaflet/`; no flag (tests and images keep
    /// the default).
    public var leafletRoot = "/usr/share/javascript/leaflet"
    /// `--tls-cert FILE`: with `tlsKeyPath`, the hub serves https:// and wss://; nil (the
    /// default): plain HTTP. The two are given together or not at all.
    public var tlsCertPath: String?
    /// `--tls-key FILE`: the private key of `tlsCertPath`; nil by default.
    public var tlsKeyPath: String?
    /// `--allow-origin`: browser origins allowed besides the one matching the request's Host
    /// (`*`: any); others get 403. Empty (the default): the hub's own origin only.
    public var allowOrigins: [String] = []
    /// `--end-after`: an `arrived` trip ends by itself this long after arriving, in ms;
    /// default 30 min.
    public var endAfterMs: Int64 = 30 * 60 * 1000
    /// `--shutdown-timeout`: the drain budget after SIGTERM or SIGINT to store and ack received
    /// fixes and close connections 1001, in ms; default 10 s.
    public var shutdownTimeoutMs: Int64 = 10_000
    /// `--max-items`: items (clusters and single riders) per fleet answer, the highest counts
    /// first, 1–100 000; past it `truncated: true`. Default 2 000.
    public var maxItems = 2000
    /// `--max-message`: bytes of one client WebSocket message, 256 B–64 MiB; past it close
    /// 1009. Default 64 KiB.
    public var maxMessageBytes = 64 * 1024
    /// `--max-body`: bytes of one HTTP request body, 1 KiB–1 GiB; past it 413 `too_large`.
    /// Default 4 MiB.
    public var maxBodyBytes = 4 * 1024 * 1024
    /// `--max-route-points`: points of one route, at least 2; past it `too_large` naming
    /// `route`. Default 10 000.
    public var maxRoutePoints = 10_000
    /// `--max-waypoints`: waypoints of one trip (0 forbids them); past it `too_large` naming
    /// `waypoints`. Default 1 000.
    public var maxWaypoints = 1000
    /// `--max-subscriptions`: subscriptions of one connection (a viewport does not count);
    /// past it `too_large`. Default 256.
    public var maxSubscriptions = 256
    /// `--max-fix-rate`: `fix` ops per second of one connection; past it `rate_limited`.
    /// Default 1 000.
    public var maxFixRate = 1000
    /// `--max-conns-per-ip`: most TCP connections from one address, HTTP and WebSocket alike;
    /// past it 429. 0 (the default): no limit, as behind a proxy every client shares its address.
    public var maxConnsPerIP = 0
    /// Refusals of one address for a bad credential (a 401; a 404 for an unknown device on
    /// the phone endpoints) per second before its credentialed requests are answered 429
    /// unchecked until the rate falls (`--max-refusal-rate`; 0: no limit, the default).
    public var maxRefusalRate = 0
    /// How long an HTTP body may take to arrive after its headers, in ms (`--body-timeout`;
    /// past it: 408 and close; 0: no limit). Default 10 s.
    public var bodyTimeoutMs: Int64 = 10_000
    /// Most trips not `ended` at once (`--max-trips`; past it `POST /v1/trips` is `too_large`).
    /// Default 100 000.
    public var maxTrips = 100_000
    /// Host names an open hub answers besides its listen address, `localhost` and loopback
    /// addresses (`--allow-host`, lowercased; PROTOCOL 1: against DNS rebinding). None by default.
    public var allowHosts: [String] = []
    /// `--auth-timeout`: how long a connection to a secured hub may go without a valid token
    /// before close 1008, in ms; default 10 s. Unused in open mode.
    public var authTimeoutMs: Int64 = 10_000
    /// Unsent bytes a connection may hold for `maxUnsentDurationMs` (`--max-unsent`, 1 KiB–1 GiB;
    /// default 1 MiB); 4 × this at any moment closes it at once with 1008 (PROTOCOL 7).
    public var maxUnsentBytes = 1024 * 1024
    /// How long a connection may stay over `maxUnsentBytes` before it is closed 1008, in ms
    /// (PROTOCOL 7); 2 s, no flag.
    public var maxUnsentDurationMs: Int64 = 2000
    /// `--max-clock-skew`: how far a fix's `ts` may be ahead of the hub's clock, in ms; past
    /// it `bad_request` naming `ts`. Default 5 min.
    public var maxClockSkewMs: Int64 = 5 * 60 * 1000
    /// `--ping-interval`: WebSocket ping interval in ms, at least 100; two unanswered pings drop
    /// a connection. Default 30 s (PROTOCOL 1); tests shorten it.
    public var pingIntervalMs: Int64 = 30_000
    /// `--retain-days`: days an ended trip stays readable before it is deleted (checked once a
    /// minute), 1–36 500; default 30.
    public var retainDays = 30
    /// `--sync full`: SQLite fsyncs every group commit, so acked fixes survive a power cut;
    /// false (`normal`, the default) survives a process crash only.
    public var syncFull = false
    /// `--log-level`: `error`, `warn`, `info` or `debug`; default `info` (one line per HTTP
    /// answer and per closed WebSocket).
    public var logLevel = "info"
    /// `--log-format`: `text` (the default) or `json`, one object a line (PROTOCOL 14).
    public var logFormat = "text"
    /// `--event-loop libev|poll`: libev (epoll, the default) in production; tests run several
    /// hubs in one process on the poll loop.
    public var useLibev = true
    /// `--cluster redis://HOST:PORT[,...]` (docs/cluster.md): the Redis holding the shared log
    /// (one server, or the seeds of a Redis Cluster, any of which answers); nil (the default)
    /// for one hub alone.
    public var clusterSeeds: [RedisAddress]?
    /// `--cluster-partitions`: streams the log is split into, 1–1024; default 16. Every node of
    /// a cluster must use the same number (a node with another exits 2).
    public var clusterPartitions = 16
    /// `--cluster-snapshot-interval`: how often a partition's owner writes its state snapshot
    /// to Redis, in ms, at least 1 s; default 30 s.
    public var clusterSnapshotIntervalMs: Int64 = 30_000
    /// `--cluster-lease` (PROTOCOL 15), in ms, 1–60 s; default 5 s: a dead hub's partitions are
    /// taken over within it, counted from its death (`LeasePacing`: keys living half of it,
    /// renewed every tenth).
    public var clusterLeaseMs: Int64 = 5000
    /// `--cluster-replicas` (PROTOCOL 15): replicas of the log's Redis that must confirm an
    /// entry (`WAIT`) before its command is acked or answered, 0–8; default 0.
    public var clusterReplicas = 0
    /// `--webhook`, `--webhook-secret`, `--webhook-events` (PROTOCOL 12): none by default.
    public var webhooks = WebhookSettings()
    /// `--stale-after` (PROTOCOL 18): the least silence, in ms, after which a `moving` or
    /// `off_route` trip is stale (it is more for a courier whose usual interval or asked
    /// cadence is longer, and 10 × this while `holding`); default 15 s.
    public var staleAfterMs: Int64 = 15_000
    /// `--cadence-watched` (PROTOCOL 18): the interval between fixes the hub asks of a
    /// courier while somebody watches its trip, in ms, at least 100 ms; default 2 s.
    public var cadenceWatchedMs: Int64 = 2000
    /// `--cadence-idle` (PROTOCOL 18): the interval between fixes the hub asks of a courier
    /// while nobody watches its trip, in ms; default 30 s. 0 turns cadence off: no `cadence`
    /// message and no OwnTracks configuration at all (else at least 100 ms).
    public var cadenceIdleMs: Int64 = 30_000
    /// `--router routino:DIR` (PROTOCOL 16), as given: where searches run (`trackhub serve`
    /// loads the database and hands the hub a `RouterQueue`); nil: the hub finds no routes.
    public var router: String?

    /// Every setting at its default: an open hub on 127.0.0.1:8080 with its data in
    /// `./trackhub-data`.
    public init() {}

    /// The signing secret, nil in open mode; setting it makes it the only one.
    public var jwtSecret: String? {
        get { jwtSecrets.first }
        set { jwtSecrets = newValue.map { [$0] } ?? [] }
    }

    /// True when the hub asks couriers for fixes only as often as it needs them (PROTOCOL 18:
    /// `--cadence-idle` is not 0).
    public var cadenceEnabled: Bool { cadenceIdleMs > 0 }

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
