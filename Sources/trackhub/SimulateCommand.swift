import TrackHubCLI
import Foundation
import TrackHubSimulator

/// `trackhub simulate`: drives simulated couriers (or one recorded track) against a hub.
enum SimulateCommand {
    static let help = """
    Usage: trackhub simulate --hub http://HOST:PORT [flags]

    Creates trips and drives courier connections that push fixes like real phones: synthetic
    riders on the I-95 routes and on Helsinki street routes (via points, off-route excursions,
    reroutes, arrivals, new trips as others end) and riders replaying the recorded sample traces.
    Every flag with a value also reads TRACKHUB_<FLAG> from the environment (flags win).

      --hub URL              the hub (required): the http://HOST:PORT that serve prints, or
                             ws://HOST:PORT (https:// and wss:// for TLS)
      --riders N             concurrent riders, 1–10000 (default 20)
      --speedup X            how much faster than real time, 0.1–1000 (default 1)
      --seed S               seed of every random choice; the same seed gives the same riders,
                             routes and noise (default 1)
      --token T              a token with admin and courier scopes, for a secured hub
      --protocol trackhub|osmand|owntracks
                             how riders send fixes: the WebSocket fix op (default), or as a phone
                             with Traccar Client (OsmAnd protocol) or OwnTracks, each rider a device
                             bound to its trip (needs admin on a secured hub; docs/devices.md)
      --replay FILE          play one recorded track (GPX, or CSV with ts,lat,lon; ts in ms) into
                             one new trip at its recorded pace divided by --speedup, then exit
      --samples DIR          the sample data folder (default: ./data/samples, else found from
                             the binary's location)
      --max-clock-skew DURATION
                             the hub's allowed clock skew (default 5m); fix times stay within it
      --duration DURATION    stop after this long (default: run until Ctrl-C)
      --event-loop libev|poll
                             the WebSocket client's event loop (default libev)
      --from-stops SHARE     0–1: this share of the Helsinki trips is created from its stops alone
                             (origin, via points, destination) for a hub with --router to route
                             (default 0; docs/routing.md)
      --stops N              1–20: every synthetic trip is a delivery round with N stops, each a
                             waypoint with an id (stop-1, …), a name and a planned dwell_s of
                             30–180 s; the courier waits that dwell after the hub confirms the
                             stop, then sends proceed (PROTOCOL 17; docs/simulator.md). Default:
                             1–2 plain via points with a random pause. A customer follows each
                             stop as the customer's page does: the stop's share link (POST
                             /v1/trips/{id}/share {stop, visible_within_stops: 1}), a WebSocket
                             of its own on the link's token, and one line on stderr when it ends
                             (how stops_before counted down, when the courier was first shown,
                             "arrived"). An open hub issues no links: there the customer
                             subscribes with {stop} instead (no privacy filter)
      --no-stop-links        with --stops: no customer follows the stops (no share links, no
                             extra WebSockets)
      --ignore-cadence       send at the riders' own fixed rhythm (a fix every 1-3 s of device
                             time) even when the hub asks for another interval; by default riders
                             follow the hub's cadence messages (and OwnTracks riders its
                             setConfiguration): every --cadence-watched while somebody follows the
                             trip, every --cadence-idle otherwise (PROTOCOL 18), in device time
                             (at --speedup 4, 30 s asked is 7.5 s of wall clock). Replays keep
                             their recorded pace either way
      --show-viewers         the status line also counts viewers: the hub's WebSocket connections
                             that are not this simulator's (browsers watching), read from its
                             /metrics once a second

    Prints one status line a second on stderr (riders, fixes sent and acked, fixes per second,
    events, trips ended), refreshed in place on a terminal, one line each otherwise. Exits 0
    when every simulated fix was applied and no error came back, 1 otherwise, 2 on bad flags.
    """

    static let flagNames: Set<String> = [
        "hub", "riders", "speedup", "seed", "token", "replay", "protocol", "samples", "max-clock-skew", "duration", "event-loop", "from-stops", "stops",
    ]

    struct Options {
        var hub = ""
        var settings = SimulationSettings()
        var token: String?
        var replay: String?
        var samples: String?
        var durationMs: Int64?
        var useLibev = true
        var showViewers = false
    }

