import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// The WebSocket ops of PROTOCOL section 3.
extension Hub {
    func handle(_ message: ClientMessage, re: MessageID?, from id: ConnectionID, now: Int64) {
        if let refusal = services.access.authorize(message, from: id, now: now) { return services.replies.sendError(to: id, re: re, refusal) }
        switch message {
        case .hello:
            services.fanout.enqueue(payload: ServerReplies.welcome(re: re, session: id.description, server: TrackHubVersion.serverName, tickHz: config.tickHz, fleetHz: config.fleetHz), to: id)
        case .ping:
            services.fanout.enqueue(payload: ServerReplies.pong(re: re, t: now), to: id)
        case .subscribe(let trip, let mode, let sinceEvent, let stop):
            // PROTOCOL 15: this hub applies the trip's partition while it has a subscriber.
            commands.usingTrip(trip, reply: .webSocket(id, re), now: now) { [self] in
                subscribe(id, trip: trip, mode: mode, sinceEvent: sinceEvent.map { Int(clamping: $0) }, stop: stop, re: re, now: now)
            }
        case .unsubscribe(let trip):
            services.fanout.unsubscribe(id, from: trip, slot: services.trips[trip]?.slot)
            services.fanout.enqueue(payload: ServerReplies.unsubscribed(re: re, trip: trip, reason: nil), to: id)
        case .fix(let trip, let fix):
            commands.usingTrip(trip, reply: .webSocket(id, re), now: now) { [self] in
                receiveFix(from: id, trip: trip, fix: fix, re: re, now: now)
            }
        case .proceed(let trip):
            commands.usingTrip(trip, reply: .webSocket(id, re), now: now) { [self] in
                commands.submit(.proceed(trip: trip), reply: .webSocket(id, re), now: now)
            }
        case .viewport(let viewport):
            services.fleet.setViewport(id, viewport: viewport, re: re)
        }
    }

    private func receiveFix(from id: ConnectionID, trip: String, fix: FixInput, re: MessageID?, now: Int64) {
        services.metrics.fixesIn += 1
        guard let session = services.fanout[id] else { return }
        if !session.takeFixToken(now: now, ratePerSecond: config.maxFixRate) {
            services.replies.sendError(to: id, re: re, ProtocolError(.rateLimited, "fix: more than \(config.maxFixRate) fixes per second on this connection"))
            return
        }
        commands.submit(.fixes(trip: trip, [fix]), reply: .webSocket(id, re), now: now)
    }
}
