import TrackHubCLI
import TrackHubCurl
import Foundation
import TrackHubLWS
import TrackHubRedis
import TrackHubRouting
import TrackHubServer
import TrackHubStore

/// `trackhub serve`: runs the hub until SIGTERM or SIGINT.
enum ServeCommand {
    static let help = """
    Usage: trackhub serve [flags]

    Runs the hub: WebSocket (/v1/ws), HTTP API (/v1/...), /healthz, /metrics and the web client,
    all on one port. Every flag also reads TRACKHUB_<FLAG> from the environment and a key of
    the --config file: flags win over the environment, which wins over the file.

      --config FILE             a YAML file of flag names and values (tick-hz: 20); start from
                                `trackhub config default`
      --listen HOST:PORT        address to listen on (default 127.0.0.1:8080; port 0 picks a free one):
                                an IPv4 address, [IPv6] in brackets, or a name resolved at start
                                (localhost); one that cannot be bound (in use, not this machine's,
                                a name that does not resolve): one line on stderr, exit 2
      --osmand-listen HOST:PORT a second address serving only the OsmAnd protocol at / (phones with
                                Traccar Client or OsmAnd; Traccar's default port is 5055), docs/devices.md;
                                one that cannot be bound: one line, exit 2
      --data DIR                data directory (default ./trackhub-data; created 0750 if missing;
                                one hub per directory: a second serve on it exits 2)
      --jwt-secret S            require HS256 tokens signed with S (default: open mode, development only);
                                S1,S2 accepts tokens signed with either and signs with S1 (rotation);
                                shorter than 32 bytes: a warning at start
      --jwt-secret-file FILE    read the secret (or S1,S2) from FILE; one trailing newline is ignored
      --tick-hz N               frames per second per moving trip, 1–60 (default 10)
      --fleet-hz N              fleet cluster updates per second, 0.1–10 (default 1)
      --web-root DIR            the web client's files (default: ./web-client)
      --tls-cert FILE --tls-key FILE
                                serve https:// and wss://
      --allow-origin O[,O]      browser origins allowed besides the hub's own ("*": any)
      --allow-host NAME[,NAME]  Host names an open hub answers besides its listen address,
                                localhost and loopback addresses (against DNS rebinding)
      --sync normal|full        store durability (default normal: survives a process crash)
      --retain-days N           days ended trips are kept (default 30)
      --end-after DURATION      an arrived trip ends by itself after this (default 30m)
      --stale-after DURATION    a moving trip with no fix for this long is stale: signal_lost (default
                                15s; longer for a courier that sends less often, 10 x this while
                                holding at a waypoint), docs/protocol.md
      --shutdown-timeout DURATION
                                how long SIGTERM waits to flush acks and close (default 10s)
      --max-items N             clusters per fleet answer, 1–100000 (default 2000)
      --log-level LEVEL         error, warn, info or debug (default info)
      --log-format text|json    one line per event on stderr, time-stamped; json: one object a line (default text)

    Webhooks (PROTOCOL 12, docs/webhooks.md):
      --webhook URL             POST every trip event to URL (http:// or https://), signed as
                                Standard Webhooks describes; repeatable (TRACKHUB_WEBHOOK: a
                                comma-separated list). At least once, in order per trip,
                                retried 1 s doubling to 5 min for 24 h, kept across restarts;
                                with --cluster one node delivers (a lease in Redis)
      --webhook-secret S        the signing secret (required with --webhook); whsec_<base64>: the
                                decoded bytes
      --webhook-events NAMES    event names to send, comma-separated (default: all): trip_created,
                                waypoint_reached, waypoint_resumed, arrived, off_route,
                                back_on_route, rerouted, ended, signal_lost, signal_back,
                                battery_low
      --webhook-retry-base DURATION
                                the first retry's delay, doubling from there (default 1s; tests
                                shorten it)

    Routes the hub finds (docs/routing.md):
      --router routino:DIR      find routes with the Routino database in DIR (make one with
                                `trackhub router build OSMFILE DIR`): trips from origin, waypoints
                                and destination alone, GET /v1/route, and a new route when a rider
                                leaves theirs (config.auto_reroute, on by default with a router)

    Cadence: fixes only as often as someone watches (PROTOCOL 18, docs/protocol.md):
      --cadence-watched DURATION
                                the interval between fixes asked of a courier while its trip has a
                                subscriber (default 2s; at least 100ms)
      --cadence-idle DURATION   the interval asked while nobody watches it (default 30s); 0 turns
                                cadence off: no cadence message, no OwnTracks configuration

    Cluster mode (docs/cluster.md):
      --cluster redis://HOST:PORT[,redis://HOST:PORT...]
                                be one of several hubs sharing a log in Redis: commands and fixes
                                are acked once Redis has them, every hub shows the same markers;
                                --data then holds this node's own copy, rebuilt at each start.
                                One Redis, or a Redis Cluster: give any of its masters (several,
                                comma-separated, so that one down at start is no matter)
      --cluster-partitions N    streams the log is split into, 1–1024 (default 16; the same on
                                every node)
      --cluster-snapshot-interval DURATION
                                how often a partition's owner writes its snapshot to Redis
                                (default 30s)
      --cluster-lease DURATION  a dead hub's partitions are taken over within it (default 5s):
                                its lease keys live half of it, renewed every tenth
      --cluster-replicas N      ack or answer a command only once N replicas of the log's Redis
                                confirmed its entry (WAIT), else 503 after 1 s (default 0); no
                                hub shows an entry before that; what an ack survives is logged
                                and in /metrics (docs/cluster.md)

    Limits (PROTOCOL section 1):
      --max-message BYTES       a client message (default 64KiB; past it: close 1009)
      --max-body BYTES          an HTTP body (default 4MiB; past it: 413)
      --max-route-points N      points of a route (default 10000)
      --max-waypoints N         waypoints of a trip (default 1000)
      --max-subscriptions N     subscriptions of one connection (default 256)
      --max-fix-rate N          fix ops per second per connection (default 1000)
      --max-conns-per-ip N      connections from one address, HTTP and WebSocket (default 0: no limit)
      --max-refusal-rate N      refusals of one address for a bad credential per second (a 401, a 404
                                for an unknown device); past it: 429 until the rate falls (default 0:
                                no limit; behind a proxy every client shares one address)
      --body-timeout DURATION   an HTTP body must arrive within this of its headers (default 10s;
                                past it: 408 and close)
      --max-trips N             trips not ended at once (default 100000; past it: too_large)
      --auth-timeout DURATION   wait for a valid token on a secured hub (default 10s)
      --max-unsent BYTES        unsent data of a connection for 2 s before close 1008 (default 1MiB;
                                4 x this at any moment closes it at once)
      --max-clock-skew DURATION how far a fix's ts may be ahead of the hub's clock (default 5m)
      --ping-interval DURATION  WebSocket ping interval; two unanswered pings drop a connection (default 30s)

    Prints "listening on http://HOST:PORT" once it accepts connections; under systemd
    (NOTIFY_SOCKET set) also sends READY=1 then, and STOPPING=1 when a drain starts.
    """

