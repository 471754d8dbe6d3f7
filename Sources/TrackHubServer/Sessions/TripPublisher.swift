import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// What subscribers of a trip are sent when it changes: a committed fix's segment, a tick's
/// frame, events (stored first: PROTOCOL 7), a fresh snapshot after a create or a new route.
/// Each message is encoded once and broadcast through the fan-out; events also go to the
/// webhooks, and share subscriptions end after `arrived` (PROTOCOL 13).
///
/// Both command logs publish through it, so what a subscriber sees is the same whichever log
/// made the change durable. It never calls the log back: what the log must know (that a trip
/// started moving) it returns.
///
/// Threads: the service thread only; `@unchecked Sendable` because store completions (run
/// there through the inbox) capture it.
final class TripPublisher: @unchecked Sendable {
    /// The trips whose changes it sends.
    let trips: TripTable
    /// Where every message to subscribers goes.
    let fanout: Fanout
    private let storage: TripStorage
    /// The counters of what went out.
    let metrics: HubMetrics
    /// The hub's clock: when events and held messages go out.
    let clock: HubClock
    /// Whether events are kept in each trip's memory too (a cluster's snapshots replay them).
    var keepsRecentEvents = false
    /// Delivers events to `--webhook` URLs (set when the hub starts, nil without webhooks).
    var webhooks: WebhookDispatcher?
    /// Ends share subscriptions of a trip that arrived or ended (PROTOCOL 13; the share links'
    /// rule, set by the hub).
    var endCustomerSubscriptionsIfOver: (_ trip: String, _ now: Int64) -> Void = { _, _ in }
    /// Called after a new route dropped stops (PROTOCOL 17: what follows them ends with
    /// `stop_removed`), with the trip and the dropped waypoint ids, once its stop
    /// subscriptions are ended: the hook for stop links.
    var stopsRemoved: (_ trip: String, _ removed: [String]) -> Void = { _, _ in }
    /// What links for one stop get (PROTOCOL 17): every frame, segment and event batch of a
    /// trip with such links goes through it too (`Fanout.broadcast` skips them).
    let stopLinks: StopLinkFanout
    /// Trips whose segments and frames wait for events being stored (TripPublisher+Ahead):
    /// only while such a batch is in flight, so empty nearly always.
    var heldLive: [String: HeldLive] = [:]

    init(trips: TripTable, fanout: Fanout, storage: TripStorage, metrics: HubMetrics, clock: HubClock) {
        self.trips = trips
        self.fanout = fanout
        self.storage = storage
        self.metrics = metrics
        self.clock = clock
        self.stopLinks = StopLinkFanout(trips: trips, fanout: fanout, metrics: metrics)
    }

    // MARK: - Fixes and ticks

    /// Animates a stored, applied fix from `now` and sends its segment. `receivedAt` is when
    /// it reached the hub (the log entry's time in cluster mode, so every node computes the
    /// same clock ratio). Returns true when the fix gave the trip a segment: it moves now,
    /// and the caller's schedule must tick it.
    @discardableResult
    func applyCommittedFix(trip: String, fix: FixInput, now: Int64, receivedAt: Int64) -> Bool {
        guard let (segment, events, seq, slot) = trips.mutate(trip, { entry in
            let (segment, events) = entry.trip.apply(fix, now: now, receivedAt: receivedAt)
            if let segment {
                entry.segmentSeq += 1
                entry.lastSegment = segment
            }
            return (segment, events, entry.segmentSeq, entry.slot)
        }) else { return false }
        trips.animating.wake(trip)  // its next event may come sooner now (TickSchedule.doze)
        metrics.fixesApplied += 1
        if let segment {
            let message = OutboundMessage.segment(trip: trip, seq: seq, segment, slot: slot)
            let live = LiveMessage(message: message, perStop: stopSegments(trip: trip, seq: seq, segment, slot: slot), path: segment.path)
            if !heldLive.isEmpty, holdSegment(live, trip: trip) {
                // Sent once the events ahead of it are (TripPublisher+Ahead).
            } else {
                sendSegment(live, trip: trip, now: now)
            }
        }
        if events.isEmpty {
            // Only the marker moved: its state is written with the next flush of changed
            // trips (every 100 ms), not in a store batch of its own per fix.
            trips.markStateUnstored(trip)
        } else {
            storeStateAndSend(events, trip: trip)
        }
        return segment != nil
    }

