import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// The WebSocket ops of PROTOCOL section 3.
extension Hub {
    func handle(_ message: ClientMessage, re: MessageID?, from id: ConnectionID, now: Int64) {
        if let refusal = authorize(message, from: id, now: now) { return sendError(to: id, re: re, refusal) }
        switch message {
        case .hello:
            enqueue(payload: ServerReplies.welcome(re: re, session: id.description, server: serverName, tickHz: config.tickHz, fleetHz: config.fleetHz), to: id)
        case .ping:
            enqueue(payload: ServerReplies.pong(re: re, t: now), to: id)
        case .subscribe(let trip, let mode, let sinceEvent):
            subscribe(id, trip: trip, mode: mode, sinceEvent: sinceEvent.map { Int(clamping: $0) }, re: re, now: now)
        case .unsubscribe(let trip):
            removeSubscriber(id, from: trip)
            enqueue(payload: ServerReplies.unsubscribed(re: re, trip: trip, reason: nil), to: id)
        case .fix(let trip, let fix):
            receiveFix(from: id, trip: trip, fix: fix, re: re, now: now)
        case .proceed(let trip):
            commands.submit(.proceed(trip: trip), reply: .webSocket(id, re), now: now)
        case .viewport(let viewport):
            setViewport(id, viewport: viewport, re: re)
        }
    }

    /// `subscribe` (PROTOCOL 3): the snapshot, the events replayed after `since_event`, then
    /// live messages. The trail and the replayed events are read off the service thread; until
    /// they are back, the connection's further messages wait (`Session.heldMessages`), so its
    /// answers keep their order, and the trip's events sent meanwhile are kept for it
    /// (`PendingSubscribe.heldEvents`), so none is missed or sent twice.
    private func subscribe(_ id: ConnectionID, trip: String, mode: SubscriptionMode, sinceEvent: Int?, re: MessageID?, now: Int64) {
        guard let session = sessions[id] else { return }
        if session.subscriptions[trip] == nil && session.subscriptions.count >= config.maxSubscriptions {
            sendError(to: id, re: re, ProtocolError(.tooLarge, "subscribe: trip would exceed the limit of \(config.maxSubscriptions) subscriptions per connection"))
            return
        }
        // A new subscription replaces the old one (a mode change): it starts again from its snapshot.
        removeSubscriber(id, from: trip)
        let lastSent = lastBroadcastEvent[trip] ?? 0
        var recovered: Bool?
        var wanted = 0
        if let sinceEvent {
            recovered = sinceEvent <= (trips[trip]?.trip.lastEventNumber ?? 0)
            // Only events already sent live: later ones reach it live (or held, below).
            if recovered == true { wanted = max(0, lastSent - sinceEvent) }
        }
        let replayCount = wanted
        let answerRecovered = recovered
        session.heldMessages = []
        pendingSubscribes[trip, default: [:]][id] = PendingSubscribe(heldEvents: [])
        readFromStore({ store throws(StoreError) in
            let trail = try store.recentFixes(tripID: trip, count: 100)
            let replay = replayCount > 0 ? try store.events(tripID: trip, after: sinceEvent ?? 0, limit: replayCount) : []
            return (trail, replay)
        }) { [self] result in
            let pending = pendingSubscribes[trip]?.removeValue(forKey: id)
            if pendingSubscribes[trip]?.isEmpty == true { pendingSubscribes[trip] = nil }
            guard let pending, let session = sessions[id] else { return }  // closed meanwhile
            switch result {
            case .failure(let error):
                // Not a snapshot without its trail, nor `recovered: true` without the events.
                sendError(to: id, re: re, ProtocolError(.unavailable, "subscribe: the store could not be read (\(error)); try again"))
            case .success(let (trail, replay)):
                let now = wallClockMillis()
                let entry = trips[trip]
                addSubscriber(id, to: trip, mode: mode)
                enqueue(OutboundMessage.snapshot(TripView(id: trip, entry: entry, trail: trail, now: now), re: re, recovered: answerRecovered), to: id)
                for event in replay + pending.heldEvents { enqueue(payload: event, to: id) }
                if mode == .segments, let entry, entry.trip.isAnimating(at: now), let rest = entry.trip.remainingSegment(at: now) {
                    enqueue(OutboundMessage.segment(trip: trip, seq: entry.segmentSeq, rest, slot: entry.slot), to: id)
                }
            }
            releaseHeldMessages(of: session)
        }
    }

    private func receiveFix(from id: ConnectionID, trip: String, fix: FixInput, re: MessageID?, now: Int64) {
        metrics.fixesIn += 1
        guard let session = sessions[id] else { return }
        if !session.takeFixToken(now: now, ratePerSecond: config.maxFixRate) {
            sendError(to: id, re: re, ProtocolError(.rateLimited, "fix: more than \(config.maxFixRate) fixes per second on this connection"))
            return
        }
        commands.submit(.fixes(trip: trip, [fix]), reply: .webSocket(id, re), now: now)
    }
}