    static let flagNames: Set<String> = [
        "listen", "data", "jwt-secret", "tick-hz", "fleet-hz", "cluster", "web-root", "tls-cert", "tls-key",
        "allow-origin", "sync", "retain-days", "end-after", "shutdown-timeout", "max-items", "log-level",
        "max-message", "max-body", "max-route-points", "max-waypoints", "max-subscriptions", "max-fix-rate",
        "max-conns-per-ip", "max-refusal-rate", "auth-timeout", "max-unsent", "max-clock-skew", "event-loop", "ping-interval",
        "cluster-partitions", "cluster-snapshot-interval", "cluster-lease", "cluster-replicas", "allow-host", "body-timeout", "max-trips", "log-format",
        "config", "jwt-secret-file", "osmand-listen", "webhook", "webhook-secret", "webhook-events", "webhook-retry-base",
        "router", "stale-after", "cadence-watched", "cadence-idle",
    ]

    static func parse(_ arguments: [String]) throws -> HubConfig? {
        let flags = try Flags(arguments: arguments, known: flagNames)
        if flags.switches.contains("help") { return nil }
        var config = HubConfig()
        if let listen = flags.string("listen") {
            guard let (host, port) = ListenAddress.split(listen) else {
                throw UsageError("--listen: \(listen) is not HOST:PORT (an IPv6 address in brackets: [::1]:8080)")
            }
            // PROTOCOL 14: a name is resolved once, here; lws is given the address.
            let resolved = try ListenAddress.resolve(host: host, port: port)
            config.listenName = host
            config.listenHost = resolved.host
            config.listenPort = port
        }
        if let listen = flags.string("osmand-listen") {
            guard let (host, port) = ListenAddress.split(listen) else {
                throw UsageError("--osmand-listen: \(listen) is not HOST:PORT (an IPv6 address in brackets: [::1]:5055)")
            }
            config.osmandListenHost = try ListenAddress.resolve(host: host, port: port, flag: "--osmand-listen").host
            config.osmandListenPort = port
        }
        if let data = flags.string("data") { config.dataDirectory = data }
        config.jwtSecrets = try secrets(flags)
        config.tickHz = try flags.int("tick-hz", range: 1...60) ?? config.tickHz
        config.fleetHz = try flags.double("fleet-hz", range: 0.1...10) ?? config.fleetHz
        config.webRoot = flags.string("web-root")
        config.tlsCertPath = flags.string("tls-cert")
        config.tlsKeyPath = flags.string("tls-key")
        if (config.tlsCertPath == nil) != (config.tlsKeyPath == nil) {
            throw UsageError("--tls-cert and --tls-key go together")
        }
        if let origins = flags.string("allow-origin") {
            config.allowOrigins = origins.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        }
        if let sync = flags.string("sync") {
            guard sync == "normal" || sync == "full" else { throw UsageError("--sync: \(sync) is not normal or full") }
            config.syncFull = sync == "full"
        }
        config.retainDays = try flags.int("retain-days", range: 1...36500) ?? config.retainDays
        config.endAfterMs = try flags.durationMs("end-after") ?? config.endAfterMs
        config.staleAfterMs = try flags.durationMs("stale-after") ?? config.staleAfterMs
        if config.staleAfterMs < 1000 { throw UsageError("\(flags.label("stale-after")): must be at least 1s") }
        config.shutdownTimeoutMs = try flags.durationMs("shutdown-timeout") ?? config.shutdownTimeoutMs
        config.maxItems = try flags.int("max-items", range: 1...100_000) ?? config.maxItems
        if let level = flags.string("log-level") {
            guard ["error", "warn", "info", "debug"].contains(level) else { throw UsageError("--log-level: \(level) is not error, warn, info or debug") }
            config.logLevel = level
        }
        if let format = flags.string("log-format") {
            guard LogFormat(rawValue: format) != nil else { throw UsageError("--log-format: \(format) is not text or json") }
            config.logFormat = format
        }
        config.maxMessageBytes = try flags.bytes("max-message", range: 256...(64 << 20)) ?? config.maxMessageBytes
        config.maxBodyBytes = try flags.bytes("max-body", range: 1024...(1 << 30)) ?? config.maxBodyBytes
        config.maxRoutePoints = try flags.int("max-route-points", range: 2...10_000_000) ?? config.maxRoutePoints
        config.maxWaypoints = try flags.int("max-waypoints", range: 0...1_000_000) ?? config.maxWaypoints
        config.maxSubscriptions = try flags.int("max-subscriptions", range: 1...1_000_000) ?? config.maxSubscriptions
        config.maxFixRate = try flags.int("max-fix-rate", range: 1...1_000_000) ?? config.maxFixRate
        config.maxConnsPerIP = try flags.int("max-conns-per-ip", range: 0...10_000_000) ?? config.maxConnsPerIP
        config.maxRefusalRate = try flags.int("max-refusal-rate", range: 0...1_000_000) ?? config.maxRefusalRate
        config.authTimeoutMs = try flags.durationMs("auth-timeout") ?? config.authTimeoutMs
        config.bodyTimeoutMs = try flags.durationMs("body-timeout") ?? config.bodyTimeoutMs
        config.maxTrips = try flags.int("max-trips", range: 1...100_000_000) ?? config.maxTrips
        if let hosts = flags.string("allow-host") {
            config.allowHosts = hosts.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        }
        config.maxUnsentBytes = try flags.bytes("max-unsent", range: 1024...(1 << 30)) ?? config.maxUnsentBytes
        config.maxClockSkewMs = try flags.durationMs("max-clock-skew") ?? config.maxClockSkewMs
        config.pingIntervalMs = try flags.durationMs("ping-interval") ?? config.pingIntervalMs
        if config.pingIntervalMs < 100 { throw UsageError("--ping-interval: must be at least 100ms") }
        if let loop = flags.string("event-loop") {
            guard loop == "libev" || loop == "poll" else { throw UsageError("--event-loop: \(loop) is not libev or poll") }
            config.useLibev = loop == "libev"
        }
        if let url = flags.string("cluster") {
            guard let seeds = RedisAddress.seeds(url: url) else {
                throw UsageError("--cluster: \(url) is not redis://HOST:PORT (or several, comma-separated, for a Redis Cluster)")
            }
            config.clusterSeeds = seeds
        }
        config.clusterPartitions = try flags.int("cluster-partitions", range: 1...1024) ?? config.clusterPartitions
        config.clusterSnapshotIntervalMs = try flags.durationMs("cluster-snapshot-interval") ?? config.clusterSnapshotIntervalMs
        if config.clusterSnapshotIntervalMs < 1000 { throw UsageError("--cluster-snapshot-interval: must be at least 1s") }
        config.clusterLeaseMs = try flags.durationMs("cluster-lease") ?? config.clusterLeaseMs
        if !(1000...60_000).contains(config.clusterLeaseMs) { throw UsageError("--cluster-lease: must be between 1s and 60s") }
        config.clusterReplicas = try flags.int("cluster-replicas", range: 0...8) ?? config.clusterReplicas
        try cadence(flags, into: &config)
        config.webhooks = try webhooks(flags)
        if let value = flags.string("router") { config.router = value }
        return config
    }

