import TrackHubCore
import TrackHubLWS
import TrackHubProtocol

/// Live delivery to links for one stop (PROTOCOL 17 "A link for one stop"): what each such
/// subscription gets of its trip's frames, segments and events, and its `stop` messages.
/// `Fanout.broadcast` skips these subscriptions; the publisher hands this type every frame,
/// segment and batch of events of a trip that has links here, and the hub's housekeeping
/// sweeps twice a second for what changes without them (an ETA drifting while the courier
/// holds at someone else's door). Each subscription's `StopLinkFollower` decides what it gets
/// and in which order; this type computes what it decides on and carries the decisions out.
///
/// Cost: for a trip without links, one dictionary lookup per frame, segment and event batch.
/// For a trip with links, per call: the sight (`Trip.stopLinkSight` without the route
/// stretch) and the stop's ETA once per distinct (stop, `visible_within_stops`); each `stop`
/// message encoded once per stop and standing, each event once per stop and visibility; the
/// frames and segments are the publisher's per-stop ones, already encoded once per stop.
///
/// Threads: the service thread only.
final class StopLinkFanout {
    private let trips: TripTable
    private let fanout: Fanout
    private let metrics: HubMetrics

    init(trips: TripTable, fanout: Fanout, metrics: HubMetrics) {
        self.trips = trips
        self.fanout = fanout
        self.metrics = metrics
    }

    /// Whether `trip` has links for one stop following it here.
    func hasLinks(_ trip: String) -> Bool { fanout.subscriptions.links(of: trip) != nil }

    // MARK: - What the publisher hands in

    /// A tick of `trip` ran: `frames` holds its frame per followed stop (empty when it made
    /// none). Links that are shown get theirs; every link gets a `stop` message when due.
    func afterTick(trip id: String, frames: [StopRef: OutboundMessage], now: Int64) {
        let trip = trips[id]?.trip
        deliver(trip: id, now: now, frames: frames) { link, look, rest in
            link.awaitsLastFrame
                ? link.onTickAfterReached(shown: look.sight.shown, hasFrame: frames[link.stop] != nil, approach: Self.approach(trip, link.stop, now))
                : link.onTick(look.sight, etaS: look.etaS, hasFrame: frames[link.stop] != nil, remainingPath: rest(), nowMs: now)
        }
    }

    /// Where the marker is against `stop` at `now` (after its `waypoint_reached`): there when
    /// every frame of its animation went out already (`wantsTick` false: not a clock
    /// comparison, so neither a tick still due nor a cluster's log time can end it early) or
    /// within a metre of the stop's along-route point, past beyond that.
    private static func approach(_ trip: Trip?, _ stop: StopRef, _ now: Int64) -> StopLinkFollower.Approach {
        guard let trip, trip.wantsTick else { return .there }
        guard let along = trip.marker(at: now)?.alongM, let stopAlong = trip.stopProgress(stop, now: now)?.alongM else { return .short }
        if along > stopAlong + 1 { return .past }
        return along >= stopAlong - 1 ? .there : .short
    }

    /// A segment of `trip` went to its other followers: `segments` holds it per followed stop
    /// and `path` is its path (the same for every stop). Shown links whose every point of
    /// `path` is clear of the other stops get theirs.
    func afterSegment(trip id: String, path: [GeoPoint], segments: [StopRef: OutboundMessage], now: Int64) {
        deliver(trip: id, now: now, segments: segments) { link, look, _ in
            link.onSegment(look.sight, etaS: look.etaS, path: path, nowMs: now)
        }
    }

