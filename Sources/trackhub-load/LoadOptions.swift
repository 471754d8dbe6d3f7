import TrackHubCLI
import Foundation

/// What the hub under load is: TrackHub itself, or nginx + Nchan for the side-by-side.
enum LoadTarget: String, Sendable {
    case trackhub
    case nchan
}

/// Every setting of one run, parsed from flags (each also read from `TRACKHUB_LOAD_<FLAG>`).
struct LoadOptions: Sendable {
    var url = "ws://127.0.0.1:8080"
    var target = LoadTarget.trackhub
    var couriers = 10
    var viewers = 100
    var fleetViewers = 0
    var idleConnections = 0
    var segmentsShare = 0.0
    /// Share of trip viewers that follow one stop through a stop link (PROTOCOL 17), 0–1; above
    /// 0 every trip is created with `StopLinkPlan.stopsPerTrip` stops and a link per stop.
    var stopLinkShare = 0.0
    var durationMs: Int64 = 30_000
    var rampMs: Int64 = 5_000
    var warmupMs: Int64 = 1_000
    var fixIntervalMs: Int64 = 1_000
    var speedMps = 12.0
    var churnPerSecond = 0.0
    var token: String?
    var routesPath: String?
    var fleetZooms = [5, 8, 11, 14]
    var panIntervalMs: Int64 = 5_000
    var hubPID: Int32?
    var maxErrors = 0
    var endTrips = true
    var courierSubscribe = true
    /// Couriers send at the interval the hub's `cadence` asks (PROTOCOL 18) once it has asked;
    /// false: every `fixIntervalMs` whatever it asks (the old fixed rate, for benchmarks).
    var followCadence = true
    /// Nchan mode: messages per second per channel and their size in bytes.
    var publishRate = 10.0
    var messageSize = 200
    var processes = 1
    /// `i/N`: this process is shard i of N (set by `--processes` on its children).
    var shard = 0
    var shardCount = 1
    /// Where trip and fleet viewers connect, round-robin (empty: `url`). Several hubs of a cluster.
    var viewerURLs: [String] = []
    /// Partition-aware routing (PROTOCOL 15): URL `p` serves the trips of partition `p`
    /// (`TripPartition.of(trip, partitions: count)`); a trip's courier and viewers go there.
    var partitionURLs: [String] = []
    var runID = ""
    var live = true

