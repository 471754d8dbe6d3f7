import Foundation
import Synchronization
import TrackHubLWS
import TrackHubSync

/// The simulator's one-line status: the run's counters, the fixes sent per second since the
/// previous line (what a newcomer watches move), and, when the command asks, the hub's
/// viewers.
public struct StatusLine: Sendable {
    private var previousMs: Int64
    private var previousFixes = 0

    /// A status line whose first rate counts from `startMs` (wall ms).
    public init(startMs: Int64) {
        previousMs = startMs
    }

    /// `riders 20 · fixes 1234 (acked 1230) · 8.5 fixes/s · events 56 · trips ended 7`, then
    /// refusals and errors when there are any, then `viewers N` when `viewers` is given.
    public mutating func render(_ stats: SimulationStats, nowMs: Int64, viewers: Int? = nil) -> String {
        let elapsedMs = nowMs - previousMs
        // Two lines in the same millisecond (the last one, at the end) keep the previous rate's
        // basis rather than divide by nothing.
        let rate = elapsedMs > 0 ? Double(stats.fixesSent - previousFixes) * 1000 / Double(elapsedMs) : 0
        if elapsedMs > 0 {
            previousMs = nowMs
            previousFixes = stats.fixesSent
        }
        var line = "riders \(stats.riders) · fixes \(stats.fixesSent) (acked \(stats.fixesAcked)) · \(String(format: "%.1f", max(0, rate))) fixes/s"
        line += " · events \(stats.eventCount) · trips ended \(stats.tripsEnded)"
        if stats.fixesRefused > 0 { line += " · refused \(stats.fixesRefused)" }
        if stats.errors > 0 { line += " · errors \(stats.errors)" }
        if let viewers { line += " · viewers \(viewers)" }
        return line
    }
}

/// How many people watch the hub: its WebSocket connections (`trackhub_connections` of its
/// `/metrics`) less the simulator's own, read once a second on a thread of its own so that a
/// slow answer never holds up the riders. Browsers of the trips list, a trip or the fleet view
/// each hold one WebSocket.
///
/// About, not exact: the hub and the simulator count a connection that opens or closes at
/// slightly different moments, so a rider's reconnection can show for a second. The count is
/// never negative.
public final class HubViewers: Sendable {
    private let http: HTTPClient
    private let ownConnections: @Sendable () -> Int
    private let latest = HubMutex<Int?>(nil)
    private let started = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Viewers of the hub at `url` (the `--hub` URL); `ownConnections` says how many of its
    /// WebSocket connections are the simulator's (opening ones included).
    public init(url: String, token: String?, ownConnections: @escaping @Sendable () -> Int) throws(SimulatorError) {
        guard let target = WebSocketTarget(url: url) else { throw .connection("\(url) is not ws://HOST:PORT") }
        // A short timeout: a hub too busy to answer /metrics within it shows no count that second.
        http = HTTPClient(host: target.host, port: target.port, token: token, timeoutS: 2)
        self.ownConnections = ownConnections
    }

    /// The latest count; nil before the first answer or while the hub does not answer.
    public var current: Int? { latest.withLock { $0 } }

    /// Starts asking, once a second, until `stop`.
    public func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                let count = (try? http.request("GET", "/metrics")).flatMap { response -> Int? in
                    guard response.status == 200 else { return nil }
                    return Self.connections(inMetrics: String(decoding: response.body, as: UTF8.self))
                }
                let own = ownConnections()
                latest.withLock { $0 = count.map { max(0, $0 - own) } }
                // The period between questions, cut short by `stop`.
                _ = wake.wait(timeout: .now() + 1)
            }
            finished.signal()
        }
        thread.name = "trackhub-simulate-viewers"
        thread.start()
    }

    /// Stops asking and waits for the thread to end (at most its request's timeout).
    public func stop() {
        stopped.store(true, ordering: .relaxed)
        wake.signal()
        if started.load(ordering: .relaxed) { finished.wait() }
    }

    /// The value of the `trackhub_connections` gauge in a Prometheus text exposition.
    public static func connections(inMetrics text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix("trackhub_connections ") {
            return Double(line.dropFirst("trackhub_connections ".count).trimmingCharacters(in: .whitespaces)).map { Int($0) }
        }
        return nil
    }
}
