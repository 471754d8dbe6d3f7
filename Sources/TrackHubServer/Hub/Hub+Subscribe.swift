import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// `subscribe` (PROTOCOL 3): the subscription starts at once, so no frame or event of the
/// trip is missed; its snapshot (with the trail) and replayed events are read on the
/// store-read queue, never on the service thread, into a place held in the connection's
/// queue, so everything sent to the trip meanwhile still comes after them. With `stop`
/// (PROTOCOL 17) the subscription follows that stop: its snapshot, frames and segments carry
/// the numbers to it; a stop the trip does not have is `not_found` naming `stop`. A link for
/// one stop always follows its own stop, and gets only what its rules show (`StopLinkFanout`).
extension Hub {
    func subscribe(
        _ id: ConnectionID, trip: String, mode: SubscriptionMode, sinceEvent: Int?, stop: StopRef? = nil, re: MessageID?, now: Int64
    ) {
        guard let session = services.fanout[id] else { return }
        var stop = stop
        var link: StopLinkFollower?
        if let granted = session.grants.stopLink(trip) {
            if let asked = stop, asked != granted.stop {
                services.replies.sendError(to: id, re: re, ProtocolError(.forbidden, "stop: this link follows stop \(granted.stop.wire) only"))
                return
            }
            stop = granted.stop
            link = StopLinkFollower(stop: granted.stop, visibleWithinStops: granted.visibleWithinStops, mode: mode == .segments ? .segments : .frames)
        }
        if let stop, services.trips[trip]?.trip.hasStop(stop) != true {
            services.replies.sendError(to: id, re: re, ProtocolError(.notFound, "stop: trip \(trip) has no stop \(stop.wire)"))
            return
        }
        if session.subscriptions[trip] == nil && session.subscriptions.count >= config.maxSubscriptions {
            services.replies.sendError(to: id, re: re, ProtocolError(.tooLarge, "subscribe: trip would exceed the limit of \(config.maxSubscriptions) subscriptions per connection"))
            return
        }
        if let previous = session.subscriptions[trip], previous != mode, let slot = services.trips[trip]?.slot {
            session.queue.removeFrames(ofSlot: slot)
        }
        let entry = services.trips[trip]
        let audience = ShareService.audience(of: session.grants, trip: trip)
        var recovered: Bool?
        var replayCount = 0
        if let sinceEvent {
            recovered = sinceEvent <= (entry?.trip.lastEventNumber ?? 0)
            // Only events already sent live: later ones are on their way as live messages.
            if recovered == true { replayCount = max(0, services.trips.lastEvent(of: trip) - sinceEvent) }
        }
        services.fanout.subscribe(id, to: trip, mode: mode, stop: stop, link: link)
        var segment: OutboundMessage?
        if link == nil, mode == .segments, let entry, entry.trip.isAnimating(at: now), let rest = entry.trip.remainingSegment(at: now) {
            let own = stop.map { entry.trip.segment(rest, towardStop: $0) } ?? rest
            segment = OutboundMessage.segment(trip: trip, seq: entry.segmentSeq, own, slot: entry.slot)
        }
        var view = TripView(id: trip, entry: entry, trail: [], now: now, audience: audience)
        view.stop = stop
        view.stopLinkVisibleWithinStops = link?.visibleWithinStops
        guard audience != .customer || replayCount > 0 else {
            // A customer's snapshot has no trail: nothing to read.
            services.fanout.enqueue(OutboundMessage.snapshot(view, re: re, recovered: recovered), to: id)
            if link != nil {
                for next in services.publisher.stopLinks.messagesAfterSnapshot(to: id, trip: trip, now: now) { services.fanout.enqueue(next, to: id) }
            }
            if let segment { services.fanout.enqueue(segment, to: id) }
            services.shares.endCustomerSubscriptionsIfOver(trip: trip, now: now)  // a trip already over (PROTOCOL 13)
            return
        }
        let (ticket, outcome) = session.queue.reserveSnapshot(of: trip)
        if outcome == .replacedReply { services.fanout.counters.repliesReplaced += 1 }
        let read = SubscribeRead(
            view: view, re: re, recovered: recovered, replayAfter: sinceEvent, replayCount: replayCount, segment: segment, ticket: ticket)
        if session.subscribeReads[trip] != nil {
            session.subscribeReads[trip]?.next = read  // read when the one in flight returns
            return
        }
        session.subscribeReads[trip] = SubscribeReads(reading: read)
        startSubscribeRead(read, for: id)
    }

    private func startSubscribeRead(_ read: SubscribeRead, for id: ConnectionID) {
        let trip = read.view.id
        let wantsTrail = read.view.audience != .customer
        let replayAfter = read.replayAfter, replayCount = read.replayCount
        services.storage.read({ store throws(StoreError) in
            let trail = wantsTrail ? try store.recentFixes(tripID: trip, count: 100).map(\.fix) : []
            var replay: [[UInt8]] = []
            if let replayAfter, replayCount > 0 { replay = try store.events(tripID: trip, after: replayAfter, limit: replayCount) }
            return SubscribeReadResult(trail: trail, replay: replay)
        }) { [self] result in
            guard let session = services.fanout[id], !session.isClosing, let reads = session.subscribeReads[trip] else { return }
            if let next = reads.next {
                // Subscribed again meanwhile: that one's answer replaced this one's place.
                session.subscribeReads[trip] = SubscribeReads(reading: next)
                return startSubscribeRead(next, for: id)
            }
            session.subscribeReads[trip] = nil
            answer(reads.reading, with: result, to: id)
        }
    }

    private func answer(_ read: SubscribeRead, with result: Result<SubscribeReadResult, StoreError>, to id: ConnectionID) {
        switch result {
        case .success(let found):
            var view = read.view
            view.trail = found.trail
            var messages = [OutboundMessage.snapshot(view, re: read.re, recovered: read.recovered)]
            // A customer's replay has no positions (PROTOCOL 13); live events keep theirs. A link
            // for one stop replays only its own events (PROTOCOL 17).
            let replay: [[UInt8]]
            if view.stopLinkVisibleWithinStops != nil, let stop = view.stop {
                replay = found.replay.compactMap { StopLinkMessages.event($0, for: stop, courierShown: false, otherStops: [])?.bytes }
            } else {
                replay = view.audience == .customer ? found.replay.compactMap(ServerMessages.eventWithoutPosition) : found.replay
            }
            messages += replay.map { OutboundMessage(payload: $0) }
            if view.stopLinkVisibleWithinStops != nil {
                messages += services.publisher.stopLinks.messagesAfterSnapshot(to: id, trip: view.id, now: services.clock.wallMillis())
            }
            if let segment = read.segment { messages.append(segment) }
            services.fanout.fillReservation(read.ticket, with: messages, for: id)
            if view.audience == .customer { services.shares.endCustomerSubscriptionsIfOver(trip: view.id, now: services.clock.wallMillis()) }
        case .failure(let error):
            // Not a snapshot without its trail, nor `recovered: true` without the events.
            services.fanout.unsubscribe(id, from: read.view.id, slot: services.trips[read.view.id]?.slot)
            let refusal = ProtocolError(.unavailable, "subscribe: the store could not be read (\(error)); try again")
            services.metrics.errorsOut[refusal.code.rawValue, default: 0] += 1
            services.fanout.fillReservation(read.ticket, with: [OutboundMessage(payload: ServerReplies.error(re: read.re, refusal))], for: id)
        }
    }
}
