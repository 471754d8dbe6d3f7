import TrackHubCore

/// One subscription of a link for one stop (PROTOCOL 17), as the fan-out side keeps it: what
/// it was last told (`stop` messages, whether the courier was shown) and what it gets next.
/// It decides, the fan-out sends: each decision names messages the caller encodes once per
/// (trip, stop, visibility) and enqueues, so the order the contract asks for (`visible: true`
/// before the first frame or segment that shows the courier; the stop's event, then
/// `unsubscribed`) is kept in one place. Pure: the trip's sight and the clock are passed in.
struct StopLinkFollower: Sendable, Equatable {
    /// How the subscription receives the marker (PROTOCOL 4 `subscribe.mode`).
    enum Mode: Sendable, Equatable { case frames, segments }

    /// One thing to send, in order.
    enum Delivery: Sendable, Equatable {
        /// A `stop` message with this standing.
        case stop(StopMessageGate.Standing)
        /// The tick's frame (the courier is shown).
        case frame
        /// The rest of the running animation as a segment (the courier became shown mid-way).
        case remainingSegment
        /// A fix's segment (shown, and every point of its path clear).
        case segment
        /// `unsubscribed {reason: "arrived"}`: the stop was reached.
        case endArrived
    }

    /// The stop the link follows (a waypoint id, or the destination).
    let stop: StopRef
    /// From how many stops before its own the courier is shown.
    let visibleWithinStops: Int
    /// Frames or segments.
    let mode: Mode
    /// When the next `stop` message is due.
    private(set) var gate = StopMessageGate()
    /// Whether the courier was shown when last decided (a change sends a `stop` message).
    private(set) var wasShown = false
    /// True once `unsubscribed {reason: "arrived"}` was decided: nothing follows.
    private(set) var hasEnded = false
    /// Frames mode: its stop was reached (`waypoint_reached` fires within 50 m of it) while the
    /// marker still moves there; the frames up to the stop go out, then the end.
    private(set) var awaitsLastFrame = false

    /// A follower that has been told nothing yet.
    init(stop: StopRef, visibleWithinStops: Int, mode: Mode) {
        self.stop = stop
        self.visibleWithinStops = visibleWithinStops
        self.mode = mode
    }

    /// The standing a `stop` message reports for `sight` (`visible` false without a marker,
    /// which `shown` already says).
    static func standing(_ sight: StopLinkSight, etaS: Int?) -> StopMessageGate.Standing {
        StopMessageGate.Standing(stopsBefore: sight.stopsBefore, etaS: etaS, visible: sight.shown)
    }

    /// After a snapshot went out: its `stop` message always follows it.
    mutating func afterSnapshot(_ sight: StopLinkSight, etaS: Int?) -> [Delivery] {
        let standing = Self.standing(sight, etaS: etaS)
        gate.sentAfterSnapshot(standing)
        wasShown = sight.shown
        return [.stop(standing)]
    }

    /// A tick at `nowMs`: a `stop` message when due, then the frame (frames mode) or the rest
    /// of the animation (segments mode, when the courier just became shown and that rest's
    /// `remainingPath` qualifies); `hasFrame` says whether the tick produced one.
    mutating func onTick(_ sight: StopLinkSight, etaS: Int?, hasFrame: Bool, remainingPath: [GeoPoint]?, nowMs: Int64) -> [Delivery] {
        guard !hasEnded, !awaitsLastFrame else { return [] }
        var out: [Delivery] = []
        let becameShown = sight.shown && !wasShown
        let standing = Self.standing(sight, etaS: etaS)
        if gate.shouldSend(standing, nowMs: nowMs) { out.append(.stop(standing)) }
        wasShown = sight.shown
        guard sight.shown else { return out }
        switch mode {
        case .frames:
            if hasFrame { out.append(.frame) }
        case .segments:
            if becameShown, let path = remainingPath, StopVisibility.segmentQualifies(path: path, otherStops: sight.otherStops) {
                out.append(.remainingSegment)
            }
        }
        return out
    }

    /// A fix's segment with `path`, decided against the sight at the moment it is sent.
    mutating func onSegment(_ sight: StopLinkSight, etaS: Int?, path: [GeoPoint], nowMs: Int64) -> [Delivery] {
        guard !hasEnded, !awaitsLastFrame else { return [] }
        var out: [Delivery] = []
        let standing = Self.standing(sight, etaS: etaS)
        if gate.shouldSend(standing, nowMs: nowMs) { out.append(.stop(standing)) }
        wasShown = sight.shown
        if mode == .segments, sight.shown, StopVisibility.segmentQualifies(path: path, otherStops: sight.otherStops) {
            out.append(.segment)
        }
        return out
    }

    /// The stop was reached and its event went out. `waypoint_reached` fires within 50 m of
    /// the stop: in frames mode, while the marker still moves there, the end waits for the
    /// last frame there (`onTickAfterReached`); otherwise (segments mode: the segment to the
    /// stop went out already; or the marker is at rest) the end now.
    mutating func onReached(markerMoving: Bool = false) -> [Delivery] {
        guard !hasEnded else { return [] }
        if mode == .frames && markerMoving {
            awaitsLastFrame = true
            return []
        }
        hasEnded = true
        return [.endArrived]
    }

    /// Where the marker is, along the route, against the followed stop.
    enum Approach: Sendable, Equatable {
        /// Still short of it, moving.
        case short
        /// There (within a metre), or at rest short of it.
        case there
        /// Beyond it: nothing of that is the customer's.
        case past
    }

    /// A tick after its stop was reached, while it waits for the last frame: the frame (when
    /// the courier is shown and not past the stop), and the end once the marker is there or
    /// beyond.
    mutating func onTickAfterReached(shown: Bool, hasFrame: Bool, approach: Approach) -> [Delivery] {
        guard awaitsLastFrame, !hasEnded else { return [] }
        var out: [Delivery] = hasFrame && shown && approach != .past ? [.frame] : []
        if approach != .short {
            awaitsLastFrame = false
            hasEnded = true
            out.append(.endArrived)
        }
        return out
    }
}