    static let help = """
    Usage: trackhub-load --url ws://HOST:PORT [flags]

    Plays couriers, trip viewers and fleet viewers against a hub on one libwebsockets event loop,
    prints a live line each second (stderr), a table at the end (stderr) and, last, one JSON
    line (stdout). Exit status 1 when errors exceed --max-errors, 2 on bad flags.
    Every flag also reads TRACKHUB_LOAD_<FLAG> from the environment (flags win).

      --url ws://HOST:PORT        the hub (TrackHub: its WebSocket and HTTP port; Nchan: nginx)
      --viewer-url URL[,URL...]   trip and fleet viewers connect to these, round-robin (default --url):
                                  couriers on one hub of a cluster, viewers on others
      --partition-url URL[,URL...]
                                  a cluster's partition owners, one URL per partition in order: each
                                  trip's courier and viewers connect to its partition's (as a
                                  partition-aware load balancer would; overrides --viewer-url for them)
      --target trackhub|nchan     what is measured (default trackhub)
      --couriers N                couriers, one trip each (Nchan: publishers, one channel each; default 10)
      --viewers N                 trip viewers, spread round-robin over the trips (default 100)
      --segments-share X          share of trip viewers in segments mode, 0–1 (default 0)
      --stop-link-share X         share of trip viewers on links for one stop, 0–1 (default 0): every
                                  trip gets 3 stops with ids ahead of its courier, a share link per
                                  stop (POST /v1/trips/{id}/share {stop, visible_within_stops: 1},
                                  once per trip and stop) and these viewers subscribe with those
                                  tokens, spread over the stops (PROTOCOL 17). Needs a secured hub
                                  and --token with the admin scope (bench/load/scenario.sh does it)
      --fleet-viewers N           fleet viewers: a viewport at one of --fleet-zooms, panning (default 0)
      --fleet-zooms Z,Z,...       zooms of the fleet viewers (default 5,8,11,14)
      --pan-interval DURATION     a fleet viewer pans this often (default 5s)
      --idle-connections N        connections that open and stay silent (memory per connection)
      --duration DURATION         the measured window (default 30s)
      --ramp DURATION             connections are opened evenly over this (default 5s)
      --warmup DURATION           settle time between the ramp and the window (default 1s)
      --fix-interval DURATION     one fix per courier this often (default 1s) until the hub asks
                                  for another interval (see --follow-cadence)
      --follow-cadence true|false couriers send at the interval the hub's cadence message asks:
                                  --cadence-watched while viewers follow the trip, --cadence-idle
                                  otherwise (default true); false keeps --fix-interval whatever it
                                  asks (the old fixed rate; or run the hub with --cadence-idle 0)
      --speed M/S                 courier speed along its route (default 12)
      --routes FILE               GeoJSON LineStrings to drive along (default: synthetic lines)
      --churn X                   share of trip viewers that reconnect each second (default 0)
      --token T                   a JWT for a secured hub (?token= on WebSockets, Bearer on HTTP)
      --hub-pid PID               read the hub's CPU and memory from /proc (same machine)
      --max-errors N              exit 1 when errors exceed N (default 0)
      --end-trips true|false      end the created trips at the end and wait for their `ended` (default true)
      --courier-subscribe true|false
                                  couriers follow their own trip (the latency reference; default true)
      --publish-rate N            Nchan: messages per second per channel (default 10)
      --message-size BYTES        Nchan: message size (default 200)
      --processes N               fan out over N generator processes (shards by trip) and merge
      --run-id ID                 prefix of trip ids (default: from the pid and time)
      --live true|false           print the live line each second (default true)
    """

    static let flagNames: Set<String> = [
        "url", "viewer-url", "partition-url", "target", "couriers", "viewers", "segments-share", "stop-link-share", "fleet-viewers", "fleet-zooms",
        "pan-interval", "idle-connections", "duration", "ramp", "warmup", "fix-interval", "speed",
        "routes", "churn", "token", "hub-pid", "max-errors", "end-trips", "courier-subscribe", "follow-cadence",
        "publish-rate", "message-size", "processes", "shard", "run-id", "live",
    ]