    /// A tick's frame to the trip's frame-mode subscribers (encoded once), then its events.
    func sendTickResult(trip id: String, frame: TripFrame?, seq: Int, slot: Int, events: [TripEvent], now: Int64) {
        sendTickResult(trip: id, frame: frame, framedStatus: frame?.status, seq: seq, slot: slot, events: events, now: now)
    }

    /// Who would take a tick's frame of `trip`, looked up once before the tick (which builds
    /// the frame only when someone does): its followers, and whether any of them, a link for
    /// one stop or a held live message wants frames.
    func frameTakers(of id: String) -> FrameTakers {
        let followers = fanout.subscriptions.followers(of: id)
        let wanted = (!heldLive.isEmpty && heldLive[id] != nil) || followers?.values.contains(.frames) == true || stopLinks.hasLinks(id)
        return FrameTakers(followers: followers, wantFrames: wanted)
    }

    /// What `frameTakers` found.
    struct FrameTakers {
        let followers: [ConnectionID: SubscriptionMode]?
        let wantFrames: Bool
    }

    /// A tick's outcome: `frame` when one was built, `framedStatus` the status of the frame
    /// that went out or would have (`Trip.tickUnframed`: nobody takes frames, none was built),
    /// `takers` when the tick looked them up already.
    func sendTickResult(
        trip id: String, frame: TripFrame?, framedStatus: TripStatus?, takers: FrameTakers? = nil,
        seq: Int, slot: Int, events: [TripEvent], now: Int64
    ) {
        if let takers, !takers.wantFrames {
            // Nobody takes frames (no held message, no frame follower, no stop link): nothing to send.
        } else if let frame, !heldLive.isEmpty, heldLive[id] != nil {
            holdFrame(
                LiveMessage(message: OutboundMessage.frame(trip: id, seq: seq, frame, slot: slot),
                            perStop: stopFrames(trip: id, seq: seq, frame, slot: slot)), trip: id)
        } else if let frame, let followers = takers?.followers ?? fanout.subscriptions.followers(of: id), followers.values.contains(.frames) {
            let live = LiveMessage(message: OutboundMessage.frame(trip: id, seq: seq, frame, slot: slot),
                                   perStop: stopFrames(trip: id, seq: seq, frame, slot: slot))
            sendFrame(live, to: followers, trip: id, now: now)
        } else if stopLinks.hasLinks(id) {
            stopLinks.afterTick(trip: id, frames: [:], now: now)  // no frame: `stop` messages when due
        }
        // The last frame of an arrived trip (at the destination) ends its share subscriptions.
        if framedStatus == .arrived { endCustomerSubscriptionsIfOver(id, now) }
        if !events.isEmpty {
            sendArrivalSegmentIfArrived(events, trip: id, now: now)
            storeStateAndSend(events, trip: id)
        }
    }

    /// PROTOCOL 6.7: on `arrived` the marker goes on to the destination; segment subscribers
    /// get that move as a segment (one point at the destination when it is there already), so
    /// their last segment too ends at the destination with progress 1.
    func sendArrivalSegmentIfArrived(_ events: [TripEvent], trip id: String, now: Int64) {
        guard events.contains(where: { $0.kind == .arrived }) else { return }
        guard let (segment, seq, slot) = trips.mutate(id, { entry -> (TripSegment, Int, Int)? in
            guard let segment = entry.trip.currentSegment(at: now) else { return nil }
            entry.segmentSeq += 1
            entry.lastSegment = segment
            return (segment, entry.segmentSeq, entry.slot)
        }) ?? nil else { return }
        let live = LiveMessage(
            message: OutboundMessage.segment(trip: id, seq: seq, segment, slot: slot),
            perStop: stopSegments(trip: id, seq: seq, segment, slot: slot), path: segment.path)
        if !heldLive.isEmpty, holdSegment(live, trip: id) { return }
        sendSegment(live, trip: id, now: now)
    }