    /// `--cadence-watched` and `--cadence-idle` (PROTOCOL 18). A bare `0` turns cadence off
    /// as `0s` does; any other interval is at least 100 ms (a phone asked for more is asked
    /// for nothing it can do).
    static func cadence(_ flags: Flags, into config: inout HubConfig) throws {
        config.cadenceWatchedMs = try flags.durationMs("cadence-watched") ?? config.cadenceWatchedMs
        if config.cadenceWatchedMs < 100 { throw UsageError("\(flags.label("cadence-watched")): must be at least 100ms") }
        if flags.string("cadence-idle") == "0" {
            config.cadenceIdleMs = 0
        } else {
            config.cadenceIdleMs = try flags.durationMs("cadence-idle") ?? config.cadenceIdleMs
            if config.cadenceIdleMs != 0 && config.cadenceIdleMs < 100 {
                throw UsageError("\(flags.label("cadence-idle")): must be 0 (off) or at least 100ms")
            }
        }
    }

    /// `--router routino:DIR` (PROTOCOL 16): the database is loaded here, so a missing or bad
    /// one is the usual one-line error, exit 2.
    static func router(_ value: String) throws -> RouterQueue {
        switch RouterSpec.parse(value) {
        case .failure(let error):
            throw UsageError(error.message)
        case .success(.routino(let directory)):
            do {
                return RouterQueue(router: try RoutinoRouter(directory: directory))
            } catch {
                throw UsageError(error.message)
            }
        }
    }