    /// Stored events of `trip` went to its other followers: each link gets those of its own
    /// (`StopLinkMessages.event`), then a `stop` message when due; a link whose stop's
    /// `waypoint_reached` was among them ends there (`unsubscribed {reason: "arrived"}`). A
    /// link for the destination ends as every share link does, once the marker is there
    /// (`ShareService.endCustomerSubscriptionsIfOver`).
    func afterEvents(trip id: String, _ events: [(n: Int, payload: [UInt8])], now: Int64) {
        guard let links = fanout.subscriptions.links(of: id), let trip = trips[id]?.trip else { return }
        var looks = Looks(trip: trip, now: now)
        var encoded: [EventKey: StopLinkMessages.LinkEvent?] = [:]
        for (connection, var link) in links {
            guard let look = looks.look(link) else { continue }
            var reachedOwnStop = false
            for event in events {
                let key = EventKey(n: event.n, stop: link.stop, shown: look.sight.shown)
                let own = encoded[key] ?? StopLinkMessages.event(
                    event.payload, for: link.stop, courierShown: look.sight.shown, otherStops: look.sight.otherStops)
                encoded[key] = own
                guard let own else { continue }
                fanout.enqueue(payload: own.bytes, to: connection)
                metrics.eventsOut += 1
                reachedOwnStop = reachedOwnStop || own.isStopReached
            }
            let decided = reachedOwnStop
                ? link.onReached(markerMoving: trip.wantsTick)
                : link.onTick(
                    look.sight, etaS: look.etaS, hasFrame: false,
                    remainingPath: look.sight.shown && !link.wasShown ? looks.remainingPath(toward: link) : nil, nowMs: now)
            carryOut(decided, for: connection, link: link, trip: id, looks: &looks)
        }
    }

    /// Twice a second (the hub's housekeeping): a `stop` message to every link whose standing
    /// changed while no frame, segment or event of its trip came (a trip holding, pending, or
    /// between fixes with nobody ticking it).
    func sweep(now: Int64) {
        for id in Array(fanout.subscriptions.tripsWithLinks) {
            let trip = trips[id]?.trip
            deliver(trip: id, now: now) { link, look, rest in
                link.awaitsLastFrame
                    ? link.onTickAfterReached(shown: look.sight.shown, hasFrame: false, approach: Self.approach(trip, link.stop, now))
                    : link.onTick(look.sight, etaS: look.etaS, hasFrame: false, remainingPath: rest(), nowMs: now)
            }
        }
    }

    /// What follows a link's snapshot (subscribe, or a new route): its `stop` message; in
    /// segments mode, while shown, the rest of the running animation if every point of it is
    /// clear; and when its stop was reached already, the end. The caller queues them right
    /// after the snapshot; the subscription is removed here when it ended.
    func messagesAfterSnapshot(to connection: ConnectionID, trip id: String, now: Int64) -> [OutboundMessage] {
        guard var link = fanout.subscriptions.links(of: id)?[connection], let entry = trips[id] else { return [] }
        var looks = Looks(trip: entry.trip, now: now)
        guard let look = looks.look(link) else { return [] }
        var messages: [OutboundMessage] = []
        for delivery in link.afterSnapshot(look.sight, etaS: look.etaS) {
            if case .stop(let standing) = delivery { messages.append(stopMessage(trip: id, link.stop, standing)) }
        }
        if case .waypoint = link.stop, look.sight.reached {
            _ = link.onReached()
            fanout.unsubscribe(connection, from: id, slot: entry.slot, keepingQueuedFrames: true)
            messages.append(OutboundMessage(payload: ServerReplies.unsubscribed(re: nil, trip: id, reason: "arrived")))
            return messages
        }
        if link.mode == .segments, look.sight.shown, let rest = looks.remainingSegment(toward: link.stop),
           StopVisibility.segmentQualifies(path: rest.path, otherStops: look.sight.otherStops) {
            messages.append(OutboundMessage.segment(trip: id, seq: entry.segmentSeq, rest, slot: entry.slot))
        }
        fanout.updateLink(link, for: connection, trip: id)
        return messages
    }

    // MARK: - Carrying decisions out

    /// Runs `decide` for every link of `trip` with what it decides on, and carries its
    /// decisions out.
    private func deliver(
        trip id: String, now: Int64, frames: [StopRef: OutboundMessage] = [:], segments: [StopRef: OutboundMessage] = [:],
        _ decide: (inout StopLinkFollower, Look, () -> [GeoPoint]?) -> [StopLinkFollower.Delivery]
    ) {
        guard let links = fanout.subscriptions.links(of: id), let trip = trips[id]?.trip else { return }
        var looks = Looks(trip: trip, now: now)
        for (connection, var link) in links {
            guard let look = looks.look(link) else { continue }
            // The rest of the animation matters only to a link that becomes shown now.
            let becomesShown = look.sight.shown && !link.wasShown, before = link
            let decided = decide(&link, look) { becomesShown ? looks.remainingPath(toward: before) : nil }
            carryOut(decided, for: connection, link: link, trip: id, looks: &looks, frames: frames, segments: segments)
        }
    }