    /// A segment to the trip's segment-mode followers, and to its links for one stop as
    /// their rules say.
    func sendSegment(_ live: LiveMessage, trip id: String, now: Int64) {
        metrics.segmentsOut += fanout.broadcast(live.message, trip: id, mode: .segments, perStop: live.perStop)
        if stopLinks.hasLinks(id) { stopLinks.afterSegment(trip: id, path: live.path, segments: live.perStop, now: now) }
    }

    /// A frame to the trip's frame-mode `followers` (nil: look them up), and to its links for
    /// one stop as their rules say.
    func sendFrame(_ live: LiveMessage, to followers: [ConnectionID: SubscriptionMode]? = nil, trip id: String, now: Int64) {
        metrics.framesEncoded += 1 + live.perStop.count
        if let followers = followers ?? fanout.subscriptions.followers(of: id) {
            metrics.framesOut += fanout.broadcast(live.message, to: followers, mode: .frames, trip: id, perStop: live.perStop)
        }
        if stopLinks.hasLinks(id) { stopLinks.afterTick(trip: id, frames: live.perStop, now: now) }
    }

    // MARK: - Events

    /// Stores a trip's state with its new events, then sends the events (PROTOCOL 7: an
    /// event is stored before it is sent). `then` runs after the events went out.
    func storeStateAndSend(_ events: [TripEvent], trip: String, then: (@Sendable (Result<Void, StoreError>) -> Void)? = nil) {
        guard let entry = trips[trip] else { return }
        trips.markStateStored(trip)
        var records: [StoreRecord] = [.tripState(entry.trip.withoutSeenFixes, createdAt: entry.createdAt, riderJSON: entry.riderJSON)]
        let encoded = events.map { ServerMessages.event(trip: trip, $0) }
        if keepsRecentEvents, !encoded.isEmpty {
            // Kept for snapshots: a node that starts from one replays these with since_event.
            trips.mutate(trip) { entry in
                entry.recentEvents.append(contentsOf: encoded)
                if entry.recentEvents.count > TripEntry.recentEventsKept {
                    entry.recentEvents.removeFirst(entry.recentEvents.count - TripEntry.recentEventsKept)
                }
            }
        }
        for (event, payload) in zip(events, encoded) {
            records.append(.event(tripID: trip, n: event.n, encoded: payload))
        }
        storage.persist(records) { [self] result in
            if case .success = result {
                sendEvents(zip(events, encoded).map { ($0.n, $1) }, trip: trip)
            }
            then?(result)
        }
    }

    /// Sends stored events to every subscriber of the trip, in order, and to the webhooks.
    func sendEvents(_ events: [(n: Int, payload: [UInt8])], trip: String) {
        for event in events {
            let message = OutboundMessage(payload: event.payload)
            if let hidden = ServerMessages.eventWithoutBattery(event.payload) {
                metrics.eventsOut += broadcastHidingBattery(message, customers: OutboundMessage(payload: hidden), trip: trip)
            } else {
                metrics.eventsOut += fanout.broadcast(message, trip: trip)
            }
            trips.noteEventSent(event.n, trip: trip)
        }
        let now = clock.wallMillis()
        if stopLinks.hasLinks(trip) { stopLinks.afterEvents(trip: trip, events, now: now) }  // their own only (PROTOCOL 17)
        endCustomerSubscriptionsIfOver(trip, now)  // after `arrived` (PROTOCOL 13)
        webhooks?.eventsStored(events, trip: trip)
    }

