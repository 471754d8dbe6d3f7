import Dispatch
import TrackHubCore
import TrackHubLWS
import TrackHubProtocol
import TrackHubStore

/// What a fix does once it is durable (animate, answer), events stored before they are
/// sent, and the store's batches and reads. The path to durability is the command log's
/// (LocalCommandLog+Fixes, RedisCommandLog+Apply). PROTOCOL 7: nothing is acked or shown
/// before it is stored.
extension Hub {
    /// Store reads that must not block the service thread.
    static let storeReadQueue = DispatchQueue(label: "trackhub.store-read", qos: .userInitiated)

    /// Runs `read` on the store-read queue and `then` with its result on the service thread
    /// (service thread only). The drain waits for reads in flight (`holdsDrain`), so their
    /// answers still go out. A failure is counted.
    func readFromStore<Value: Sendable>(
        _ read: @escaping @Sendable (TripStore) throws(StoreError) -> Value,
        holdsDrain: Bool = true,
        then: @escaping @Sendable (Result<Value, StoreError>) -> Void
    ) {
        if holdsDrain { storeReadsInFlight += 1 }
        let store = store
        Hub.storeReadQueue.async { [self] in
            let result = Result(catching: { () throws(StoreError) in try read(store) })
            inbox.run { [self] in
                if holdsDrain { storeReadsInFlight -= 1 }
                if case .failure = result { metrics.storeReadFailures += 1 }
                then(result)
            }
        }
    }

    /// Animates a stored, applied fix from `now`. `receivedAt` is when it reached the hub (the
    /// log entry's time in cluster mode, so every node computes the same clock ratio).
    func applyCommittedFix(trip: String, fix: FixInput, now: Int64, receivedAt: Int64) {
        guard let (segment, events, seq, slot) = trips.mutate(trip, { entry in
            let (segment, events) = entry.trip.apply(fix, now: now, receivedAt: receivedAt)
            if let segment {
                entry.segmentSeq += 1
                entry.lastSegment = segment
            }
            return (segment, events, entry.segmentSeq, entry.slot)
        }) else { return }
        metrics.fixesApplied += 1
        if let segment {
            commands.tripStartedMoving(trip, at: now, byFix: true)
            let message = OutboundMessage.segment(trip: trip, seq: seq, segment, slot: slot)
            metrics.segmentsOut += fanout.broadcast(message, trip: trip, mode: .segments)
        }
        if events.isEmpty {
            // Only the marker moved: its state is written with the next flush of changed
            // trips (every 100 ms), not in a store batch of its own per fix.
            trips.markStateUnstored(trip)
        } else {
            storeStateAndSend(events, trip: trip)
        }
    }

    /// Stores a trip's state with its new events, then sends the events (PROTOCOL 7: an
    /// event is stored before it is sent). `then` runs after the events went out.
    func storeStateAndSend(_ events: [TripEvent], trip: String, then: (@Sendable (Result<Void, StoreError>) -> Void)? = nil) {
        guard let entry = trips[trip] else { return }
        trips.markStateStored(trip)
        var records: [StoreRecord] = [.tripState(entry.trip.withoutSeenFixes, createdAt: entry.createdAt, riderJSON: entry.riderJSON)]
        let encoded = events.map { ServerMessages.event(trip: trip, $0) }
        if commands.keepsRecentEvents, !encoded.isEmpty {
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
        persist(records) { [self] result in
            if case .success = result {
                sendEvents(zip(events, encoded).map { ($0.n, $1) }, trip: trip)
            }
            then?(result)
        }
    }

    /// Writes the state of every trip changed since the last flush, in one batch.
    func flushChangedTripStates() {
        guard !trips.unstoredState.isEmpty else { return }
        let changed = trips.takeUnstoredStates()
        var records: [StoreRecord] = []
        records.reserveCapacity(changed.count)
        for id in changed {
            guard let entry = trips[id] else { continue }
            records.append(.tripState(entry.trip.withoutSeenFixes, createdAt: entry.createdAt, riderJSON: entry.riderJSON))
        }
        persist(records) { _ in }
    }

    /// Sends stored events to every subscriber of the trip, in order.
    func sendEvents(_ events: [(n: Int, payload: [UInt8])], trip: String) {
        for event in events {
            let message = OutboundMessage(payload: event.payload)
            metrics.eventsOut += fanout.broadcast(message, trip: trip)
            trips.noteEventSent(event.n, trip: trip)
        }
        shares.endCustomerSubscriptionsIfOver(trip: trip, now: clock.wallMillis())  // after `arrived` (PROTOCOL 13)
        webhookEventsStored(events, trip: trip)
    }

    /// Appends a batch to the store; `then` runs on the service thread once it committed or failed.
    func persist(_ records: [StoreRecord], then: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        storeBatchesInFlight += 1
        let submitted = systemMonotonicMicros()
        store.append(records) { [self] result in
            inbox.run { [self] in
                metrics.storeCommit.observe(ms: (systemMonotonicMicros() - submitted) / 1000)
                storeBatchesInFlight -= 1
                if case .failure = result { metrics.storeFailures += 1 }
                then(result)
            }
        }
    }
}