    /// Queues what a link's follower decided, in order, and keeps its new state (or removes the
    /// subscription at its end).
    private func carryOut(
        _ decided: [StopLinkFollower.Delivery], for connection: ConnectionID, link: StopLinkFollower, trip id: String,
        looks: inout Looks, frames: [StopRef: OutboundMessage] = [:], segments: [StopRef: OutboundMessage] = [:]
    ) {
        for delivery in decided {
            switch delivery {
            case .stop(let standing):
                fanout.enqueue(stopMessage(trip: id, link.stop, standing), to: connection)
            case .frame:
                guard let frame = frames[link.stop] else { continue }
                fanout.enqueue(frame, to: connection)
                metrics.framesOut += 1
            case .segment:
                guard let segment = segments[link.stop] else { continue }
                fanout.enqueue(segment, to: connection)
                metrics.segmentsOut += 1
            case .remainingSegment:
                guard let entry = trips[id], let rest = looks.remainingSegment(toward: link.stop) else { continue }
                fanout.enqueue(OutboundMessage.segment(trip: id, seq: entry.segmentSeq, rest, slot: entry.slot), to: connection)
                metrics.segmentsOut += 1
            case .endArrived:
                fanout.unsubscribe(connection, from: id, slot: trips[id]?.slot, keepingQueuedFrames: true)
                fanout.enqueue(payload: ServerReplies.unsubscribed(re: nil, trip: id, reason: "arrived"), to: connection)
                return
            }
        }
        fanout.updateLink(link, for: connection, trip: id)
    }

    /// A `stop` message `{trip, stop, stops_before, eta_s, visible}`.
    private func stopMessage(trip: String, _ stop: StopRef, _ standing: StopMessageGate.Standing) -> OutboundMessage {
        OutboundMessage(payload: StopLinkMessages.stop(
            trip: trip, stop: stop.wire, stopsBefore: standing.stopsBefore, etaS: standing.etaS, visible: standing.visible))
    }

    // MARK: - What decisions are made on

    /// One event as one stop's links see it, with the courier shown or not.
    private struct EventKey: Hashable {
        let n: Int
        let stop: StopRef
        let shown: Bool
    }

    /// What a link decides on: what it may see and its stop's ETA (`eta_s` as the snapshot's
    /// `stop` object writes it).
    struct Look {
        let sight: StopLinkSight
        let etaS: Int?
    }

    /// The trip as links see it at one moment, each thing computed once per call.
    private struct Looks {
        let trip: Trip
        let now: Int64
        private var sights: [SightKey: Look?] = [:]
        private var rests: [StopRef: TripSegment?] = [:]

        init(trip: Trip, now: Int64) {
            self.trip = trip
            self.now = now
        }

        /// Links showing the courier from the same number of stops before the same stop see the same.
        private struct SightKey: Hashable {
            let stop: StopRef
            let within: Int
        }

        /// What `link` sees now; nil when the trip no longer has its stop.
        mutating func look(_ link: StopLinkFollower) -> Look? {
            let key = SightKey(stop: link.stop, within: link.visibleWithinStops)
            if let known = sights[key] { return known }
            let look = trip.stopLinkSight(link.stop, visibleWithinStops: link.visibleWithinStops, at: now, withRoute: false).map {
                Look(sight: $0, etaS: trip.stopProgress(link.stop, now: now)?.etaS.map { Int($0) })
            }
            sights[key] = look
            return look
        }

        /// The rest of the running animation with its numbers taken to `stop`; nil when the
        /// marker is not moving.
        mutating func remainingSegment(toward stop: StopRef) -> TripSegment? {
            if let known = rests[stop] { return known }
            let rest = trip.isAnimating(at: now) ? trip.remainingSegment(at: now).map { trip.segment($0, towardStop: stop) } : nil
            rests[stop] = rest
            return rest
        }

        /// The path of that rest for a segments-mode link (what it would be sent on becoming
        /// shown); nil for a frames-mode one, which never gets it.
        mutating func remainingPath(toward link: StopLinkFollower) -> [GeoPoint]? {
            link.mode == .segments ? remainingSegment(toward: link.stop)?.path : nil
        }
    }
}
