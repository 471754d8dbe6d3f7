import TrackHubCore
import TrackHubProtocol

/// One customer of a multi-stop trip following their own stop (PROTOCOL 17), as the customer's
/// page does: on a secured hub through the stop's share link (its token, `stop` messages, the
/// courier shown only when near), on an open hub, which issues no links, with a plain
/// `subscribe {trip, stop}` instead. It keeps what a customer would notice (how `stops_before`
/// counted down, when the courier was first shown, how it ended) for a one-line summary, and
/// checks the one rule a customer could see broken: no position while the courier is hidden.
struct StopCustomer: Sendable {
    /// How the customer follows the stop.
    enum Way: Sendable, Equatable {
        /// Asking the hub for the stop's link (`POST /v1/trips/{id}/share`), answer pending.
        case askingForLink
        /// Through the link's token (a secured hub).
        case link(token: String)
        /// `subscribe` with `stop` (an open hub: no links, and so no privacy filter).
        case stopSubscription
    }

    /// The rider's number for this customer's connection.
    let link: Int
    let trip: String
    let stop: String
    let stopName: String
    var way = Way.askingForLink
    /// Wall ms when the customer subscribed (nil before).
    var subscribedAt: Int64?
    /// `stops_before` as it changed, first value first.
    private(set) var countdown: [Int] = []
    /// Whether the courier is shown now, and when (wall ms) it was first.
    private(set) var visible = false
    private(set) var firstShownAt: Int64?
    /// Frames and segments received, and those received while the hub said the courier was hidden.
    private(set) var positions = 0
    private(set) var positionsWhileHidden = 0
    /// How following ended (`arrived`, `stop removed`, …) and when (wall ms); nil while it goes on.
    private(set) var outcome: String?
    private(set) var endedAt: Int64?

    init(link: Int, trip: String, stop: String, stopName: String) {
        self.link = link
        self.trip = trip
        self.stop = stop
        self.stopName = stopName
    }

    /// True once the customer has nothing more to follow.
    var isDone: Bool { outcome != nil }

    /// The `subscribe` the customer sends once connected: segments mode, as the customer's
    /// page moves the marker; with `stop` only without a link (a link's token names its stop).
    var subscribeMessage: String {
        var w = JSONWriter(headroom: 0, capacity: 96 + trip.utf8.count + stop.utf8.count)
        w.beginObject()
        w.field("op", "subscribe")
        w.field("trip", trip)
        w.field("mode", "segments")
        if way == .stopSubscription { w.field("stop", stop) }
        w.field("id", 1)
        w.endObject()
        return String(decoding: w.finish(), as: UTF8.self)
    }

    /// Takes one message from the hub at wall time `now`.
    mutating func receive(_ message: ServerMessage, now: Int64) {
        guard !isDone else { return }
        switch message.type {
        case .snapshot:
            // The `stop` object of the snapshot: a stop subscription's only count (a link gets
            // `stop` messages too). A snapshot with a position shows the courier.
            if let before = message.value("stop")?["stops_before"]?.numberValue?.int64Value { count(Int(before)) }
            if way == .stopSubscription { show(message.contains("position") && !message.isNull("position"), now: now) }
        case .stop:
            if let before = message.int("stops_before") { count(Int(before)) }
            show(message.bool("visible") == true, now: now)
        case .frame, .segment:
            positions += 1
            if !visible { positionsWhileHidden += 1 }
        case .event:
            switch message.string("name") {
            case "waypoint_resumed" where way == .stopSubscription:
                // Without `stop` messages: a stop before this one is done.
                if message.string("stop") != stop, let last = countdown.last, last > 0 { count(last - 1) }
            case "waypoint_reached" where message.string("stop") == stop && way == .stopSubscription:
                finish("arrived", now: now)
            case "arrived" where stop == "destination" && way == .stopSubscription:
                finish("arrived", now: now)
            case "ended":
                finish("trip ended", now: now)
            default:
                break
            }
        case .unsubscribed:
            let reason = message.string("reason") ?? "unsubscribed"
            finish(reason == "stop_removed" ? "stop removed" : reason, now: now)
        case .error:
            finish("refused: \(message.string("code") ?? "error") \(message.string("message") ?? "")", now: now)
        default:
            break
        }
    }

    /// Ends following for a reason of the rider's own (its connection closed, the trip ended).
    mutating func finish(_ why: String, now: Int64) {
        guard outcome == nil else { return }
        outcome = why
        endedAt = now
    }

    private mutating func count(_ before: Int) {
        if countdown.last != before { countdown.append(before) }
    }

    private mutating func show(_ shown: Bool, now: Int64) {
        visible = shown
        if shown && firstShownAt == nil { firstShownAt = now }
    }

    /// `link T12 stop-2 "Order 2 of rider 3": stops before 2 → 1 → 0 · shown after 1m05s · 42
    /// segments · arrived after 3m10s` (wall time since it subscribed).
    var summary: String {
        var line = "link \(trip) \(stop) \"\(stopName)\""
        if way == .stopSubscription { line += " (open hub, no link: subscribe {stop})" }
        line += ": stops before " + (countdown.isEmpty ? "?" : countdown.map(String.init).joined(separator: " → "))
        if let shown = firstShownAt, let start = subscribedAt {
            line += " · shown after \(Self.duration(shown - start))"
        } else {
            line += " · never shown"
        }
        line += " · \(positions) segments"
        if positionsWhileHidden > 0 { line += " (\(positionsWhileHidden) while hidden)" }
        if let outcome {
            line += " · \(outcome)"
            if let end = endedAt, let start = subscribedAt { line += " after \(Self.duration(end - start))" }
        }
        return line
    }

    /// `1m05s`, `42s` of wall time.
    static func duration(_ ms: Int64) -> String {
        let seconds = max(0, ms) / 1000
        return seconds >= 60 ? "\(seconds / 60)m\(String(format: "%02d", seconds % 60))s" : "\(seconds)s"
    }
}