    /// `--webhook` (repeatable; the environment's and the file's a comma-separated list or a
    /// YAML list), `--webhook-secret`, `--webhook-events`, `--webhook-retry-base` (PROTOCOL 12).
    static func webhooks(_ flags: Flags) throws -> WebhookSettings {
        var settings = WebhookSettings()
        for value in flags.all("webhook") {
            for part in value.split(separator: ",") {
                let url = part.trimmingCharacters(in: .whitespaces)
                guard !url.isEmpty else { continue }
                guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
                    scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
                else {
                    throw UsageError("\(flags.label("webhook")): \(url) is not an http:// or https:// URL")
                }
                if !settings.urls.contains(url) { settings.urls.append(url) }
            }
        }
        if let secret = flags.string("webhook-secret") {
            guard let key = WebhookSecret.key(secret) else {
                throw UsageError("\(flags.label("webhook-secret")): empty, or whsec_ not followed by base64")
            }
            settings.key = key
            settings.secret = secret
        } else if settings.isEnabled {
            throw UsageError("\(flags.label("webhook")) needs --webhook-secret (the key receivers verify signatures with)")
        }
        if let names = flags.string("webhook-events") {
            var selected = Set<String>()
            for part in names.split(separator: ",") {
                let name = part.trimmingCharacters(in: .whitespaces)
                guard WebhookSettings.knownEventNames.contains(name) else {
                    throw UsageError("\(flags.label("webhook-events")): \(name) is not an event name (\(WebhookSettings.knownEventNames.sorted().joined(separator: ", ")))")
                }
                selected.insert(name)
            }
            guard !selected.isEmpty else { throw UsageError("\(flags.label("webhook-events")): no event names") }
            settings.eventNames = selected
        }
        settings.retryBaseMs = try flags.durationMs("webhook-retry-base") ?? settings.retryBaseMs
        if settings.retryBaseMs < 1 { throw UsageError("\(flags.label("webhook-retry-base")): must be at least 1ms") }
        return settings
    }

