import TrackHubCore
import TrackHubLWS

/// A trip's segments and frames held back while events that must come before them are
/// stored (PROTOCOL 18: `signal_back` before any frame or segment of the fix that ended the
/// silence; PROTOCOL 7: an event is stored before it is sent).
///
/// A hub alone needs none of this: it applies such a fix only once its events went out.
/// A cluster applies a fix at its log time, at once (every node must number its segment
/// and tick it alike), while the node's own store still has the events to write: so the
/// trip's new segments wait here, in order, and its frames (latest-wins, PROTOCOL 7) keep
/// only the newest, until the events are sent.
struct HeldLive {
    /// Event batches ahead of the held messages, not yet stored and sent.
    var batchesAhead = 0
    /// Segments in the order they were made, at most `TripPublisher.maxHeldSegments`.
    var segments: [LiveMessage] = []
    /// The newest frame made meanwhile.
    var frame: LiveMessage?
}

/// A frame or segment as its trip's followers get it: `message` for those who follow the
/// whole trip, `perStop` for those who follow one stop (PROTOCOL 17; empty without any).
struct LiveMessage {
    /// The trip's own.
    var message: OutboundMessage
    /// Encoded once per distinct stop followed.
    var perStop: [StopRef: OutboundMessage]
    /// A segment's path (what a link for one stop checks against the other stops); empty for a frame.
    var path: [GeoPoint] = []
}

extension TripPublisher {
    /// Most segments held for one trip; past it the oldest is dropped (segments are
    /// latest-wins, PROTOCOL 7: a subscriber may lose intermediate ones, never events).
    static let maxHeldSegments = 64

    /// Stores a trip's state with `events` and sends them, holding the trip's segments and
    /// frames made meanwhile; those go out right after the events (or once the store
    /// refused them: the positions are not held forever).
    func storeAndSendAhead(_ events: [TripEvent], trip: String) {
        guard !events.isEmpty, trips[trip] != nil else { return }
        heldLive[trip, default: HeldLive()].batchesAhead += 1
        storeStateAndSend(events, trip: trip) { [self] _ in releaseHeld(trip: trip) }
    }

    /// Keeps a segment back if its trip is held; false when it is not (send it now).
    func holdSegment(_ live: LiveMessage, trip: String) -> Bool {
        guard heldLive[trip] != nil else { return false }
        heldLive[trip]?.segments.append(live)
        if let count = heldLive[trip]?.segments.count, count > Self.maxHeldSegments {
            heldLive[trip]?.segments.removeFirst(count - Self.maxHeldSegments)
        }
        return true
    }

    /// Keeps a frame back (the newest replaces an older one) for a held trip.
    func holdFrame(_ live: LiveMessage, trip: String) {
        heldLive[trip]?.frame = live
    }

    /// One batch of events ahead went out (or failed): after the last, the held segments
    /// in order, then the newest frame.
    private func releaseHeld(trip: String) {
        guard var held = heldLive[trip] else { return }
        held.batchesAhead -= 1
        guard held.batchesAhead <= 0 else {
            heldLive[trip] = held
            return
        }
        heldLive[trip] = nil
        let now = clock.wallMillis()
        for segment in held.segments { sendSegment(segment, trip: trip, now: now) }
        if let frame = held.frame { sendFrame(frame, trip: trip, now: now) }
    }
}
