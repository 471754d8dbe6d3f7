import TrackHubCore
import TrackHubProtocol
import TrackHubStore

/// A trip's fixes on their way to the store (LocalCommandLog). The invariant it keeps: at
/// most one batch per trip is being stored, so a batch the store refuses can be undone
/// exactly (its fixes are forgotten and judged afresh when resent).
struct FixQueue {
    /// Fixes from one request (a `fix` op, or an HTTP batch) and where their acks go.
    struct Request {
        var fixes: [FixInput]
        var reply: Reply
        var receivedAt: Int64
    }

    /// True while a batch of this trip's fixes is being stored.
    var batchInFlight = false
    /// Requests that arrived while a batch was being stored; they form the next batch.
    var waiting: [Request] = []
    /// Fixes in `waiting`, bounded by `LocalCommandLog.maxWaitingFixesPerTrip`.
    var waitingFixCount = 0

    var isIdle: Bool { !batchInFlight && waiting.isEmpty }
}

/// The fix pipeline of a hub alone: judge on arrival, store, then (once committed) animate
/// and ack. PROTOCOL 7: nothing is acked or shown before it is stored.
extension LocalCommandLog {
    /// Most fixes one trip may have waiting for the store; past it they get `unavailable`.
    static let maxWaitingFixesPerTrip = 10_000

    /// Accepts fixes of one trip. They are judged in arrival order and stored in batches,
    /// one batch per trip at a time (all fixes that arrive while a batch commits form the
    /// next one); once a batch is durable its applied fixes are animated and answered.
    func submitFixes(trip: String, fixes: [FixInput], now: Int64, reply: Reply) {
        var queue = fixQueues.removeValue(forKey: trip) ?? FixQueue()
        defer { fixQueues[trip] = queue }
        if queue.waitingFixCount + fixes.count > Self.maxWaitingFixesPerTrip {
            return services.replies.answerFailure(reply, ProtocolError(.unavailable, "fix: trip \(trip) has too many fixes waiting for the store; try again"))
        }
        queue.waiting.append(FixQueue.Request(fixes: fixes, reply: reply, receivedAt: now))
        queue.waitingFixCount += fixes.count
        if !queue.batchInFlight { queue = takeAndStoreBatch(trip: trip, queue) }
    }

    /// Takes every waiting fix of a trip as one batch, then judges and stores it. When the
    /// trip's memory of stored fixes is full (a trip past 100 000 fixes), the keys it cannot
    /// vouch for are first looked up in the store, off the service thread, so a resend of a
    /// long-forgotten fix is still a `duplicate` (PROTOCOL 7). The batch stays in flight
    /// meanwhile, so the trip's fixes are still judged one batch at a time, in order.
    /// Returns the queue with the batch taken out.
    private func takeAndStoreBatch(trip: String, _ queue: FixQueue) -> FixQueue {
        guard !queue.batchInFlight, !queue.waiting.isEmpty else { return queue }
        let requests = queue.waiting
        var queue = queue
        queue.waiting = []
        queue.waitingFixCount = 0
        queue.batchInFlight = true
        guard let unknown = services.trips[trip]?.trip.fixKeysToCheckInStore(requests.flatMap(\.fixes)),
              !unknown.seqs.isEmpty || !unknown.timestamps.isEmpty else {
            judgeAndStore(trip: trip, requests)
            return queue
        }
        services.metrics.fixStoreLookups += 1
        services.storage.read({ store throws(StoreError) in
            try store.storedFixKeys(tripID: trip, seqs: unknown.seqs, timestamps: unknown.timestamps)
        }) { [self] found in
            switch found {
            case .success(let keys):
                services.trips.mutate(trip) { $0.trip.rememberStoredFixKeys(seqs: keys.seqs, timestamps: keys.timestamps) }
                judgeAndStore(trip: trip, requests)
            case .failure(let error):
                for request in requests {
                    services.replies.answerFailure(request.reply, ProtocolError(.unavailable, "fix: the store could not be asked about earlier fixes: \(error)"))
                }
                batchDone(trip: trip)
            }
        }
        return queue
    }

    /// A trip's batch is stored (or failed): the next one, if fixes are waiting.
    private func batchDone(trip: String) {
        guard var queue = fixQueues.removeValue(forKey: trip) else { return }
        queue.batchInFlight = false
        queue = takeAndStoreBatch(trip: trip, queue)
        if !queue.isIdle { fixQueues[trip] = queue }  // idle trips hold no entry
    }

