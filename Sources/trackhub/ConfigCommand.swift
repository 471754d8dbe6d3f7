import Foundation
import TrackHubServer

/// `trackhub config default`: prints a `--config` file with every `serve` flag commented out
/// at its default (PROTOCOL 14). The defaults are read from `HubConfig()`, so the file says
/// what the code does; prose lines start with `##`, so stripping one `# ` from any line
/// (or every line) still leaves a file `--config` accepts.
enum ConfigCommand {
    static let help = """
    Usage: trackhub config default

    Prints a config file for `trackhub serve --config FILE` with every flag commented out at
    its default. Uncomment a line to change it. Environment variables (TRACKHUB_<FLAG>) win over
    the file, flags over both.
    """

    static func run(_ arguments: [String]) -> Int32 {
        switch arguments.first {
        case "default" where arguments.count == 1:
            print(defaultFile(), terminator: "")
            return 0
        case "-h", "--help", "help":
            print(help)
            return 0
        default:
            FileHandle.standardError.write(Data("trackhub config: expected `trackhub config default`\n".utf8))
            return 2
        }
    }

    /// One line per flag: its name, its default (empty: not set) and a note.
    static func entries(_ d: HubConfig = HubConfig()) -> [(name: String, value: String, note: String)] {
        [
            ("listen", "\(d.listenHost):\(d.listenPort)", "HOST:PORT; [::1]:PORT for IPv6; port 0 picks a free one"),
            ("data", d.dataDirectory, "data directory, created if missing"),
            ("jwt-secret", "", "HS256 secret; two, comma-separated, while rotating. Unset: open mode (development)"),
            ("jwt-secret-file", "", "read the secret(s) from this file instead (one trailing newline ignored)"),
            ("tick-hz", "\(d.tickHz)", "frames per second per moving trip, 1-60"),
            ("fleet-hz", number(d.fleetHz), "fleet cluster updates per second, 0.1-10"),
            ("web-root", "", "the web client's files (unset: ./web-client, else next to the binary)"),
            ("tls-cert", "", "with tls-key: serve https:// and wss://"),
            ("tls-key", "", ""),
            ("allow-origin", "", "browser origins allowed besides the hub's own; a list, or \"*\""),
            ("allow-host", "", "Host names an open hub answers besides its listen address; a list"),
            ("osmand-listen", "", "a second HOST:PORT serving only the OsmAnd protocol at / (Traccar's default port: 5055)"),
            ("sync", d.syncFull ? "full" : "normal", "normal survives a process crash, full also a power cut"),
            ("retain-days", "\(d.retainDays)", "days ended trips are kept"),
            ("end-after", duration(d.endAfterMs), "an arrived trip ends by itself after this"),
            ("stale-after", duration(d.staleAfterMs), "a moving trip with no fix for this long is stale (10 x while holding)"),
            ("shutdown-timeout", duration(d.shutdownTimeoutMs), "how long SIGTERM waits to flush acks and close"),
            ("max-items", "\(d.maxItems)", "clusters per fleet answer, 1-100000"),
            ("log-level", d.logLevel, "error, warn, info or debug"),
            ("log-format", d.logFormat, "text or json: one line per event, time-stamped"),
            ("event-loop", d.useLibev ? "libev" : "poll", "libev or poll"),
            ("webhook", "", "POST every trip event to these URLs, signed (docs/webhooks.md); a list"),
            ("webhook-secret", "", "the webhook signing secret, required with webhook; whsec_<base64>: the decoded bytes"),
            ("webhook-events", "", "event names to send, a list (unset: all)"),
            ("webhook-retry-base", duration(d.webhooks.retryBaseMs), "the first webhook retry's delay, doubling up to 5 min"),
            ("router", "", "routino:DIR: find routes with this Routino database (docs/routing.md)"),
            ("cadence-watched", duration(d.cadenceWatchedMs), "the interval between fixes asked of a courier while its trip is watched"),
            ("cadence-idle", duration(d.cadenceIdleMs), "the interval asked while nobody watches it; 0: cadence off"),
            ("cluster", "", "redis://HOST:PORT: be one node of several (docs/cluster.md)"),
            ("cluster-partitions", "\(d.clusterPartitions)", "streams of the shared log, the same on every node"),
            ("cluster-snapshot-interval", duration(d.clusterSnapshotIntervalMs), "how often a state snapshot goes to Redis"),
            ("cluster-lease", duration(d.clusterLeaseMs), "a dead hub's partitions are taken over within it"),
            ("cluster-replicas", "\(d.clusterReplicas)", "replicas that must confirm a log entry before its ack"),
            ("max-message", bytes(d.maxMessageBytes), "a client message; past it: close 1009"),
            ("max-body", bytes(d.maxBodyBytes), "an HTTP body; past it: 413"),
            ("max-route-points", "\(d.maxRoutePoints)", "points of a route"),
            ("max-waypoints", "\(d.maxWaypoints)", "waypoints of a trip"),
            ("max-subscriptions", "\(d.maxSubscriptions)", "subscriptions of one connection"),
            ("max-fix-rate", "\(d.maxFixRate)", "fix ops per second per connection"),
            ("max-conns-per-ip", "\(d.maxConnsPerIP)", "connections from one address; 0: no limit"),
            ("max-refusal-rate", "\(d.maxRefusalRate)", "refusals of one address for a bad credential per second, then 429; 0: no limit"),
            ("body-timeout", duration(d.bodyTimeoutMs), "an HTTP body must arrive within this of its headers"),
            ("max-trips", "\(d.maxTrips)", "trips not ended at once"),
            ("auth-timeout", duration(d.authTimeoutMs), "wait for a valid token on a secured hub"),
            ("max-unsent", bytes(d.maxUnsentBytes), "unsent data of a connection for 2 s before close 1008"),
            ("max-clock-skew", duration(d.maxClockSkewMs), "how far a fix's ts may be ahead of the hub's clock"),
            ("ping-interval", duration(d.pingIntervalMs), "WebSocket ping interval"),
        ]
    }

    static func defaultFile() -> String {
        var text = """
        ## TrackHub configuration: trackhub serve --config FILE (PROTOCOL 14).
        ## Every flag of `trackhub serve`, commented out at its default (no value: not set).
        ## Uncomment a line to change it. TRACKHUB_<FLAG> environment variables win over
        ## this file, command-line flags over both. A list is written [a, b].


        """
        let entries = entries()
        let lines = entries.map { (setting: "# \($0.name):" + ($0.value.isEmpty ? "" : " \($0.value)"), note: $0.note) }
        let width = lines.map(\.setting.count).max() ?? 0
        for line in lines {
            let padding = String(repeating: " ", count: width - line.setting.count + 2)
            text += line.note.isEmpty ? "\(line.setting)\n" : "\(line.setting)\(padding)# \(line.note)\n"
        }
        return text
    }

    /// `30m`, `10s`, `500ms`: the largest unit that divides it (what `Flags` reads back).
    static func duration(_ ms: Int64) -> String {
        for (unit, scale) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000), ("s", 1000)] where ms > 0 && ms % scale == 0 {
            return "\(ms / scale)\(unit)"
        }
        return "\(ms)ms"
    }

    /// `64KiB`, `4MiB`, else the number of bytes.
    static func bytes(_ count: Int) -> String {
        for (unit, scale) in [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1024)] where count > 0 && count % scale == 0 {
            return "\(count / scale)\(unit)"
        }
        return "\(count)"
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