    /// An event with the phone's battery: share links' subscribers get `customers` (its
    /// battery `null`, PROTOCOL 18), everyone else `message`; links for one stop nothing here
    /// (`StopLinkFanout`). Returns the messages queued.
    private func broadcastHidingBattery(_ message: OutboundMessage, customers: OutboundMessage, trip: String) -> Int {
        guard let followers = fanout.subscriptions.followers(of: trip) else { return 0 }
        let links = fanout.subscriptions.links(of: trip)
        for (connection, _) in followers where links?[connection] == nil {
            let seesAsCustomer = fanout[connection]?.grants.seesAsCustomer(trip) ?? false
            fanout.enqueue(seesAsCustomer ? customers : message, to: connection)
        }
        return followers.count - (links?.count ?? 0)
    }

    // MARK: - Snapshots

    /// A fresh snapshot to every subscriber (after creation or a new route); share
    /// subscribers get the customer's view of it (PROTOCOL 13), encoded once for all of them.
    /// The others' snapshot carries the trail, read once on the store-read queue into a place
    /// held in each one's queue (what is sent to the trip meanwhile comes after it). The
    /// command already stands: a failed read is logged and the snapshot goes without a trail.
    func sendSnapshotToSubscribers(trip id: String, now: Int64) {
        guard let followers = fanout.subscriptions.followers(of: id), !followers.isEmpty else { return }
        var view = TripView(id: id, entry: trips[id], trail: [], now: now)
        // One encoding per stop followed (PROTOCOL 17; nil: the whole trip), and per stop and
        // visible_within_stops for links for one stop.
        var customerMessages: [StopRef?: OutboundMessage] = [:]
        var linkMessages: [LinkViewKey: OutboundMessage] = [:]
        let links = fanout.subscriptions.links(of: id)
        var reserved: [(connection: ConnectionID, ticket: UInt64, stop: StopRef?)] = []
        for (connection, _) in followers {
            guard let session = fanout[connection], !session.isClosing else { continue }
            let stop = fanout.subscriptions.stop(of: connection, trip: id)
            if let link = links?[connection] {
                let key = LinkViewKey(stop: link.stop, visibleWithinStops: link.visibleWithinStops)
                let message = linkMessages[key] ?? OutboundMessage.snapshot(view.forStopLink(key), re: nil, recovered: nil)
                linkMessages[key] = message
                fanout.enqueue(message, to: connection)
                for next in stopLinks.messagesAfterSnapshot(to: connection, trip: id, now: now) { fanout.enqueue(next, to: connection) }
                continue
            }
            if session.grants.seesAsCustomer(id) {
                view.audience = .customer
                view.stop = stop
                let message = customerMessages[stop] ?? OutboundMessage.snapshot(view, re: nil, recovered: nil)
                customerMessages[stop] = message
                view.audience = .full
                view.stop = nil
                fanout.enqueue(message, to: connection)
                continue
            }
            let (ticket, outcome) = session.queue.reserveSnapshot(of: id, reply: false)
            if outcome == .replacedReply { fanout.counters.repliesReplaced += 1 }
            reserved.append((connection, ticket, stop))
        }
        guard !reserved.isEmpty else { return }
        let fullView = view, waiting = reserved
        storage.read({ store throws(StoreError) in try store.recentFixes(tripID: id, count: 100).map(\.fix) }) { [self] result in
            var view = fullView
            switch result {
            case .success(let trail): view.trail = trail
            case .failure(let error): logWarning("trip \(id): its trail could not be read for a snapshot (\(error)); sent without it")
            }
            var messages: [StopRef?: OutboundMessage] = [:]
            for (connection, ticket, stop) in waiting {
                view.stop = stop
                let message = messages[stop] ?? OutboundMessage.snapshot(view, re: nil, recovered: nil)
                messages[stop] = message
                fanout.fillReservation(ticket, with: [message], for: connection)
            }
        }
    }
}