    /// Judges a batch (in flight already) and stores it.
    private func judgeAndStore(trip: String, _ requests: [FixQueue.Request]) {
        guard let memoryBefore = services.trips[trip]?.trip.judgeMemory else {
            // The trip is gone (purged meanwhile): nothing to judge against.
            for request in requests { services.replies.answerFailure(request.reply, .notFound("trip \(trip) does not exist")) }
            return batchDone(trip: trip)
        }
        var verdicts: [[FixVerdict]] = []
        var records: [StoreRecord] = []
        for request in requests {
            let judged = request.fixes.map { fix in services.trips.mutate(trip) { $0.trip.judge(fix) } ?? .refused(.ended) }
            verdicts.append(judged)
            // PROTOCOL 4/5: a refused fix is "stored (if new)"; a duplicate is not new, so it is
            // not stored again (it would show up twice in the trail). The batch still goes
            // through the store, even when empty, so acks keep the order the fixes arrived in.
            for (fix, verdict) in zip(request.fixes, judged) where verdict.refusal != .duplicate {
                records.append(.fix(tripID: trip, fix: fix, refusal: verdict.refusal, receivedAt: request.receivedAt))
            }
        }
        let judgedBatch = verdicts
        services.storage.persist(records) { [self] result in
            switch result {
            case .failure(let error):
                // Nothing was stored: forget these fixes, so a resend is judged afresh.
                services.trips.mutate(trip) { $0.trip.judgeMemory = memoryBefore }
                for request in requests {
                    services.replies.answerFailure(request.reply, ProtocolError(.unavailable, "fix not stored: \(error)"))
                }
            case .success:
                let commitTime = services.clock.wallMillis()
                // Per fix, not per request: an HTTP batch of N fixes is N acks (PROTOCOL 14).
                for request in requests { services.metrics.fixAck.observe(ms: commitTime - request.receivedAt, count: request.fixes.count) }
                let signalEvents = noteStoredFixes(trip: trip, requests, judgedBatch, now: commitTime)
                guard !signalEvents.isEmpty else {
                    applyAndAnswer(trip: trip, requests, judgedBatch, now: commitTime)
                    return batchDone(trip: trip)
                }
                // PROTOCOL 18: signal_back (and battery_low) go out before any segment or
                // frame of these fixes, so they are applied once those events are sent (or
                // could not be stored: the fixes are durable all the same, and answered).
                services.publisher.storeStateAndSend(signalEvents, trip: trip) { [self] _ in
                    applyAndAnswer(trip: trip, requests, judgedBatch, now: services.clock.wallMillis())
                    batchDone(trip: trip)
                }
                return
            }
            batchDone(trip: trip)
        }
    }

    /// PROTOCOL 18: each stored fix of a committed batch (every one but the duplicates) in
    /// arrival order, as the trip's last fix and battery. Returns the events that causes.
    private func noteStoredFixes(trip: String, _ requests: [FixQueue.Request], _ verdicts: [[FixVerdict]], now: Int64) -> [TripEvent] {
        var events: [TripEvent] = []
        var noted = false
        for (request, judged) in zip(requests, verdicts) {
            for (fix, verdict) in zip(request.fixes, judged) where verdict.refusal != .duplicate {
                events += services.trips.mutate(trip) { $0.trip.noteStoredFix(fix, arrivedAt: request.receivedAt, now: now) } ?? []
                noted = true
            }
        }
        guard noted else { return events }
        services.trips.markStateUnstored(trip)  // refused fixes change last_fix_t and battery too
        services.signals.watch(trip)
        return events
    }

    /// Animates a committed batch's applied fixes from `now` and answers its requests, in order.
    private func applyAndAnswer(trip: String, _ requests: [FixQueue.Request], _ verdicts: [[FixVerdict]], now: Int64) {
        for (request, judged) in zip(requests, verdicts) {
            for (fix, verdict) in zip(request.fixes, judged) where verdict.isApplied {
                if services.publisher.applyCommittedFix(trip: trip, fix: fix, now: now, receivedAt: request.receivedAt) {
                    tripStartedMoving(trip, at: now, byFix: true)
                }
            }
            services.replies.answerFixes(request.reply, trip: trip, fixes: request.fixes, verdicts: judged)
        }
        services.routes.considerAutoReroute(trip: trip, now: now)
    }
}
