/// When a subscription of a link for one stop gets its next `stop` message (PROTOCOL 17):
/// right after each snapshot; at once when `stops_before` or `visible` changes; and when
/// `eta_s` has moved by 60 s or more from the last one sent, at most once a second for that
/// reason. One per subscription, owned by the fan-out side with the subscription; pure (the
/// clock is passed in), so it is tested alone.
struct StopMessageGate: Sendable, Equatable {
    /// How far `eta_s` moves before it alone is worth a message, in seconds.
    static let etaStepS = 60
    /// The least time between two messages sent for the ETA alone, in ms.
    static let etaIntervalMs: Int64 = 1000

    /// What a `stop` message says, minus the trip and stop it names.
    struct Standing: Sendable, Equatable {
        /// Unvisited waypoints before the stop.
        var stopsBefore: Int
        /// Seconds until the courier is expected at the stop; nil when the trip has no ETA.
        var etaS: Int?
        /// Whether the courier is shown to the customer.
        var visible: Bool
    }

    /// The standing last sent; nil before the first message.
    private(set) var lastSent: Standing?
    /// When a message was last sent for the ETA alone (ms), for the once-a-second bound.
    private var lastEtaSendMs: Int64?

    /// A gate that has sent nothing yet.
    init() {}

    /// Records the message sent right after a snapshot (always sent).
    mutating func sentAfterSnapshot(_ standing: Standing) {
        lastSent = standing
    }

    /// Whether `standing` (now, at `nowMs`) is worth a message; when it is, it is recorded as sent.
    mutating func shouldSend(_ standing: Standing, nowMs: Int64) -> Bool {
        guard let last = lastSent else {
            lastSent = standing
            return true
        }
        if standing.stopsBefore != last.stopsBefore || standing.visible != last.visible {
            lastSent = standing
            return true
        }
        guard etaMovedEnough(from: last.etaS, to: standing.etaS) else { return false }
        if let sentAt = lastEtaSendMs, nowMs - sentAt < Self.etaIntervalMs { return false }
        lastSent = standing
        lastEtaSendMs = nowMs
        return true
    }

    /// True when the ETA moved by `etaStepS` or more, or came or went (null and a number differ
    /// by more than any step).
    private func etaMovedEnough(from old: Int?, to new: Int?) -> Bool {
        switch (old, new) {
        case (nil, nil): return false
        case (let a?, let b?): return abs(a - b) >= Self.etaStepS
        default: return true
        }
    }
}