    /// `--jwt-secret` or `--jwt-secret-file`: one secret, or two while rotating. They are one
    /// setting: a flag of either beats the environment's, which beats the file's; both at the
    /// same level is an error.
    static func secrets(_ flags: Flags) throws -> [String] {
        var text = flags.string("jwt-secret"), path = flags.string("jwt-secret-file")
        if let textSource = flags.source("jwt-secret"), let pathSource = flags.source("jwt-secret-file"), textSource != pathSource {
            if textSource < pathSource { path = nil } else { text = nil }
        }
        switch (text, path) {
        case (nil, nil):
            return []
        case (let text?, nil):
            return try SecretList.split(text, label: flags.label("jwt-secret"))
        case (nil, let path?):
            let label = flags.label("jwt-secret-file")
            return try SecretList.split(try SecretList.read(file: path, label: label), label: label)
        case (.some, .some):
            throw UsageError("\(flags.label("jwt-secret")) and \(flags.label("jwt-secret-file")): give one of them, not both")
        }
    }

    static func run(_ arguments: [String]) -> Int32 {
        // Before any thread starts: the watchers below then see every SIGTERM and SIGINT.
        SignalWatcher.blockInEveryThread([SIGTERM, SIGINT])
        let config: HubConfig
        let router: RouterQueue?
        do {
            guard let parsed = try parse(arguments) else {
                print(help)
                return 0
            }
            config = parsed
            router = try config.router.map(Self.router)  // the database is loaded here: a bad one is exit 2
        } catch {
            FileHandle.standardError.write(Data("trackhub serve: \(error)\n".utf8))
            return 2
        }
        HubLog.configure(level: LogLevel(name: config.logLevel) ?? .info, format: LogFormat(rawValue: config.logFormat) ?? .text, secrets: config.jwtSecrets + (config.webhooks.secret.isEmpty ? [] : [config.webhooks.secret]))
        let log = Logger()
        let systemd = SystemdNotify()
        // The durable store (PROTOCOL 7): SQLite in --data. A directory or file that cannot be
        // used is a one-line error naming it, exit 2.
        let store: SQLiteTripStore
        let dataLock: DataDirectoryLock
        do {
            dataLock = try DataDirectoryLock(directory: config.dataDirectory)
            store = try SQLiteTripStore(directory: try storeDirectory(config), synchronous: config.syncFull ? .full : .normal)
        } catch {
            FileHandle.standardError.write(Data("trackhub serve: \(error)\n".utf8))
            return 2
        }
        // The backends, chosen here and only here (docs/architecture.md): libwebsockets on
        // the configured listeners, the SQLite store, the log (Redis streams with --cluster),
        // the router, and libcurl for webhooks.
        let backends = HubBackends(
            host: LWSServerHost(options: ServerHostOptions(config: config)), store: store,
            log: config.clusterSeeds.map { .redis(seeds: $0) } ?? .local, router: router,
            webhookTransport: { connections in try CurlMulti(perHost: connections, total: connections) })
        let hub = Hub(config: config, backends: backends)
        // SIGTERM is watched before the port opens: one that comes right after the
        // "listening on" line must drain the hub, not kill it. SIGINT is watched once the hub
        // runs, because libwebsockets' libev loop installs its own SIGINT handler at start.
        let drain: @Sendable (String) -> Void = { signal in
            log.info("received \(signal), draining")
            if let problem = systemd.send("STOPPING=1") { log.warn(problem) }
            hub.beginShutdown()
        }
        let terminate = SignalWatcher([(SIGTERM, "SIGTERM")], handler: drain)
        do {
            try hub.start()
        } catch {
            FileHandle.standardError.write(Data("trackhub serve: \(error)\n".utf8))
            store.close()
            return 2
        }
        // Said once the hub runs, not before: a start that fails is one line and exit 2
        // (PROTOCOL 14), and a warning about a hub that never ran would be a second.
        warnAtStart(config, log)
        let scheme = config.tlsCertPath == nil ? "http" : "https"
        // Scripts and tests wait for this exact line (PROTOCOL 9); write it unbuffered.
        let interrupt = SignalWatcher([(SIGINT, "SIGINT")], handler: drain)
        // Whichever sees SIGINT first (the libev loop or the watcher) starts the drain;
        // draining twice is harmless.
        EventLoopSignals.setHandler { signal in
            if signal == SIGINT { hub.beginShutdown() }
        }
        let bound = ListenAddress(host: config.listenHost, port: hub.port)
        if let osmandHost = config.osmandListenHost {
            // Before the line scripts wait for, so it is there once they see that one.
            let osmand = ListenAddress(host: osmandHost, port: hub.osmandPort)
            FileHandle.standardOutput.write(Data("osmand listening on \(scheme)://\(osmand.authority)\n".utf8))
        }
        FileHandle.standardOutput.write(Data("listening on \(scheme)://\(bound.authority)\n".utf8))
        // After the line: whoever waits on either sees the hub accepting connections.
        if let problem = systemd.send("READY=1") { log.warn("systemd readiness: \(problem)") }
        hub.waitUntilStopped()
        terminate.cancel()
        interrupt.cancel()
        store.close()
        withExtendedLifetime(dataLock) {}  // held until the store is closed
        log.info("stopped")
        return 0
    }