    /// Parses the arguments; nil means `--help`.
    static func parse(_ arguments: [String]) throws -> LoadOptions? {
        let flags = try Flags(arguments: arguments, known: flagNames, environmentPrefix: "TRACKHUB_LOAD_")
        if flags.switches.contains("help") { return nil }
        var o = LoadOptions()
        if let url = flags.string("url") { o.url = url }
        if let target = flags.string("target") {
            guard let parsed = LoadTarget(rawValue: target) else { throw UsageError("--target: \(target) is not trackhub or nchan") }
            o.target = parsed
        }
        o.couriers = try flags.int("couriers", range: 0...1_000_000) ?? o.couriers
        o.viewers = try flags.int("viewers", range: 0...1_000_000) ?? o.viewers
        o.segmentsShare = try flags.double("segments-share", range: 0...1) ?? o.segmentsShare
        o.stopLinkShare = try flags.double("stop-link-share", range: 0...1) ?? o.stopLinkShare
        o.fleetViewers = try flags.int("fleet-viewers", range: 0...1_000_000) ?? o.fleetViewers
        if let zooms = flags.string("fleet-zooms") {
            let parsed = zooms.split(separator: ",").compactMap { Int($0) }
            guard !parsed.isEmpty, parsed.count == zooms.split(separator: ",").count, parsed.allSatisfy({ (0...22).contains($0) }) else {
                throw UsageError("--fleet-zooms: \(zooms) is not a list of zooms 0–22")
            }
            o.fleetZooms = parsed
        }
        o.panIntervalMs = try flags.durationMs("pan-interval") ?? o.panIntervalMs
        o.idleConnections = try flags.int("idle-connections", range: 0...1_000_000) ?? o.idleConnections
        o.durationMs = try flags.durationMs("duration") ?? o.durationMs
        o.rampMs = try flags.durationMs("ramp") ?? o.rampMs
        o.warmupMs = try flags.durationMs("warmup") ?? o.warmupMs
        o.fixIntervalMs = try flags.durationMs("fix-interval") ?? o.fixIntervalMs
        guard o.fixIntervalMs >= 10 else { throw UsageError("--fix-interval: at least 10ms") }
        o.speedMps = try flags.double("speed", range: 0.1...69) ?? o.speedMps
        o.routesPath = flags.string("routes")
        o.churnPerSecond = try flags.double("churn", range: 0...1) ?? o.churnPerSecond
        o.token = flags.string("token")
        if let pid = try flags.int("hub-pid", range: 1...Int(Int32.max)) { o.hubPID = Int32(pid) }
        o.maxErrors = try flags.int("max-errors", range: 0...Int.max) ?? o.maxErrors
        o.endTrips = try bool(flags, "end-trips") ?? o.endTrips
        o.courierSubscribe = try bool(flags, "courier-subscribe") ?? o.courierSubscribe
        o.followCadence = try bool(flags, "follow-cadence") ?? o.followCadence
        o.live = try bool(flags, "live") ?? o.live
        o.publishRate = try flags.double("publish-rate", range: 0.1...1000) ?? o.publishRate
        o.messageSize = try flags.int("message-size", range: 64...65_536) ?? o.messageSize
        o.processes = try flags.int("processes", range: 1...64) ?? o.processes
        if let shard = flags.string("shard") {
            let parts = shard.split(separator: "/").compactMap { Int($0) }
            guard parts.count == 2, parts[1] >= 1, (0..<parts[1]).contains(parts[0]) else { throw UsageError("--shard: \(shard) is not i/N") }
            o.shard = parts[0]
            o.shardCount = parts[1]
        }
        o.runID = flags.string("run-id") ?? "load\(getpid())x\(Int(Date().timeIntervalSince1970) % 100_000)"
        guard o.runID.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw UsageError("--run-id: letters, digits, - and _ only")
        }
        guard WebSocketURL(o.url) != nil else { throw UsageError("--url: \(o.url) is not ws://HOST:PORT") }
        if let list = flags.string("viewer-url") {
            o.viewerURLs = list.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            for url in o.viewerURLs where WebSocketURL(url) == nil {
                throw UsageError("--viewer-url: \(url) is not ws://HOST:PORT")
            }
        }
        if let list = flags.string("partition-url") {
            o.partitionURLs = list.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            for url in o.partitionURLs where WebSocketURL(url) == nil {
                throw UsageError("--partition-url: \(url) is not ws://HOST:PORT")
            }
        }
        if o.stopLinkShare > 0 {
            guard o.target == .trackhub else { throw UsageError("--stop-link-share: only with --target trackhub") }
            guard o.token != nil else {
                throw UsageError("--stop-link-share needs --token with the admin scope: share links need a secured hub (--jwt-secret)")
            }
        }
        return o
    }

    private static func bool(_ flags: Flags, _ name: String) throws -> Bool? {
        guard let text = flags.string(name) else { return nil }
        switch text {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw UsageError("--\(name): \(text) is not true or false")
        }
    }

    var totalConnections: Int { couriers + viewers + fleetViewers + idleConnections }
}

/// `ws://HOST:PORT` split into its parts, with the matching `http://` base.
struct WebSocketURL: Sendable {
    var host: String
    var port: Int
    var secure: Bool

    init?(_ text: String) {
        var rest = Substring(text)
        if rest.hasPrefix("ws://") { secure = false; rest = rest.dropFirst(5) }
        else if rest.hasPrefix("wss://") { secure = true; rest = rest.dropFirst(6) }
        else if rest.hasPrefix("http://") { secure = false; rest = rest.dropFirst(7) }
        else if rest.hasPrefix("https://") { secure = true; rest = rest.dropFirst(8) }
        else { return nil }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]) else { return nil }
        host = String(rest[..<colon])
        self.port = port
    }

    var httpBase: String { "\(secure ? "https" : "http")://\(host):\(port)" }
}