    static func parse(_ arguments: [String]) throws -> Options? {
        let flags = try Flags(arguments: arguments, known: flagNames, switches: ["help", "show-viewers", "ignore-cadence", "no-stop-links"])
        if flags.switches.contains("help") { return nil }
        var options = Options()
        options.showViewers = flags.switches.contains("show-viewers")
        options.settings.followsCadence = !flags.switches.contains("ignore-cadence")
        options.settings.followsStopLinks = !flags.switches.contains("no-stop-links")
        guard let hub = flags.string("hub") else { throw UsageError("--hub http://HOST:PORT is required") }
        // Either scheme names the same port: the hub serves HTTP and WebSocket on one.
        let schemes = ["http://", "https://", "ws://", "wss://"]
        guard schemes.contains(where: hub.hasPrefix), hub.split(separator: ":").count >= 3 else {
            throw UsageError("--hub: \(hub) is not http://HOST:PORT or ws://HOST:PORT")
        }
        options.hub = hub
        options.settings.riders = try flags.int("riders", range: 1...10_000) ?? 20
        options.settings.speedup = try flags.double("speedup", range: 0.1...1000) ?? 1
        options.settings.fromStopsShare = try flags.double("from-stops", range: 0...1) ?? 0
        options.settings.stopsPerTrip = try flags.int("stops", range: 1...20)
        if let seed = flags.string("seed") {
            guard let value = UInt64(seed) else { throw UsageError("--seed: \(seed) is not a non-negative integer") }
            options.settings.seed = value
        }
        options.settings.maxClockSkewMs = try flags.durationMs("max-clock-skew") ?? options.settings.maxClockSkewMs
        options.settings.skewMarginMs = min(options.settings.skewMarginMs, options.settings.maxClockSkewMs / 10)
        if let name = flags.string("protocol") {
            guard let chosen = FixProtocol(rawValue: name) else {
                throw UsageError("--protocol: \(name) is not trackhub, osmand or owntracks")
            }
            options.settings.fixProtocol = chosen
        }
        options.token = flags.string("token")
        options.replay = flags.string("replay")
        options.samples = flags.string("samples")
        options.durationMs = try flags.durationMs("duration")
        if let loop = flags.string("event-loop") {
            guard loop == "libev" || loop == "poll" else { throw UsageError("--event-loop: \(loop) is not libev or poll") }
            options.useLibev = loop == "libev"
        }
        return options
    }

    static func run(_ arguments: [String]) -> Int32 {
        let options: Options
        let simulation: Simulation
        do {
            guard let parsed = try parse(arguments) else {
                print(help)
                return 0
            }
            options = parsed
            if let replay = options.replay {
                simulation = Simulation(replay: try TrackReader.read(path: replay), settings: options.settings)
            } else {
                guard let directory = SampleData.locate(override: options.samples) else {
                    throw UsageError(options.samples.map { "--samples: \($0) holds no sample data" } ?? "no data/samples folder found (use --samples DIR)")
                }
                simulation = Simulation(settings: options.settings, catalog: try RouteCatalog.load(directory: directory))
            }
        } catch {
            FileHandle.standardError.write(Data("trackhub simulate: \(error)\n".utf8))
            return 2
        }
        let runner: SimulationRunner
        let viewers: HubViewers?
        do {
            let transport = try HubTransport(url: options.hub, token: options.token, useLibev: options.useLibev)
            runner = SimulationRunner(simulation: simulation, transport: transport)
            viewers = options.showViewers ? try HubViewers(url: options.hub, token: options.token, ownConnections: { transport.openConnections }) : nil
        } catch {
            FileHandle.standardError.write(Data("trackhub simulate: \(error)\n".utf8))
            return 2
        }
        let signals = SignalWatcher { _ in runner.requestStop() }
        defer { signals.cancel() }
        let line = StatusLinePrinter()
        var status = StatusLine(startMs: SimulationRunner.wallClock())
        let deadline = options.durationMs.map { SimulationRunner.wallClock() + $0 }
        let stats: SimulationStats
        var linksPrinted = 0
        viewers?.start()
        do {
            stats = try runner.run(deadline: deadline) { stats in
                // A line per customer whose stop link ended (PROTOCOL 17), above the status line.
                for summary in stats.linkSummaries(after: linksPrinted) { line.note(summary) }
                linksPrinted = stats.linksFollowed
                line.show(status.render(stats, nowMs: SimulationRunner.wallClock(), viewers: viewers.map { $0.current ?? 0 }))
            }
        } catch {
            viewers?.stop()
            FileHandle.standardError.write(Data("trackhub simulate: \(error)\n".utf8))
            return 1
        }
        viewers?.stop()
        line.finish()
        let counted = stats.events.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let events = counted.isEmpty ? "none" : counted
        let links = stats.linksFollowed > 0 ? "; stop links followed to their end \(stats.linksFollowed)" : ""
        FileHandle.standardError.write(Data("trackhub simulate: trips started \(stats.tripsStarted), ended \(stats.tripsEnded); events: \(events)\(links)\n".utf8))
        for message in stats.errorMessages {
            FileHandle.standardError.write(Data("trackhub simulate: error: \(message)\n".utf8))
        }
        if stats.fixesRefused > 0 {
            let reasons = stats.refusals.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            FileHandle.standardError.write(Data("trackhub simulate: fixes refused: \(reasons)\n".utf8))
        }
        // A replayed recording may hold real glitches the hub rightly refuses; only errors fail it.
        let failed = stats.errors > 0 || (options.replay == nil && stats.fixesRefused > 0)
        return failed ? 1 : 0
    }
}

/// The live status line on stderr: refreshed in place with `\r` on a terminal, one line per
/// update otherwise.
final class StatusLinePrinter {
    private let isTTY = isatty(FileHandle.standardError.fileDescriptor) != 0
    private var shown = false

    func show(_ text: String) {
        if isTTY {
            FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
        } else {
            FileHandle.standardError.write(Data("\(text)\n".utf8))
        }
        shown = true
    }

    /// One line of its own (a stop link's summary): on a terminal it takes the status line's
    /// place, and the next `show` draws the status line again below it.
    func note(_ text: String) {
        if isTTY {
            FileHandle.standardError.write(Data("\r\u{1B}[K\(text)\n".utf8))
        } else {
            FileHandle.standardError.write(Data("\(text)\n".utf8))
        }
    }

    func finish() {
        if isTTY && shown { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