    /// The warnings of a running hub's configuration, before its "listening on" line.
    static func warnAtStart(_ config: HubConfig, _ log: Logger) {
        if config.jwtSecret == nil {
            // Said at every log level: an open hub must never go unnoticed.
            HubLog.log(.warn, "OPEN MODE: no --jwt-secret, every client may do everything. For development only.", always: true)
        }
        // Said without the secret itself: log lines never hold one (PROTOCOL 14).
        for (index, secret) in config.jwtSecrets.enumerated() where secret.utf8.count < SecretList.recommendedBytes {
            let which = config.jwtSecrets.count > 1 ? (index == 0 ? "the first JWT secret" : "the second JWT secret") : "the JWT secret"
            log.warn("\(which) is \(secret.utf8.count) bytes, shorter than \(SecretList.recommendedBytes): tokens are easier to forge; use e.g. openssl rand -hex 32")
        }
    }

    /// Where the SQLite store lives. In cluster mode it is the node's own copy of what it
    /// applied from the log (trails, event replay): rebuilt from the snapshot and the log at
    /// every start, so it lives in its own directory, emptied first.
    static func storeDirectory(_ config: HubConfig) throws -> String {
        guard config.clusterSeeds != nil else { return config.dataDirectory }
        let directory = (config.dataDirectory as NSString).appendingPathComponent("cluster-node")
        let files = FileManager.default
        if files.fileExists(atPath: directory) {
            do {
                try files.removeItem(atPath: directory)
            } catch {
                throw StoreError.unusable(path: directory, reason: "cannot clear the node's copy: \(error.localizedDescription)")
            }
        }
        return directory
    }
}
