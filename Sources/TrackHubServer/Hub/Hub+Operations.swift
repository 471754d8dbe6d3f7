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

    private func subscribe(_ id: ConnectionID, trip: String, mode: SubscriptionMode, sinceEvent: Int?, re: MessageID?, now: Int64) {
        guard let session = sessions[id] else { return }
        if session.subscriptions[trip] == nil && session.subscriptions.count >= config.maxSubscriptions {
            sendError(to: id, re: re, ProtocolError(.tooLarge, "subscribe: trip would exceed the limit of \(config.maxSubscriptions) subscriptions per connection"))
            return
        }
        if let previous = session.subscriptions[trip], previous != mode, let slot = trips[trip]?.slot {
            sessions[id]?.queue.removeFrames(ofSlot: slot)
        }
        let entry = trips[trip]
        let audience = audience(of: session.grants, trip: trip)
        let lastSent = trips.lastEvent(of: trip)
        var recovered: Bool?
        let trail: [StoredFix]
        var replay: [[UInt8]] = []
        do {
            trail = audience == .customer ? [] : try store.recentFixes(tripID: trip, count: 100)
            if let sinceEvent {
                if sinceEvent > (entry?.trip.lastEventNumber ?? 0) {
                    recovered = false
                } else {
                    recovered = true
                    // Only events already sent live: later ones are on their way as live messages.
                    let wanted = max(0, lastSent - sinceEvent)
                    if wanted > 0 {
                        replay = try store.events(tripID: trip, after: sinceEvent, limit: wanted)
                    }
                }
            }
        } catch {
            // Not a snapshot without its trail, nor `recovered: true` without the events.
            metrics.storeReadFailures += 1
            sendError(to: id, re: re, ProtocolError(.unavailable, "subscribe: the store could not be read (\(error)); try again"))
            return
        }
        addSubscriber(id, to: trip, mode: mode)
        let view = TripView(id: trip, entry: entry, trail: trail, now: now, audience: audience)
        enqueue(OutboundMessage.snapshot(view, re: re, recovered: recovered), to: id)
        for event in replay { enqueue(payload: event, to: id) }
        if mode == .segments, let entry, entry.trip.isAnimating(at: now), let rest = entry.trip.remainingSegment(at: now) {
            enqueue(OutboundMessage.segment(trip: trip, seq: entry.segmentSeq, rest, slot: entry.slot), to: id)
        }
        // A share link on a trip already over: its snapshot, then the end (PROTOCOL 13).
        if audience == .customer { endCustomerSubscriptionsIfOver(trip: trip, now: now) }
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
